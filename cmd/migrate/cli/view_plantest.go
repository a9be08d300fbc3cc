package cli

import (
	"fmt"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/plan"
)

// testView shows the outcome of a plan's tests.
type testView interface {
	// Problems: the plan or its tests cannot be run (exit 2).
	Problems(p *plan.Plan, ds plan.Diagnostics) error
	Results(rs []executor.TestResult) error
}

func (a *app) testView(asJSON bool) testView {
	if asJSON {
		return testJSONView{jsonView{a}}
	}
	return testHuman{a.human()}
}

type testHuman struct{ humanView }

// Results: PASS or FAIL per test, and under a failing one each way it
// failed, at the test's line, with the plan's line that writes the field.
func (v testHuman) Results(rs []executor.TestResult) error {
	w := v.a.stdout
	for _, r := range rs {
		if r.Passed() {
			fmt.Fprintf(w, "PASS  %s (step %s)\n", r.Test.Name, r.Test.Step)
			continue
		}
		fmt.Fprintf(w, "FAIL  %s (step %s)\n", r.Test.Name, r.Test.Step)
		for _, f := range r.Failures {
			fmt.Fprintf(w, "      %s\n", failureText(f))
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "      note: %s\n", n)
		}
	}
	passed, failed := executor.TestTally(rs)
	fmt.Fprintf(w, "%s: %d passed, %d failed\n", diag.Count(len(rs), "test", "tests"), passed, failed)
	return nil
}

// failureText is one failure in a line: where the test expects it, what,
// and where the plan writes the field.
func failureText(f executor.TestFailure) string {
	var b strings.Builder
	b.WriteString(f.At.String() + ": ")
	if f.Where != "" {
		b.WriteString(f.Where + ": ")
	}
	if f.Field != "" {
		fmt.Fprintf(&b, "%s: expected %s, got %s", f.Field, f.Expected, f.Got)
	} else {
		b.WriteString(f.Message)
	}
	if f.Plan != "" {
		fmt.Fprintf(&b, " (%s writes it)", f.Plan)
	}
	return b.String()
}

type testJSONView struct{ jsonView }

// testJSON is migrate test --json's document (docs/cli.md).
type testJSON struct {
	OK       bool           `json:"ok"`
	Passed   int            `json:"passed"`
	Failed   int            `json:"failed"`
	Tests    []testCaseJSON `json:"tests"`
	Problems []problemJSON  `json:"problems"`
}

type testCaseJSON struct {
	Name     string            `json:"name"`
	Step     string            `json:"step"`
	At       string            `json:"at"`
	Passed   bool              `json:"passed"`
	Failures []testFailureJSON `json:"failures"`
	Notes    []string          `json:"notes"`
}

type testFailureJSON struct {
	At       string `json:"at"`
	Where    string `json:"where,omitempty"`
	Field    string `json:"field,omitempty"`
	Expected string `json:"expected,omitempty"`
	Got      string `json:"got,omitempty"`
	Plan     string `json:"plan,omitempty"`
	Message  string `json:"message,omitempty"`
}

func (v testJSONView) Problems(p *plan.Plan, ds plan.Diagnostics) error {
	return writeJSON(v.a.stdout, testJSON{Tests: []testCaseJSON{}, Problems: problemsJSON(p, ds)})
}

func (v testJSONView) Results(rs []executor.TestResult) error {
	doc := testJSON{Tests: []testCaseJSON{}, Problems: []problemJSON{}}
	for _, r := range rs {
		c := testCaseJSON{Name: r.Test.Name, Step: r.Test.Step, At: r.Test.Pos.String(), Passed: r.Passed(),
			Failures: []testFailureJSON{}, Notes: append([]string{}, r.Notes...)}
		for _, f := range r.Failures {
			c.Failures = append(c.Failures, testFailureJSON{At: f.At.String(), Where: f.Where, Field: f.Field,
				Expected: f.Expected, Got: f.Got, Plan: f.Plan, Message: f.Message})
		}
		doc.Tests = append(doc.Tests, c)
	}
	doc.Passed, doc.Failed = executor.TestTally(rs)
	doc.OK = doc.Failed == 0
	return writeJSON(v.a.stdout, doc)
}
