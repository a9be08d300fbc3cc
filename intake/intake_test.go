package intake

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// example is the intake workbook of the examples: a template of customers
// filled in and saved by LibreOffice (TestLibreOffice writes it again with
// -update).
const example = "../examples/plans/data/intake-customers.xlsx"

var (
	ordersExpand    = []string{"ORDERITEMS_SUBFORM", "ORDERSTEXT_SUBFORM", "ORDERITEMS_SUBFORM/ORDERITEMSTEXT_SUBFORM"}
	customersExpand = []string{"GENCUSTNOTES_SUBFORM", "SHIPTO2_SUBFORM", "CUSTOMERSTEXT_SUBFORM"}
)

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	md := sandbox.DemoMetadata()
	for _, tc := range []struct {
		entity string
		expand []string
		want   string
	}{
		{"ORDER", nil, `no entity "ORDER" in the metadata; did you mean "ORDERS"?`},
		{"ORDERS", []string{"ORDERITEM_SUBFORM"}, `--expand ORDERITEM_SUBFORM: ORDERS has no sub-form "ORDERITEM_SUBFORM"; did you mean "ORDERITEMS_SUBFORM"?`},
		{"ORDERS", []string{"ORDERITEMS_SUBFORM/NOPE"}, `--expand ORDERITEMS_SUBFORM/NOPE: ORDERS/ORDERITEMS_SUBFORM has no sub-form "NOPE"`},
		{"FAMILY_LOG", []string{"FAMILY_LOGPART_SUBFORM/X"}, `FAMILY_LOG/FAMILY_LOGPART_SUBFORM has no sub-form "X"`},
	} {
		_, err := New(md, tc.entity, tc.expand)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%s, %v) = %v, want %q", tc.entity, tc.expand, err, tc.want)
		}
	}
}

// TestLayout holds what a template of orders lays out: the columns of
// each sheet, the order's key joining the lines, the value lists.
func TestLayout(t *testing.T) {
	t.Parallel()
	l, err := New(sandbox.DemoMetadata(), "ORDERS", ordersExpand)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, s := range l.Sheets() {
		for _, c := range l.SheetColumns(s) {
			got[s] = append(got[s], c.Name)
		}
	}
	want := map[string][]string{
		"ORDERS":             {"ORDNAME", "CUSTNAME", "CDES", "CURDATE", "ORDSTATUSDES", "DETAILS", "ORDERSTEXT_SUBFORM.TEXT"},
		"ORDERITEMS_SUBFORM": {"ORDNAME", "PARTNAME", "PDES", "TQUANT", "TUNITNAME", "PRICE", "ICODE", "DUEDATE", "KLINE", "ORDERITEMSTEXT_SUBFORM.TEXT"},
	}
	for s, cols := range want {
		if !slices.Equal(got[s], cols) {
			t.Errorf("sheet %s: columns %v, want %v", s, got[s], cols)
		}
	}
	if r := l.Refers(); !slices.Equal(r, []string{"CUSTOMERS", "LOGPART"}) {
		t.Errorf("value lists from %v, want CUSTOMERS, LOGPART", r)
	}
	if lines := l.Levels[1]; lines.Link != "ORDNAME" || lines.Sheet != "ORDERITEMS_SUBFORM" {
		t.Errorf("lines: sheet %s joined by %q", lines.Sheet, lines.Link)
	}
	if n := Note(l, l.SheetColumns("ORDERS")[1]); !strings.Contains(n, "Mandatory") || !strings.Contains(n, "at most 16 characters") {
		t.Errorf("CUSTNAME's note: %q", n)
	}
}

// TestReadExample reads the layout back from the example workbook, as
// LibreOffice saved it: the same levels and columns as a template of
// today lays out.
func TestReadExample(t *testing.T) {
	t.Parallel()
	md := sandbox.DemoMetadata()
	if is, err := Is(example); !is || err != nil {
		t.Fatalf("Is(%s) = %v, %v", example, is, err)
	}
	if is, err := Is("../examples/plans/data/orders.xlsx"); is || err != nil {
		t.Fatalf("orders.xlsx is no intake workbook, Is says %v, %v", is, err)
	}
	want, err := New(md, "CUSTOMERS", customersExpand)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(example, "intake-customers.xlsx", md)
	if err != nil {
		t.Fatal(err)
	}
	sameLayout(t, got, want)
}

func sameLayout(t *testing.T, got, want *Layout) {
	t.Helper()
	if got.Entity != want.Entity || len(got.Levels) != len(want.Levels) {
		t.Fatalf("read %s with %d levels, want %s with %d", got.Entity, len(got.Levels), want.Entity, len(want.Levels))
	}
	for i, w := range want.Levels {
		g := got.Levels[i]
		if !slices.Equal(g.Path, w.Path) || g.Sheet != w.Sheet || g.Prefix != w.Prefix || g.Link != w.Link {
			t.Errorf("level %d: %v on %s (%q, link %q), want %v on %s (%q, link %q)", i, g.Path, g.Sheet, g.Prefix, g.Link, w.Path, w.Sheet, w.Prefix, w.Link)
		}
		var gc, wc []string
		for _, c := range g.Columns {
			gc = append(gc, c.Name)
		}
		for _, c := range w.Columns {
			wc = append(wc, c.Name)
		}
		if !slices.Equal(gc, wc) {
			t.Errorf("level %v: columns %v, want %v", w.Path, gc, wc)
		}
	}
	for s, cols := range got.Other {
		if len(cols) > 0 {
			t.Errorf("sheet %s: columns of no level %v", s, cols)
		}
	}
}

// roundTrip is a template filled in by a customer: its rows by sheet, the
// target's codes, and the example it is (with -update) if it is one.
type roundTrip struct {
	entity  string
	expand  []string
	codes   map[string][]string
	rows    map[string][][]any
	example string
}

var roundTrips = []roundTrip{
	{
		// Customers, with their notes, a ship-to address and a text: the
		// example, which loads on an empty company.
		entity: "CUSTOMERS", expand: customersExpand, example: example,
		rows: map[string][][]any{
			"CUSTOMERS": {
				{"C2001", "Galil Engineering Ltd", "04-6000001", "12 Harbour Rd", "Haifa", "3303001", nil, "Galil Engineering, warehouse", "04-6000099", "Gate 2, Port Ave", "Haifa", nil, "Key account since 2019"},
				{"C2002", "נגב מתכות בע\"מ", "08-6000002", nil, "Beer Sheva"},
			},
			"GENCUSTNOTES_SUBFORM": {
				{"C2001", nil, "Prefers morning deliveries", time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)},
				{"C2002", nil, "First contact at the trade fair"},
				{"C2001", nil, "Credit limit reviewed", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
			},
		},
	},
	{
		// Orders and their lines, with the value lists of the target's
		// customers and parts.
		entity: "ORDERS", expand: ordersExpand,
		codes: map[string][]string{"CUSTOMERS": {"C1001", "C1002", "C1003"}, "LOGPART": {"B-100", "B-101", "N-200"}},
		rows: map[string][][]any{
			"ORDERS": {
				{"SO-101", "C1001", nil, time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC), nil, "Rush", "Deliver to gate 2"},
				{"SO-102", "C1002", nil, time.Date(2026, 11, 12, 0, 0, 0, 0, time.UTC)},
			},
			"ORDERITEMS_SUBFORM": {
				{"SO-101", "B-100", nil, 1000, nil, 0.35, nil, nil, nil, "Boxed in 100s"},
				{"SO-101", "N-200", nil, 1000},
				{"SO-102", "B-101", nil, 250, nil, 0.52},
			},
		},
	},
}

// TestLibreOffice writes templates, fills them in, and has LibreOffice
// save them: each layout reads back the same, and the notes, lists and
// hidden sheets are kept. -update saves the example's as the example.
func TestLibreOffice(t *testing.T) {
	soffice, err := exec.LookPath("soffice")
	if err != nil {
		t.Skip("soffice (LibreOffice) is not installed: apt-get install libreoffice-calc-nogui")
	}
	// One LibreOffice start saves every workbook: a start (a new profile
	// each time) costs more than the saving.
	md := sandbox.DemoMetadata()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	layouts := make([]*Layout, len(roundTrips))
	args := []string{"-env:UserInstallation=file://" + filepath.ToSlash(filepath.Join(dir, "profile")),
		"--headless", "--convert-to", "xlsx", "--outdir", filepath.Join(dir, "out")}
	for i, rt := range roundTrips {
		layouts[i] = fillTemplate(t, md, in, rt)
		args = append(args, filepath.Join(in, workbookName(rt)))
	}
	if b, err := exec.Command(soffice, args...).CombinedOutput(); err != nil {
		t.Fatalf("soffice: %v\n%s", err, b)
	}
	for i, rt := range roundTrips {
		t.Run(rt.entity, func(t *testing.T) {
			checkSaved(t, md, filepath.Join(dir, "out", workbookName(rt)), layouts[i], rt)
		})
	}
}

func workbookName(rt roundTrip) string { return "intake-" + strings.ToLower(rt.entity) + ".xlsx" }

// fillTemplate writes rt's template into folder in, refuses to write it
// again, and fills in rt's rows as a person would.
func fillTemplate(t *testing.T, md *odata.Metadata, in string, rt roundTrip) *Layout {
	t.Helper()
	l, err := New(md, rt.entity, rt.expand)
	if err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(in, workbookName(rt))
	if err := Write(written, l, rt.codes); err != nil {
		t.Fatal(err)
	}
	if err := Write(written, l, rt.codes); err == nil || !strings.Contains(err.Error(), "is not written over") {
		t.Fatalf("a second Write over the workbook: %v", err)
	}
	f, err := excelize.OpenFile(written)
	if err != nil {
		t.Fatal(err)
	}
	for sheet, rows := range rt.rows {
		for i, row := range rows {
			for j, v := range row {
				if v == nil {
					continue
				}
				cell, _ := excelize.CoordinatesToCellName(j+1, HeaderRow+1+i)
				if err := f.SetCellValue(sheet, cell, v); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return l
}

// checkSaved reads the workbook LibreOffice saved back: the same layout,
// and its notes, value lists and hidden sheets kept.
func checkSaved(t *testing.T, md *odata.Metadata, saved string, l *Layout, rt roundTrip) {
	name := filepath.Base(saved)
	got, err := Read(saved, name, md)
	if err != nil {
		t.Fatal(err)
	}
	sameLayout(t, got, l)
	g, err := excelize.OpenFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	top := l.Levels[0].Sheet
	comments, err := g.GetComments(top)
	if err != nil || len(comments) != len(l.SheetColumns(top)) {
		t.Fatalf("LibreOffice kept %d notes of %s (%v), want %d", len(comments), top, err, len(l.SheetColumns(top)))
	}
	lists := 0
	for _, s := range l.Sheets() {
		dvs, err := g.GetDataValidations(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, dv := range dvs {
			if !strings.Contains(dv.Formula1, listsSheet) {
				t.Errorf("sheet %s: a list from %s, want one from %s", s, dv.Formula1, listsSheet)
			}
			lists++
		}
	}
	if want := len(rt.codes); lists != want {
		t.Errorf("LibreOffice kept %d value lists, want %d", lists, want)
	}
	hidden := []string{LayoutSheet}
	if len(rt.codes) > 0 {
		hidden = append(hidden, listsSheet)
	}
	for _, s := range hidden {
		if v, err := g.GetSheetVisible(s); v || err != nil {
			t.Errorf("sheet %s visible %v (%v) after LibreOffice saved it", s, v, err)
		}
	}
	if rt.example != "" && golden.Updating() {
		b, err := os.ReadFile(saved)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(rt.example, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
