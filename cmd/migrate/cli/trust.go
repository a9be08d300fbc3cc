package cli

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/migrate-tool/migrate/odata/auth"
	"github.com/migrate-tool/migrate/plan"
)

// Which hosts receive the environment's credentials.
// A plan, or a journal, from someone else names an address; run in a
// shell where MIGRATE_TOKEN is set, it used to receive that token. Now
// credentials go only to a host the user approved: the one of --target,
// MIGRATE_TARGET or MIGRATE_<NAME>_TARGET (the user typed it), one of the
// login cache (the user logged in there), or one approved once, on a
// terminal or with --trust-host, and remembered beside the login cache.
// Anywhere else nothing is sent and the command says which host to
// approve: exit 2.

// trustFlag is --trust-host, repeatable.
type trustFlag struct{ hosts *[]string }

func (t trustFlag) String() string {
	if t.hosts == nil {
		return ""
	}
	return strings.Join(*t.hosts, ",")
}

func (t trustFlag) Set(s string) error {
	for h := range strings.SplitSeq(s, ",") {
		if auth.NormalizeHost(h) == "" {
			return fmt.Errorf("%q is no host name: give a host such as erp.example.com or erp.example.com:8443", h)
		}
		*t.hosts = append(*t.hosts, h)
	}
	return nil
}

func registerTrust(fs *flag.FlagSet, hosts *[]string) {
	fs.Var(trustFlag{hosts}, "trust-host", "approve a `HOST` (or HOST:PORT) that the plan or journal names to receive this environment's credentials; remembered")
}

// targetFlag is --target: it also records that the user gave it, since
// undo, verify and resolve put the journal's address in the same field.
type targetFlag struct{ c *connFlags }

func (t targetFlag) String() string {
	if t.c == nil {
		return ""
	}
	return t.c.target
}

func (t targetFlag) Set(s string) error {
	t.c.target, t.c.targetGiven = s, s != ""
	return nil
}

// targetOrigin says where the target's address came from when the user
// did not type it: "" for --target or MIGRATE_TARGET, else what named it.
func (a *app) targetOrigin(f connFlags, p *plan.Plan) string {
	switch {
	case f.targetGiven, a.getenv("MIGRATE_TARGET") != "":
		return ""
	case f.target != "":
		return "the journal's target"
	case p != nil && p.Path != "":
		return "target.url of " + p.Path
	}
	return "the plan's target.url"
}

// approval is what approveHost decides a service's host by.
type approval struct {
	// from is what named the address when the user did not ("" when the
	// user did: approved), instead how the user gives it by hand.
	from, instead string
	// named is the target's address as the user typed it (--target or
	// MIGRATE_TARGET, "" when neither): its host is approved for every
	// service of the command.
	named string
	trust []string // --trust-host
}

// userTarget is the target's address as the user typed it, if they did.
func (a *app) userTarget(f connFlags) string {
	if f.targetGiven {
		return f.target
	}
	return a.getenv("MIGRATE_TARGET")
}

// approveHost lets credentials go to the host of url when the user
// approved it. Hosts of --trust-host that are used are remembered, as is
// a yes on the terminal.
func (a *app) approveHost(url string, ap approval) error {
	if ap.from == "" {
		return nil
	}
	host := auth.Host(url)
	var flagged []string
	for _, h := range ap.trust {
		flagged = append(flagged, auth.NormalizeHost(h))
	}
	if auth.HostApproved(flagged, url) {
		a.rememberHost(host)
		return nil
	}
	if named := auth.Host(ap.named); named != "" && auth.HostApproved([]string{named}, url) {
		return nil
	}
	// Approvals that cannot be read (no configuration folder, a file
	// the user cannot read) approve nothing: the safe side.
	if known, err := auth.TrustedHosts(""); err == nil && auth.HostApproved(known, url) {
		return nil
	}
	question := fmt.Sprintf("%s names %s, a host you have not approved: send this environment's credentials there, now and from now on? [y/N] ", ap.from, host)
	if answer, asked := a.askTerminal(question); asked {
		if answer {
			a.rememberHost(host)
			return nil
		}
		return usageErr("%s names %s, which you did not approve: nothing was sent to it", ap.from, host)
	}
	return usageErr("%s names %s, a host you have not approved to receive credentials: nothing was sent to it; approve it with --trust-host %s (remembered), or %s",
		ap.from, host, host, ap.instead)
}

// rememberHost keeps an approval for the next commands; one that cannot
// be written holds for this command, with a warning.
func (a *app) rememberHost(host string) {
	if err := auth.TrustHost("", host); err != nil {
		fmt.Fprintf(a.stderr, "warning: %s is approved for this command only: %v\n", host, err)
	}
}

// askTerminal asks a yes/no question when stdin is a terminal (a.ask in
// tests). asked is false when there is no one to ask.
func (a *app) askTerminal(question string) (yes, asked bool) {
	ask := a.ask
	if ask == nil {
		f, ok := a.stdin.(*os.File)
		if !ok || !term.IsTerminal(int(f.Fd())) {
			return false, false
		}
		ask = func(q string) (string, bool) {
			fmt.Fprint(a.stderr, q)
			line, _ := bufio.NewReader(a.stdin).ReadString('\n') // end of input: no
			return line, true
		}
	}
	line, ok := ask(question)
	if !ok {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, true
	}
	return false, true
}

// connectionOrigin is approveHost's from for connection c: "" when its
// address is MIGRATE_<NAME>_TARGET.
func (a *app) connectionOrigin(c *plan.Connection, p *plan.Plan) string {
	if connEnv(a.getenv, c.Name)("MIGRATE_TARGET") != "" {
		return ""
	}
	if p != nil && p.Path != "" {
		return fmt.Sprintf("connection %s's url in %s", c.Name, p.Path)
	}
	return "connection " + c.Name + "'s url"
}
