package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/report"
	"github.com/migrate-tool/migrate/resolve"
	"github.com/migrate-tool/migrate/undo"
)

// TestViews is the views' conformance suite: whichever the command, its
// JSON view writes one JSON document on stdout, the one docs/cli.md names (its
// first key), and its human view writes text; neither writes on stderr,
// which is the commands' and the hook's.
func TestViews(t *testing.T) {
	sum := &executor.Summary{Plan: "p", Steps: []executor.StepSummary{{Name: "customers", Entity: "CUSTOMERS", Records: 2, Committed: 2}}, Complete: true}
	doc := summaryJSON(sum)
	tests := []struct {
		name    string
		show    func(a *app, asJSON bool) error
		firstJS string // the document's first key
		human   string // a line the human view shows
	}{
		{"validate", func(a *app, j bool) error {
			c := &checked{diags: plan.Diagnostics{{Pos: plan.Pos{File: "p.yaml", Line: 3, Col: 5}, Message: "unknown field"}}}
			return a.validateView(j).Results(c)
		}, `"ok"`, "p.yaml:3:5: unknown field\n1 problem\n"},
		{"plan", func(a *app, j bool) error {
			return a.planView(j).DryRun(dryRunResult{doc: doc, sum: sum, rate: 100})
		}, `"plan"`, "apply would make 0 calls"},
		{"plan's problems", func(a *app, j bool) error {
			if err := a.planView(j).Problems(nil, plan.Diagnostics{{Message: "x"}}); err != nil {
				return err
			}
			if !j {
				a.stdout.Write([]byte("nothing\n")) // a person reads them on stderr
			}
			return nil
		}, `"ok"`, "nothing\n"},
		{"apply", func(a *app, j bool) error {
			return a.applyView(j).Applied(appliedResult{doc: doc, sum: sum, planPath: "p.yaml"})
		}, `"plan"`, "0 calls with 0 sub-requests in under a second."},
		{"apply with batches cut", func(a *app, j bool) error {
			cut := *sum
			cut.Shrank = &executor.BatchShrink{From: 100, To: 50, Slowest: 2 * time.Minute, Of: 100}
			return a.applyView(j).Applied(appliedResult{doc: summaryJSON(&cut), sum: &cut, planPath: "p.yaml"})
		}, `"plan"`, "note: a call of 100 sub-requests took 2m00s, near the server's 3-minute limit: the batches packed after it carry at most 50 (not 100), so apply made more calls than the dry run counted\n"},
		{"apply refused", func(a *app, j bool) error {
			return a.applyView(j).Unresolved(errorsOf([]executor.RecordError{{Step: "orders", Location: "o.csv:2", Field: "CUSTNAME", Value: "C9", Message: "not on the target"}}))
		}, `"plan"`, "    o.csv:2: CUSTNAME: not on the target\n"},
		{"diff", func(a *app, j bool) error {
			return a.diffView(j).Diff(diffJSON{Steps: []diffStepJSON{{Name: "customers", Entity: "CUSTOMERS", Create: 1}}, Records: []diffRecordJSON{}, Errors: []errorJSON{}}, "", "")
		}, `"steps"`, "customers  CUSTOMERS  1"},
		{"status", func(a *app, j bool) error {
			st := &statusResult{path: "p.journal", sum: sum, view: journalStatus{Complete: true, Steps: []stepStatus{}}}
			return a.statusView(j).One(st)
		}, `"complete"`, "complete: every record is committed or skipped\n"},
		{"status of several", func(a *app, j bool) error {
			v := a.statusView(j)
			v.Each(0, &statusResult{path: "p.a.journal", company: "a", sum: sum, view: journalStatus{Steps: []stepStatus{}}})
			v.Each(1, &statusResult{path: "p.b.journal", company: "b", sum: sum, view: journalStatus{Steps: []stepStatus{}}})
			return v.Done()
		}, `"journals"`, "== company b: p.b.journal ==\n"},
		{"undo", func(a *app, j bool) error {
			return a.undoView(j).Undo(&undo.Summary{Target: "https://erp/odata/demo"}, false)
		}, `"target"`, "nothing to undo on https://erp/odata/demo\n"},
		{"verify", func(a *app, j bool) error {
			return a.verifyView(j).Verify(verifyJSON{Target: "https://erp/odata/demo", Steps: []verifyStepJSON{}, Findings: []verifyFindingJSON{}}, "", "")
		}, `"target"`, "0 records differ; 0 calls\n"},
		{"verify-evidence", func(a *app, j bool) error {
			return a.verifyEvidenceView(j).Evidence(verifyEvidenceJSON{Evidence: "ev.zip", Holds: true, Verdict: report.EvidenceVerdict(nil), Problems: []report.EvidenceProblem{}})
		}, `"evidence"`, "the evidence holds\n"},
		{"resolve", func(a *app, j bool) error {
			return a.resolveView(j).InDoubt(nil, "p.journal")
		}, `"records"`, "nothing is in doubt\n"},
		{"resolve's decision", func(a *app, j bool) error {
			return a.resolveView(j).Decision(resolve.Decision{Step: "orders", Record: "o.csv:7", NotCreated: true}, "not created")
		}, `"step"`, "recorded: orders/o.csv:7 not created\n"},
		{"info", func(a *app, j bool) error {
			return a.infoView(j).Info(infoJSON{Target: "https://erp/odata/demo", Allows: []string{}, Lacks: []string{}}, "Basic", odata.Version{Major: 25, Minor: 1, Raw: "25.1", From: "GetVersion"})
		}, `"target"`, "system version  25.1 (reported by GetVersion)\n"},
		{"companies", func(a *app, j bool) error {
			v := a.companiesView(j)
			v.Company("a", 0, []byte(`{"plan": "p"}`))
			return v.Done()
		}, `"companies"`, "== company a (exit 0) ==\n"},
	}
	for _, tt := range tests {
		for _, asJSON := range []bool{false, true} {
			var out, errs bytes.Buffer
			a := &app{stdout: &out, stderr: &errs, getenv: func(string) string { return "" }}
			if err := tt.show(a, asJSON); err != nil {
				t.Fatalf("%s (json %v): %v", tt.name, asJSON, err)
			}
			if errs.Len() > 0 {
				t.Errorf("%s (json %v): the view wrote on stderr: %q", tt.name, asJSON, errs.String())
			}
			text := out.String()
			switch {
			case asJSON && (!json.Valid(out.Bytes()) || !strings.HasSuffix(text, "}\n")):
				t.Errorf("%s: the JSON view wrote no one document: %q", tt.name, text)
			case asJSON && !strings.HasPrefix(strings.TrimLeft(strings.TrimPrefix(text, "{"), " \n"), tt.firstJS):
				t.Errorf("%s: the JSON view's document starts %q, want the key %s", tt.name, text[:min(len(text), 40)], tt.firstJS)
			case !asJSON && !strings.Contains(text, tt.human):
				t.Errorf("%s: the human view wrote %q, want it to hold %q", tt.name, text, tt.human)
			}
		}
	}
}

// TestPrintVerifyTotalsHeader: verify's control totals have a header only
// over totals; a run that committed nothing has none to show.
func TestPrintVerifyTotalsHeader(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		totals []controlTotalJSON
		header bool
	}{
		{nil, false},
		{[]controlTotalJSON{{What: "records", Source: "3", Target: "3"}}, true},
	} {
		var b strings.Builder
		printVerify(&b, verifyJSON{Target: "https://erp/odata/demo", Steps: []verifyStepJSON{{Name: "parts", Entity: "LOGPART", Totals: tt.totals}}})
		if got := strings.Contains(b.String(), "control total"); got != tt.header {
			t.Errorf("totals %v: header %v, want %v:\n%s", tt.totals, got, tt.header, b.String())
		}
	}
}

// TestDiffCaveatIsTheEngines: the diff's text says the engine's caveat as
// the dry run's does, a lower bound included.
func TestDiffCaveatIsTheEngines(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printDiff(&b, diffDoc(&executor.DiffResult{Summary: &executor.Summary{Unchecked: 3, UncheckedMore: true}}))
	if want := "This holds as far as the company has the 3 or more values records name"; !strings.Contains(b.String(), want) {
		t.Errorf("diff says\n%s\nwant %q in it", b.String(), want)
	}
}
