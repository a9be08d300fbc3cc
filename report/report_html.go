package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/verify"
)

// The run report: one HTML file with its CSS and chart inline, nothing
// fetched from anywhere, that a consultant hands the customer. The page is
// built from a RunReport, which comes from a journal (RunReportOf) or from
// a dry run's Summary (DryRunReport): the same template for both.

// The pages are one template set: report.html.tmpl defines the blocks
// ("style", "meta", "failures") that the diff's page (diff.html.tmpl)
// uses too, so the pages look alike and the styles are written once.
var (
	//go:embed report.html.tmpl
	reportTemplate string
	//go:embed diff.html.tmpl
	diffTemplate string

	// pages is the set, parsed on first use rather than at every start of
	// the binary (most commands draw no page): "report" is its root,
	// "diff" the diff's page.
	pages = sync.OnceValue(func() *template.Template {
		t := template.Must(template.New("report").Funcs(template.FuncMap{
			"when":     whenText,
			"duration": durationText,
			"add":      func(a, b int) int { return a + b },
			"count":    diag.Count,
			"sentence": sentence,
		}).Parse(reportTemplate))
		template.Must(t.New("diff").Parse(diffTemplate))
		return t
	})
)

// ReportInfo says what a report is about: the page's heading.
type ReportInfo struct {
	Plan, PlanPath string
	// Target is the service root; the page shows it without its scheme
	// (the page holds no URL) and the company it ends in.
	Target        string
	SystemVersion string
	User          string
	ToolVersion   string
	Journal       string
	// Start and End of the run; zero when unknown.
	Start, End time.Time
}

// RunReport is what the HTML report shows.
type RunReport struct {
	ReportInfo
	DryRun   bool
	Complete bool
	// Stopped: the last apply stopped before it ran every step.
	Stopped bool
	Steps   []executor.StepSummary
	Total   executor.StepSummary
	// Requests are HTTP calls ($batch posts, with their retries),
	// Subrequests the operations in them, Transactions the API
	// transactions as the service meters them: every entity and line
	// written counts one.
	Requests, Subrequests, Transactions int
	// TransactionsSent (a run) are the API transactions the calls carried,
	// written or refused: what apply counted.
	TransactionsSent int
	// Standard: a standard OData service (Summary.Standard), which meters
	// no API transactions: the page says nothing of them.
	Standard  bool
	Throttled int           // calls answered 429
	Waited    time.Duration // spent waiting to retry
	// Estimated and CallsPerMinute: the dry run's estimate of apply.
	Estimated      time.Duration
	CallsPerMinute int
	Chart          *Chart // nil: no timing in the journal
	Failures       []FailureGroup
	FailedRecords  int
	Undecided      []string
	// Next (a run that is not complete) is what to do now, as status says
	// it (Summary.Next), made a sentence.
	Next string
	// Prediction (dry run): what the page says beside its counts.
	Prediction
	Waived []executor.WaivedRecord // closed by resolve --waive, with their reasons
	// Unsent (a run) are the changes the last delta load did not send for
	// a conflict (Summary.Unsent).
	Unsent []UnsentRow
	// UnsentText is the sentence that says them (Summary.UnsentText).
	UnsentText string
	Undo       *UndoHistory
	// Totals are the plan's totals: as verify found them at Verified, the
	// last it recorded in the journal (none: the page shows no totals).
	Totals   []journal.TotalRow
	Verified time.Time
	// TotalsNotes are what the totals say beside their rows
	// (verify.TotalsNotes): a trial's source side, the steps not run yet.
	TotalsNotes []string
	// Runs are the journal's applies in order, each with its times: what
	// the freeze window of a cut-over (a delta load) is planned by.
	Runs []RunRow
}

// TotalsDiffer counts the page's totals whose sides are not the same.
func (r *RunReport) TotalsDiffer() int {
	n := 0
	for _, t := range r.Totals {
		if t.Differs() {
			n++
		}
	}
	return n
}

// UnsentRow is a change a delta load did not send, as the page shows it:
// its values as the JSON sent.
type UnsentRow struct {
	Step, Record, Entity, Key, What string
	Ours, Theirs, Now               string
}

func unsentRows(us []executor.UnsentChange) []UnsentRow {
	var out []UnsentRow
	for _, u := range us {
		out = append(out, UnsentRow{Step: u.Step, Record: u.ID, Entity: u.Entity, Key: u.Key, What: u.What(),
			Ours: string(u.Ours), Theirs: string(u.Theirs), Now: string(u.Now)})
	}
	return out
}

// RunRow is one apply of the journal on the run report.
type RunRow struct {
	N          int
	What       string // "load", "delta", "trial of 10 per step", "steps a, b"
	Start, End time.Time
}

// Took is how long the run took; 0 when its times are not recorded.
func (r RunRow) Took() time.Duration {
	if r.Start.IsZero() || r.End.IsZero() {
		return 0
	}
	return r.End.Sub(r.Start)
}

// runRows are the report's rows of st's runs.
func runRows(st *journal.State) []RunRow {
	var out []RunRow
	for i, rt := range st.RunTimes {
		what := "load"
		switch {
		case rt.Delta:
			what = "delta (apply --delta)"
		case rt.Limit > 0:
			what = fmt.Sprintf("trial of %d per step", rt.Limit)
		case len(rt.Steps) > 0:
			what = "steps " + strings.Join(rt.Steps, ", ")
		}
		out = append(out, RunRow{N: i + 1, What: what, Start: rt.Start, End: rt.End})
	}
	return out
}

// FailureCells is how many source cells of a failure group the page lists.
const FailureCells = 50

// FailureGroup is one message and where it happened.
type FailureGroup struct {
	Message string
	Steps   []string
	Count   int
	Cells   []FailureCell // the first FailureCells
	More    int           // how many more there are
}

// FailureTable is the failures block of a page: the groups, and the
// command that lists what a group leaves out.
type FailureTable struct {
	Groups         []FailureGroup
	Command, Lists string
}

// FailureTable is the page's failures, and where the rest of a group are.
func (r *RunReport) FailureTable() FailureTable {
	if r.DryRun {
		return FailureTable{r.Failures, "migrate plan " + r.PlanPath, "lists every problem"}
	}
	return FailureTable{r.Failures, "migrate report " + r.Journal + " --out failed.xlsx", "lists every failed row with its cells and message"}
}

// FailureCell is one place a message was given for.
type FailureCell struct {
	Location, Field, Value string
}

// UndoHistory is what undo did to the run.
type UndoHistory struct {
	Start, End time.Time
	Calls      int
	Steps      []UndoStep
}

// UndoStep counts one step's undo.
type UndoStep struct {
	Name            string
	Undone, Failed  int // records undone; records whose undo failed
	InDoubt, Listed int // undo sub-requests without an outcome; undo sub-requests sent
}

// Company is the company the target's URL ends in
// (…/tabula.ini/COMPANY), or "".
func (i ReportInfo) Company() string {
	u, err := url.Parse(i.Target)
	if err != nil || !strings.Contains(u.Path, ".ini/") {
		return ""
	}
	return strings.Trim(u.Path[strings.LastIndex(u.Path, "/")+1:], " ")
}

// Host is the target without its scheme: the page holds no URL, so that
// nothing in it could be fetched or followed.
func (i ReportInfo) Host() string {
	u, err := url.Parse(i.Target)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Host + u.Path
}

// RunReportOf builds the report of a journal.
func RunReportOf(journalPath string) (*RunReport, error) {
	st, err := journal.LoadReport(journalPath)
	if err != nil {
		return nil, err
	}
	h := st.Header
	rep := &RunReport{ReportInfo: ReportInfo{Plan: h.Plan, PlanPath: h.PlanPath, Target: h.Target,
		SystemVersion: h.SystemVersion, User: h.User, ToolVersion: h.ToolVersion, Journal: journalPath, Start: h.Created}}
	sum := executor.StatusOf(st)
	rep.Complete, rep.Stopped, rep.Steps, rep.Undecided, rep.Waived = sum.Complete, sum.Interrupted, sum.Steps, sum.Undecided, sum.Waived
	rep.Standard = sum.Standard
	rep.Unsent, rep.UnsentText = unsentRows(sum.Unsent), sum.UnsentText()
	rep.Total = sum.Total()
	if next := sum.Next(); !sum.Complete {
		rep.Next = sentence(next) + "."
	}
	for _, s := range sum.Steps {
		rep.FailedRecords += s.Failed
	}
	rep.Failures = groupFailures(sum.Errors)
	rep.Runs = runRows(st)
	for _, w := range st.Warnings { // as a dry run's page says its own
		rep.Warnings = append(rep.Warnings, diag.New(diag.Warning, diag.Range{}, w).String())
	}
	var runCalls, undoCalls []journal.BatchCall
	for _, b := range st.Batches {
		if b.Undo {
			undoCalls = append(undoCalls, b)
			continue
		}
		runCalls = append(runCalls, b)
		if b.Answered.After(rep.End) {
			rep.End = b.Answered
		}
		if b.Made() == 0 {
			continue
		}
		rep.Requests += b.Made()
		if !b.Unsent { // its calls were made, its sub-requests never sent
			rep.Subrequests += b.Subs
			rep.TransactionsSent += b.Metered
		}
		rep.Transactions += b.Written
		rep.Throttled += b.Throttled
		rep.Waited += b.Waited
	}
	rep.Chart = callChart(runCalls) // the run's: undo's are counted under Undo
	rep.Undo = undoHistory(st, undoCalls)
	rep.Verified = st.TotalsAt
	if st.Totals != nil {
		rep.Totals, rep.TotalsNotes = st.Totals.Rows, verify.TotalsNotes(*st.Totals)
	}
	return rep, nil
}

// DryRunReport is the page of a dry run: what apply would load, and the
// problems found.
func DryRunReport(sum *executor.Summary, info ReportInfo, callsPerMinute int) *RunReport {
	rep := &RunReport{ReportInfo: info, DryRun: true, Steps: sum.Steps, Total: sum.Total(),
		Requests: sum.Requests, Subrequests: sum.Subrequests, Transactions: sum.Transactions,
		Estimated: sum.Estimated, CallsPerMinute: callsPerMinute, Failures: groupFailures(sum.Errors), Standard: sum.Standard}
	if rep.Plan == "" {
		rep.Plan = sum.Plan
	}
	rep.Complete = len(sum.Errors) == 0
	rep.Prediction = predictionOf(sum)
	return rep
}

// Prediction is what the page of a dry run or a diff says of the load
// beside its counts, as the engine's summary says it: why apply would not
// start (Summary.Refused), what the counts hold only as far as
// (Summary.Caveat), the journal apply would resume (Summary.Resumes), and
// what the run would load otherwise than the customer sees it or cannot
// judge (Summary.Warnings), each a line; of a delta, what it would send
// (Delta.Headline), the conflicts it would leave unsent and the command
// that would leave them (Delta.Command).
type Prediction struct {
	// Load is the dry run's count of what apply would load, with its
	// caveat (Summary.LoadText): the page's verdict, as the text says it.
	Load                     string
	Refused, Caveat, Resumes string
	Warnings                 []string
	Delta, DeltaCommand      string
	DeltaConflicts           int
}

// sentence is s begun with a capital, as a line of the page starts.
func sentence(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func predictionOf(sum *executor.Summary) Prediction {
	p := Prediction{Load: sum.LoadText(), Refused: sum.Refused, Caveat: sum.Caveat(), Resumes: sum.Resumes()}
	if d := sum.Delta; d != nil {
		p.Delta, p.DeltaCommand = d.Headline(), d.Command()
		_, _, _, p.DeltaConflicts, _ = d.Counts()
	}
	for _, w := range sum.Warnings {
		p.Warnings = append(p.Warnings, w.String())
	}
	return p
}

// groupFailures groups problems by message, most frequent first; each
// keeps its first FailureCells places.
func groupFailures(errs []executor.RecordError) []FailureGroup {
	byMsg := map[string]*FailureGroup{}
	var order []*FailureGroup
	for _, e := range errs {
		cause := executor.Cause(e.Message, e.Value) // as the text groups them
		g := byMsg[cause]
		if g == nil {
			g = &FailureGroup{Message: cause}
			byMsg[cause] = g
			order = append(order, g)
		}
		g.Count++
		if len(g.Steps) == 0 || g.Steps[len(g.Steps)-1] != e.Step {
			if !slices.Contains(g.Steps, e.Step) {
				g.Steps = append(g.Steps, e.Step)
			}
		}
		if len(g.Cells) < FailureCells {
			g.Cells = append(g.Cells, FailureCell{Location: e.Location, Field: e.Field, Value: e.Value})
		} else {
			g.More++
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].Count > order[j].Count })
	out := make([]FailureGroup, len(order))
	for i, g := range order {
		out[i] = *g
	}
	return out
}

func undoHistory(st *journal.State, calls []journal.BatchCall) *UndoHistory {
	var u UndoHistory
	for _, name := range st.StepNames {
		ss := st.Steps[name]
		us := UndoStep{Name: name}
		for _, id := range ss.IDs {
			rec := ss.Records[id]
			// Undone however it stands now: a later apply may have loaded
			// it again, which does not take back what undo did.
			if rec.Undone || st.Undone[name][id] {
				us.Undone++
				continue
			}
			failed := false
			for _, s := range rec.Undo {
				us.Listed++
				switch {
				case s.InDoubt():
					us.InDoubt++
				case !s.OK() && !(s.Status == 404 && s.Op == journal.OpUndoDelete):
					failed = true
				}
			}
			if failed {
				us.Failed++
			}
		}
		if us.Undone+us.Failed+us.InDoubt > 0 {
			u.Steps = append(u.Steps, us)
		}
	}
	for _, b := range calls {
		u.Calls += b.Made()
		if !b.Sent.IsZero() && (u.Start.IsZero() || b.Sent.Before(u.Start)) {
			u.Start = b.Sent
		}
		if b.Answered.After(u.End) {
			u.End = b.Answered
		}
	}
	if len(u.Steps) == 0 && len(calls) == 0 {
		return nil
	}
	return &u
}

// WriteHTML renders the page to w.
func WriteHTML(w io.Writer, rep *RunReport) error {
	return pages().Execute(w, rep)
}

// WriteHTMLFile writes the page to path through a temporary file, so that
// a half-written report never replaces a whole one.
func WriteHTMLFile(path string, rep *RunReport) error {
	return writePageFile(path, func(w io.Writer) error { return WriteHTML(w, rep) })
}

func writePageFile(path string, write func(io.Writer) error) error {
	// The page holds the customer's rows: the journal's mode.
	return atomicfile.Write(path, 0o600, write)
}

func whenText(t time.Time) string {
	if t.IsZero() {
		return "not recorded"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func durationText(d time.Duration) string {
	switch {
	case d <= 0:
		return "none"
	case d < time.Second:
		return "under a second"
	}
	return d.Round(time.Second).String()
}

// PageStyle is the pages' style sheet, the <style> element of the run
// report, for another page to look like it (migrate profile's).
func PageStyle() template.HTML {
	var b strings.Builder
	if err := pages().ExecuteTemplate(&b, "style", nil); err != nil {
		panic(err) // the block takes no data: it cannot fail
	}
	return template.HTML(b.String())
}
