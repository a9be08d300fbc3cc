package transform

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

// blankBook is an order sheet and a customer sheet as Excel saves them:
// blank cells absent, rows that end before the header does.
const blankBook = `[Lines]
Order|Customer|Part|Qty|Note
SO-1|C1|P1|{n}2|fragile
SO-1|C1|P2|{n}3
SO-2|C2||{n}1
[Customers]
Code|Name|Agent|Ship
C1|Yarden|{n}7|Main st 1
C2|Eilat||Dock 4
C3|Haifa
`

// blankFiles writes blankBook as a workbook and each sheet as a CSV file
// of the same cells, and opens sources from either.
func blankFiles(t *testing.T) (dir string, open Opener) {
	t.Helper()
	dir = t.TempDir()
	wb, err := sourcetest.ParseWorkbook(blankBook)
	if err != nil {
		t.Fatal(err)
	}
	if err := sourcetest.WriteWorkbook(filepath.Join(dir, "book.xlsx"), wb); err != nil {
		t.Fatal(err)
	}
	for _, sh := range wb.Sheets {
		f, err := os.Create(filepath.Join(dir, sh.Name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		w := csv.NewWriter(f)
		for _, row := range sh.Rows {
			rec := make([]string, len(row)) // a short row stays short
			for i, c := range row {
				switch v := c.(type) {
				case string:
					rec[i] = v
				case source.Number:
					rec[i] = string(v)
				}
			}
			w.Write(rec)
		}
		w.Flush()
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir, func(src *plan.Source) (source.Reader, error) {
		return source.Open(source.Options{Name: src.File, Path: filepath.Join(dir, src.File), Sheet: src.Sheet})
	}
}

// TestRecordsBlankCells: a blank cell, absent from the workbook or empty
// in CSV, is "" to expressions, so `when: row.Note != ""` leaves out the
// sub-form of a line without a note, and `empty:` decides the field.
func TestRecordsBlankCells(t *testing.T) {
	t.Parallel()
	_, open := blankFiles(t)
	for _, format := range []string{"xlsx", "csv"} {
		src := func(name string) *plan.Source {
			if format == "xlsx" {
				return &plan.Source{Name: name, File: "book.xlsx", Sheet: name}
			}
			return &plan.Source{Name: name, File: name + ".csv"}
		}
		for _, tt := range []struct {
			empty string
			agent any // C2's and C3's AGENTCODE; absent means left out
			set   bool
		}{
			{"omit", nil, false},
			{"null", nil, true},
			{"keep", "", true},
		} {
			t.Run(format+"/empty:"+tt.empty, func(t *testing.T) {
				p := &plan.Plan{Dir: t.TempDir(), Target: plan.Target{Empty: tt.empty},
					Sources: []*plan.Source{src("Lines"), src("Customers")},
					Steps: []*plan.Step{
						{Name: "orders", Entity: "ORDERS", Source: "Lines", GroupBy: xp("row.Order"),
							Fields: fields("ORDNAME", "row.Order", "CUSTNAME", "row.Customer"),
							Subforms: []*plan.Subform{{Name: "ORDERITEMS_SUBFORM", Source: "group",
								Fields: fields("PARTNAME", "row.Part", "TQUANT", "row.Qty"),
								Subforms: []*plan.Subform{{Name: "ORDERITEMSTEXT_SUBFORM", When: xp(`row.Note != ""`),
									Fields: fields("TEXT", "row.Note")}}}}},
						{Name: "customers", Entity: "CUSTOMERS", Source: "Customers",
							Fields: fields("CUSTNAME", "row.Code", "CUSTDES", "row.Name", "AGENTCODE", "row.Agent"),
							Subforms: []*plan.Subform{{Name: "SHIPTO2_SUBFORM", When: xp(`row.Ship != ""`),
								Fields: fields("ADDRESS", "row.Ship")}}},
					}}
				prog := mustCompile(t, p, demoMetadata(), testOptions())
				recs := records(t, prog, "orders", open)
				if len(recs) != 2 {
					t.Fatalf("%d orders, want 2", len(recs))
				}
				lines := recs[0].Children
				if len(lines) != 2 || len(lines[0].Children) != 1 || lines[0].Children[0].Fields["TEXT"] != "fragile" {
					t.Fatalf("SO-1 lines %+v: want the first with its text", lines)
				}
				if len(lines[1].Children) != 0 {
					t.Errorf("SO-1 line 2 has no note but got a text sub-form %+v", lines[1].Children[0])
				}
				l3 := recs[1].Children[0]
				if len(l3.Children) != 0 {
					t.Errorf("SO-2's line has no note but got a text sub-form %+v", l3.Children[0])
				}
				// A blank text field follows empty:.
				part, set := l3.Fields["PARTNAME"]
				if set != tt.set || set && part != tt.agent {
					t.Errorf("empty: %s: a blank PARTNAME = %#v (set %v)", tt.empty, part, set)
				}

				custs := recs2map(records(t, prog, "customers", open))
				if c := custs["C1"]; len(c.Children) != 1 || c.Children[0].Fields["ADDRESS"] != "Main st 1" {
					t.Errorf("C1 = %+v: want its ship-to", c)
				}
				if c := custs["C2"]; len(c.Children) != 1 || c.Children[0].Fields["ADDRESS"] != "Dock 4" {
					t.Errorf("C2 = %+v: want its ship-to", c)
				}
				if c := custs["C3"]; len(c.Children) != 0 {
					t.Errorf("C3 has no ship-to address but got %+v", c.Children[0])
				}
				for _, code := range []string{"C2", "C3"} {
					agent, set := custs[code].Fields["AGENTCODE"]
					if set != tt.set || set && agent != tt.agent {
						t.Errorf("empty: %s: %s's blank AGENTCODE = %#v (set %v)", tt.empty, code, agent, set)
					}
				}
				if got := custs["C1"].Fields["AGENTCODE"]; got != "7" {
					t.Errorf("C1's AGENTCODE = %#v, want the number cell as text \"7\"", got)
				}
			})
		}
	}
}

// records runs a step over real files and fails on any rejected row.
func records(t *testing.T, prog *Program, step string, open Opener) []*Record {
	t.Helper()
	var out []*Record
	err := prog.Records(context.Background(), step, open, nil, func(r Result) error {
		if r.Record == nil {
			t.Errorf("%s: %s: not a record: %+v", step, r.Loc, r.Errors)
			for _, e := range r.Errors {
				t.Errorf("  %s", e.Message)
			}
			return nil
		}
		out = append(out, r.Record)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func recs2map(recs []*Record) map[string]*Record {
	m := map[string]*Record{}
	for _, r := range recs {
		m[r.Fields["CUSTNAME"].(string)] = r
	}
	return m
}
