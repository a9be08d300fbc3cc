package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// TestProfileAgreesWithDryRun holds profile and the dry run to one answer
// over the example plans, against a company that holds some of what the
// messy hand-over refers to: every cell the profile says would make a load
// fail is a row error or an unresolved value of the dry run, or a value
// the dry run says its count holds only as far as the company has
// (unchecked), or a cell of a row the dry run fails for another reason (it
// names one reason a record); and every row error of the dry run is a cell
// the profile names as failing. Left out: an unresolved reference to a
// record whose own row fails (the dry run's alone: the profile sees the
// value in its file), and a key finding a step's when: may undo (the
// profile says so: it does not evaluate when:).
func TestProfileAgreesWithDryRun(t *testing.T) {
	t.Parallel()
	plans, err := filepath.Glob(filepath.Join("..", "..", "..", "examples", "plans", "*.yaml"))
	if err != nil || len(plans) < 5 {
		t.Fatalf("example plans: %v %v", plans, err)
	}
	for _, p := range plans {
		if strings.HasSuffix(p, "_test.yaml") || filepath.Base(p) == "mistakes.yaml" {
			continue // a plan's tests; a plan that shows mistakes and is not read
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			sb, err := sandbox.New(sandbox.Options{})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			_, env := recordedTarget(t, sb, dir)
			cl, err := odata.NewClient(odata.Config{BaseURL: env["MIGRATE_TARGET"], Auth: odata.BasicAuth{User: "demo", Password: "demo"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, post := range []struct{ set, body string }{
				{"CUSTOMERS", `{"CUSTNAME":"C1001","CUSTDES":"Yarden Tools"}`},
				{"LOGPART", `{"PARTNAME":"X-999","PARTDES":"A part the parts file lacks"}`},
				{"FAMILY_LOG", `{"FAMILYNAME":"NUT","FAMILYDESC":"Nuts","DEBITFLAG":"N"}`},
			} {
				if err := cl.Post(context.Background(), post.set, []byte(post.body), nil); err != nil {
					t.Fatal(err)
				}
			}
			_, out, errs := runMain(t, env, "profile", p, "--target", env["MIGRATE_TARGET"], "--json")
			var prof profileJSON
			if err := json.Unmarshal([]byte(out), &prof); err != nil {
				t.Fatalf("profile --json: %v\n%s%s", err, out, errs)
			}
			_, out, errs = runMain(t, env, "plan", p, "--json", "--journal", filepath.Join(dir, "dry.journal"))
			var dry struct {
				Unchecked int `json:"unchecked"`
				Errors    []struct {
					Location, Message string
				} `json:"errors"`
			}
			if err := json.Unmarshal([]byte(out), &dry); err != nil {
				t.Fatalf("plan --json: %v\n%s%s", err, out, errs)
			}
			failing := map[string]bool{} // the dry run's cells, and their rows
			var rowErrors []string
			for _, e := range dry.Errors {
				failing[e.Location] = true
				failing[rowOf(e.Location)] = true
				if !strings.Contains(e.Message, "and no earlier step creates it") {
					rowErrors = append(rowErrors, e.Location+": "+e.Message)
				}
			}
			blocking := map[string]string{} // the profile's cells, with what
			unloaded := 0
			for _, s := range prof.Sources {
				for _, c := range s.Columns {
					add := func(what string, cells []string) {
						for _, cell := range cells {
							blocking[cell] = c.Name + ": " + what
						}
					}
					add("too long", c.TooLong.Cells)
					add("blank where mandatory", c.BlankMandatory.Cells)
					if c.NumberColumn {
						add("not a number", c.TextInNumbers.Cells)
					}
					whenMaySkip := false
					for _, f := range append(c.Fields, derefField(c.Field)...) {
						whenMaySkip = whenMaySkip || f.Key && f.When != ""
					}
					for _, g := range c.Duplicates {
						if !whenMaySkip { // else a step's when: may skip the rows (said with the finding)
							add("key twice", g.Cells[1:])
						}
					}
					for _, g := range c.CaseDuplicates {
						if c.CaseCollides && !whenMaySkip {
							add("key twice in two cases", g.Cells[1:])
						}
					}
					for _, m := range c.Missing {
						switch {
						case strings.Contains(m.Why, "which no step loads"):
							unloaded += m.Count
						case strings.Contains(m.In, "on the target"):
							add("missing "+m.Value, m.Cells[:1]) // the dry run names the first cell
						}
					}
				}
			}
			for cell, what := range blocking {
				if !failing[cell] && !failing[rowOf(cell)] {
					t.Errorf("the profile says %s (%s) makes the load fail; the dry run fails nothing there", cell, what)
				}
			}
			if unloaded > 0 && dry.Unchecked == 0 {
				t.Errorf("the profile finds %d values of entities no step loads missing from the company; the dry run's count has no caveat", unloaded)
			}
			for _, e := range rowErrors {
				if cell, _, _ := strings.Cut(e, ": "); blocking[cell] == "" {
					t.Errorf("the dry run's row error %s is no failing finding of the profile", e)
				}
			}
		})
	}
}

// rowOf is the row of a cell: book.xlsx!Sheet!C17 is book.xlsx!Sheet!17; a
// CSV's file:17 is its row already.
func rowOf(cell string) string {
	i := strings.LastIndex(cell, "!")
	if i < 0 {
		return cell
	}
	return cell[:i+1] + strings.TrimLeft(cell[i+1:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

func derefField(f *profileFieldJSON) []profileFieldJSON {
	if f == nil {
		return nil
	}
	return []profileFieldJSON{*f}
}
