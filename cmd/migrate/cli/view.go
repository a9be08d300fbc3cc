package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
)

// runJSON is docs/cli.md's output of plan --json and apply --json. Field names
// may be added to; those docs/cli.md lists never change.
type runJSON struct {
	Plan         string     `json:"plan"`
	Steps        []stepJSON `json:"steps"`
	Requests     int        `json:"requests"`
	Subrequests  int        `json:"subrequests"`
	Transactions int        `json:"transactions"`
	Complete     *bool      `json:"complete,omitempty"`
	Journal      string     `json:"journal,omitempty"`
	Company      string     `json:"company,omitempty"`
	Trial        int        `json:"trial,omitempty"`
	Unfinished   []string   `json:"unfinished,omitempty"`
	Estimate     *estimate  `json:"estimate,omitempty"`
	Unread       int        `json:"reads_not_made,omitempty"`
	// The dry run's records that apply would load, and would not (row
	// errors, unresolved exists: values).
	WouldLoad    *int `json:"would_load,omitempty"`
	WouldNotLoad *int `json:"would_not_load,omitempty"`
	// Unchecked (dry run): values records name by key that no step
	// creates and nothing checks (Summary.Unchecked).
	Unchecked int `json:"unchecked,omitempty"`
	// InsertsUnread (dry run): Summary.InsertsUnread.
	InsertsUnread int `json:"inserts_unread,omitempty"`
	// ExistsUnread (dry run): Summary.ExistsUnread.
	ExistsUnread int `json:"exists_unread,omitempty"`
	// Refused (dry run): why apply would not start; the counts are then
	// of the load as things stand, were it started.
	Refused string      `json:"refused,omitempty"`
	Errors  []errorJSON `json:"errors"`
	// Warnings are what the run read but loads otherwise than the customer
	// sees it (a formatted workbook number into a text field), what a
	// prediction cannot tell, and what a load warned of as it ran
	// (Summary.Raised).
	Warnings []errorJSON `json:"warnings,omitempty"`
	// Shrank (apply): the batches were cut when a call came near the
	// server's 3-minute limit.
	Shrank    *shrankJSON `json:"batches_shrank,omitempty"`
	Undecided []string    `json:"undecided,omitempty"`
	// Resumes (dry run, diff): the journal apply would resume, what it
	// holds loaded (left out, as apply leaves it) and in doubt (apply
	// reconciles it first: not predicted).
	Resumes *resumesJSON `json:"resumes,omitempty"`
	// Waived are the failed records closed by resolve --waive (apply
	// never sends them), with their reasons.
	Waived []waivedRecordJSON `json:"waived,omitempty"`
	// Gone are the failed records (STEP/ID) whose rows the source no longer
	// gives: resolve --waive closes them.
	Gone []string `json:"gone,omitempty"`
	// Delta (apply over a complete journal whose sources changed, apply
	// --delta): what changed since each record was loaded.
	Delta *deltaJSON `json:"delta,omitempty"`
}

type shrankJSON struct {
	From           int     `json:"from"`
	To             int     `json:"to"`
	SlowestSeconds float64 `json:"slowest_call_seconds"`
	SlowestOf      int     `json:"slowest_call_subrequests"`
}

// shrankText says it in words.
func shrankText(s *shrankJSON) string {
	return fmt.Sprintf("note: a call of %s took %s, near the server's 3-minute limit: the batches packed after it carry at most %d (not %d), so apply made more calls than the dry run counted",
		diag.Count(s.SlowestOf, "sub-request", "sub-requests"), fmtDuration(time.Duration(s.SlowestSeconds*float64(time.Second))), s.To, s.From)
}

type resumesJSON struct {
	Journal string `json:"journal"`
	Loaded  int    `json:"loaded"`
	InDoubt int    `json:"in_doubt"`
	// Refused: why apply would refuse to resume it (the plan or a source
	// changed); the prediction is then of a new journal.
	Refused string `json:"refused,omitempty"`
	text    string // Summary.Resumes
}

func summaryJSON(s *executor.Summary) runJSON {
	r := runJSON{Plan: s.Plan, Requests: s.Requests, Subrequests: s.Subrequests, Transactions: s.Transactions, Errors: []errorJSON{}, Undecided: s.Undecided}
	for _, st := range s.Steps {
		r.Steps = append(r.Steps, stepJSON{Name: st.Name, Entity: st.Entity, Records: st.Records, Children: st.Children,
			Skipped: st.Skipped, Errors: st.Errors, Unresolved: st.Unresolved, Conflicts: st.Conflicts, Committed: st.Committed, Failed: st.Failed, Pending: st.Pending, InDoubt: st.InDoubt,
			Partly: st.Partly, Waived: st.Waived, Changed: st.Changed})
	}
	for _, g := range s.Gone {
		r.Gone = append(r.Gone, g.String())
	}
	if len(s.Waived) > 0 {
		r.Waived = waivedRecordsJSON(s.Waived)
	}
	if r.Steps == nil {
		r.Steps = []stepJSON{}
	}
	r.Errors = append(r.Errors, errorsOf(s.Errors)...)
	r.Warnings = warningsOf(append(append([]diag.Diagnostic{}, s.Warnings...), s.Raised...))
	if b := s.Shrank; b != nil {
		r.Shrank = &shrankJSON{From: b.From, To: b.To, SlowestSeconds: b.Slowest.Seconds(), SlowestOf: b.Of}
	}
	r.Resumes = resumesOf(s)
	r.Delta = deltaOf(s.Delta)
	r.Refused, r.Unchecked, r.InsertsUnread, r.ExistsUnread = s.Refused, s.Unchecked, s.InsertsUnread, s.ExistsUnread
	return r
}

// resumesOf is what the dry run of s says of the journal it was given.
func resumesOf(s *executor.Summary) *resumesJSON {
	if s == nil || s.Journal == "" {
		return nil
	}
	return &resumesJSON{Journal: s.Journal, Loaded: s.Loaded, InDoubt: s.InDoubt, Refused: s.Stale, text: s.Resumes()}
}

// resumesText says it in words, as the pages do (Summary.Resumes), ""
// when there is no such journal.
func resumesText(r *resumesJSON) string {
	if r == nil {
		return ""
	}
	return r.text
}

type stepJSON struct {
	Name     string `json:"name"`
	Entity   string `json:"entity"`
	Records  int    `json:"records"`
	Children int    `json:"children"`
	Skipped  int    `json:"skipped"`
	Errors   int    `json:"errors"`
	// Unresolved (dry run): records that give an exists: value on neither
	// the target nor an earlier step.
	Unresolved int `json:"unresolved,omitempty"`
	// Conflicts (dry run of a delta): records apply --delta would leave
	// unsent for a conflict.
	Conflicts int `json:"conflicts,omitempty"`
	Committed int `json:"committed"`
	Failed    int `json:"failed"`
	Pending   int `json:"pending"`
	InDoubt   int `json:"in_doubt"`
	Partly    int `json:"partly_loaded,omitempty"`
	Waived    int `json:"waived,omitempty"`
	// Changed (apply) is the committed records whose source rows changed
	// since they were loaded: not sent again.
	Changed int `json:"changed_since_loaded,omitempty"`
}

type estimate struct {
	CallsPerMinute int     `json:"calls_per_minute"`
	Seconds        float64 `json:"seconds"`
}

// newTable is the one writer of the views' text tables (run, diff, verify,
// info, metadata, profile): cells split by tabs, each column as wide as
// its widest cell, two spaces apart; Flush writes the table.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// printSteps writes the summary table, one line per step; a column of
// waived records when some are (resolve --waive).
func printSteps(w io.Writer, r runJSON, applied bool) {
	tw := newTable(w)
	waived := len(r.Waived) > 0
	switch {
	case applied && waived:
		fmt.Fprintln(tw, "step\tentity\trecords\tlines\tskipped\trow errors\tcommitted\tfailed\tpending\tin doubt\twaived")
	case applied:
		fmt.Fprintln(tw, "step\tentity\trecords\tlines\tskipped\trow errors\tcommitted\tfailed\tpending\tin doubt")
	default:
		fmt.Fprintln(tw, "step\tentity\trecords\tlines\tskipped\trow errors")
	}
	for _, s := range r.Steps {
		if applied {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d", s.Name, s.Entity, s.Records, s.Children, s.Skipped, s.Errors, s.Committed, s.Failed, s.Pending, s.InDoubt)
			if waived {
				fmt.Fprintf(tw, "\t%d", s.Waived)
			}
			fmt.Fprintln(tw)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\n", s.Name, s.Entity, s.Records, s.Children, s.Skipped, s.Errors)
		}
	}
	tw.Flush()
}

// printWarnings writes the run's warnings, each as its line.
func printWarnings(w io.Writer, ws []errorJSON) {
	for _, x := range ws {
		fmt.Fprintln(w, x.d.String())
	}
}

// shownPerCause is how many errors of one cause the human view lists.
const shownPerCause = 3

// printErrors groups errors by step and cause, shows the first few of each
// and counts the rest, so 5,000 identical errors read as one problem.
func printErrors(w io.Writer, errs []errorJSON) {
	type group struct {
		step, cause string
		items       []errorJSON
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, e := range errs {
		cause := executor.Cause(e.Message, e.Value)
		if e.Field != "" {
			cause = e.Field + ": " + cause
		}
		k := e.Step + "\x00" + cause
		g := byKey[k]
		if g == nil {
			g = &group{step: e.Step, cause: cause}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.items = append(g.items, e)
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].step < groups[j].step })
	step := ""
	for _, g := range groups {
		if g.step != step {
			step = g.step
			fmt.Fprintf(w, "\n%s:\n", step)
		}
		fmt.Fprintf(w, "  %s (%s)\n", g.cause, diag.Count(len(g.items), "row", "rows"))
		for i, e := range g.items {
			if i == shownPerCause {
				fmt.Fprintf(w, "    … and %d more\n", len(g.items)-shownPerCause)
				break
			}
			fmt.Fprintln(w, "    "+e.d.String())
		}
	}
}

// printPartly lists the records whose entity exists although some of its
// lines failed, saying what exists: apply --retry-failed sends only what
// is missing.
func printPartly(w io.Writer, errs []executor.RecordError) {
	seen := map[string]bool{}
	var lines []string
	for _, e := range errs {
		k := e.Step + "\x00" + e.Record
		if e.Partly == "" || seen[k] {
			continue
		}
		seen[k] = true
		lines = append(lines, fmt.Sprintf("  %s %s: %s; %s failed: %s", e.Step, e.Record, e.Partly, e.Location, e.Message))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\npartly loaded (%s): what exists stays; correct the rows and apply --retry-failed sends only what is missing\n", diag.Count(len(lines), "record", "records"))
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// printChanged says, per step, how many committed records' source rows
// changed since they were loaded, and that they were not sent.
func printChanged(w io.Writer, steps []stepJSON) {
	for _, s := range steps {
		if s.Changed > 0 {
			fmt.Fprintf(w, "%s: the source rows of %s committed before changed since; not sent again (apply does not update what it loaded)\n",
				s.Name, diag.Count(s.Changed, "record", "records"))
		}
	}
}

// printGone names the failed records whose rows the source no longer
// gives, and the command that closes them.
func printGone(w io.Writer, gone []string, journalPath string) bool {
	if len(gone) == 0 {
		return false
	}
	shown := gone
	if len(shown) > 5 {
		shown = shown[:5]
	}
	more := ""
	if len(gone) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(gone)-len(shown))
	}
	them := "them"
	if len(gone) == 1 {
		them = "it"
	}
	fmt.Fprintf(w, "no longer in the source, so never to load: %s%s; close %s with `migrate resolve %s --waive %s --reason TEXT`\n",
		strings.Join(shown, ", "), more, them, journalPath, strings.Join(gone, " --waive "))
	return true
}

// printWaived lists the failed records closed by resolve --waive, each
// with its reason.
func printWaived(w io.Writer, recs []waivedRecordJSON) {
	if len(recs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nwaived (%s): closed by resolve --waive, never sent\n", diag.Count(len(recs), "record", "records"))
	for _, r := range recs {
		where := ""
		if r.Location != "" && r.Location != r.Record {
			where = " at " + r.Location
		}
		fmt.Fprintf(w, "  %s/%s%s: %s\n", r.Step, r.Record, where, r.Reason)
	}
}

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return "under a second"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()+0.5))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// estimateText is the dry run's "about 3m20s", or "under a second".
func estimateText(d time.Duration) string {
	if d < time.Second {
		return "under a second"
	}
	return "about " + fmtDuration(d)
}
