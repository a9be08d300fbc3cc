package sourcetest

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/source"
	"github.com/xuri/excelize/v2"
)

func TestParseWorkbook(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       Workbook
		err        string
	}{
		{"types, blanks and short rows", "# orders\n[Orders]\nA|B|C\nx||{n}1.50\n\n{date}2026-11-10|{b}true\n{blank}|{date}2026-11-10T09:30:00\n[Other]\nZ\n",
			Workbook{Sheets: []Sheet{
				{Name: "Orders", Rows: [][]any{
					{"A", "B", "C"},
					{"x", "", source.Number("1.50")},
					nil,
					{time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC), true},
					{Blank{}, time.Date(2026, 11, 10, 9, 30, 0, 0, time.UTC)},
				}},
				{Name: "Other", Rows: [][]any{{"Z"}}},
			}}, ""},
		{"rows before a sheet", "A|B\n", Workbook{}, "line 1: a sheet starts with [Name]"},
		{"bad number", "[S]\n{n}1,5\n", Workbook{}, `line 2: "1,5" is not a number`},
		{"bad date", "[S]\n{date}10/11/2026\n", Workbook{}, "line 2: \"10/11/2026\" is not a date"},
		{"no sheet", "# nothing\n", Workbook{}, "no sheet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseWorkbook(tt.text)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// TestSheetXML pins what a sheet looks like: cells only where there are
// values, the row's span, shared strings counted as Excel counts them,
// an underscore escape kept literal.
func TestSheetXML(t *testing.T) {
	t.Parallel()
	wb := Workbook{Sheets: []Sheet{{Name: "S", Rows: [][]any{
		{"A", "B", "C"},
		{nil, "a_x000D_b", 1.5e20},
		{"A", nil, Formula{Expr: `B2&"x"`, Cached: "x"}},
	}}}}
	parts, err := wb.Parts()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	for _, p := range parts {
		byName[p.Name] = p.Body
	}
	sheet := byName["xl/worksheets/sheet1.xml"]
	for _, want := range []string{
		`<dimension ref="A1:C3"/>`,
		`<row r="2" spans="2:3" x14ac:dyDescent="0.25"><c r="B2" t="s"><v>3</v></c><c r="C2"><v>1.5E+20</v></c></row>`,
		`<row r="3" spans="1:3" x14ac:dyDescent="0.25"><c r="A3" t="s"><v>0</v></c><c r="C3" t="str"><f>B2&amp;"x"</f><v>x</v></c></row>`,
	} {
		if !strings.Contains(sheet, want) {
			t.Errorf("sheet XML lacks %s:\n%s", want, sheet)
		}
	}
	if want := `count="5" uniqueCount="4"><si><t>A</t></si><si><t>B</t></si><si><t>C</t></si><si><t>a_x005F_x000D_b</t></si></sst>`; !strings.HasSuffix(byName["xl/sharedStrings.xml"], want) {
		t.Errorf("shared strings %s\nwant ...%s", byName["xl/sharedStrings.xml"], want)
	}
}

// TestWorkbookOpensInExcelize: another reader takes the workbook as a
// workbook, with the same cells: the parts and relationships are whole.
func TestWorkbookOpensInExcelize(t *testing.T) {
	t.Parallel()
	wb, err := ParseWorkbook("[Data]\nA|B|C\nx||{n}1.5\n\n{date}2026-11-10|{b}true\n[More]\nZ\n")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "w.xlsx")
	if err := WriteWorkbook(p, wb); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetList(); !reflect.DeepEqual(got, []string{"Data", "More"}) {
		t.Errorf("sheets %q", got)
	}
	rows, err := f.GetRows("Data", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"A", "B", "C"}, {"x", "", "1.5"}, nil, {"46336", "1"}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("excelize reads %q, want %q", rows, want)
	}
	if got, _ := f.GetCellValue("Data", "A4"); got != "11-10-26" {
		t.Errorf("A4 shows %q, want 11-10-26, built-in format 14 as excelize shows it", got)
	}
}
