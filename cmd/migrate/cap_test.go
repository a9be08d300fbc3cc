package main

import (
	"context"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/migrate-tool/migrate/odata/captest"
)

var (
	capMu      sync.Mutex
	capServers = map[*testscript.TestScript]map[string]*captest.Server{}
)

// capCondition is [cap]: the CAP test service can run here, or must (CI),
// so a script that needs it skips only where it is not installed and not
// required (docs/other-services.md, The CAP test service).
func capCondition() bool { return captest.Installed() == nil || captest.Required() }

// cmdCap: `cap start [as=NAME]` runs a CAP test service (odata/captest)
// until the script ends and points MIGRATE_TARGET at it (with as=NAME, the
// connection's MIGRATE_NAME_TARGET), with a user and password it takes;
// `cap dump [@NAME] SET [EXPAND]` prints what it holds of SET, with EXPAND
// as $expand, the values it makes up (Guids, times) steadied.
func cmdCap(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: cap start [as=NAME] | cap dump [@NAME] SET [EXPAND]")
	}
	switch args[0] {
	case "start":
		name := ""
		for _, a := range args[1:] {
			v, ok := strings.CutPrefix(a, "as=")
			if !ok {
				ts.Fatalf("cap start: unknown option %q", a)
			}
			name = v
		}
		s, err := captest.Start(context.Background())
		if err != nil {
			ts.Fatalf("cap start: %v", err)
		}
		ts.Defer(s.Close)
		capMu.Lock()
		if capServers[ts] == nil {
			capServers[ts] = map[string]*captest.Server{}
			ts.Defer(func() {
				capMu.Lock()
				delete(capServers, ts)
				capMu.Unlock()
			})
		}
		capServers[ts][name] = s
		capMu.Unlock()
		env := "MIGRATE_"
		if name != "" {
			env += strings.ToUpper(name) + "_"
		}
		ts.Setenv(env+"TARGET", s.Root)
		ts.Setenv(env+"USER", "alice")
		ts.Setenv(env+"PASSWORD", "alice")
	case "dump":
		args = args[1:]
		name := ""
		if len(args) > 0 && strings.HasPrefix(args[0], "@") {
			name, args = args[0][1:], args[1:]
		}
		if len(args) < 1 || len(args) > 2 {
			ts.Fatalf("usage: cap dump [@NAME] SET [EXPAND]")
		}
		capMu.Lock()
		s := capServers[ts][name]
		capMu.Unlock()
		if s == nil {
			ts.Fatalf("cap dump: no CAP service %q started", name)
		}
		expand := ""
		if len(args) == 2 {
			expand = args[1]
		}
		out, err := captest.Dump(context.Background(), s.Root, args[0], expand)
		ts.Check(err)
		_, _ = ts.Stdout().Write(out)
	default:
		ts.Fatalf("cap %s: want start or dump", args[0])
	}
}
