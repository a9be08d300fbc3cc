package profile

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

// csvInput writes rows to a CSV file and gives it as an input.
func csvInput(t *testing.T, name string, rows ...string) Input {
	t.Helper()
	path := writeFile(t, name, strings.Join(rows, "\n")+"\n")
	return Input{Name: name, File: name, Open: func() (source.Reader, error) {
		return source.Open(source.Options{Name: name, Path: path})
	}}
}

func column(t *testing.T, r *Result, src, name string) *Column {
	t.Helper()
	c := r.column(src, name)
	if c == nil {
		t.Fatalf("no column %s of %s", name, src)
	}
	return c
}

func TestRunFindings(t *testing.T) {
	t.Parallel()
	parts := csvInput(t, "parts.csv",
		"Code,Desc,Price",
		"A1,Bolt,1.5",
		"a1,Nut ,2",
		"B2,A description far too long,x",
		"A1,Washer,3",
		"C3,,4",
	)
	parts.Uses = []Use{
		{Column: "Code", Step: "parts", Form: "LOGPART", Field: "PARTNAME", Type: "Edm.String", MaxLength: 8, Direct: true, Key: true},
		{Column: "Desc", Step: "parts", Form: "LOGPART", Field: "PARTDES", Type: "Edm.String", MaxLength: 10, Direct: true},
		{Column: "Price", Step: "parts", Form: "LOGPART", Field: "PRICE", Type: "Edm.Decimal", Direct: true},
	}
	lines := csvInput(t, "lines.csv", "Part", "A1", "Z9", "b2 ", "Z9", "C3")
	opts := Options{
		Sources: []Input{parts, lines},
		Refs: []Ref{
			{Source: "lines.csv", Column: "Part", ToSource: "parts.csv", ToColumn: "Code", Why: "exists", Offline: true},
			{Source: "lines.csv", Column: "Part", ToEntity: "LOGPART", AlsoIn: [][2]string{{"parts.csv", "Code"}}, Why: "exists"},
		},
		Target: func(_ context.Context, entity string, each func(string)) error {
			if entity != "LOGPART" {
				return fmt.Errorf("asked for %s", entity)
			}
			each("C3")
			each("Z9")
			return nil
		},
		Cells: 1,
	}
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	// The lines given first are read after the parts they need: the same
	// profile, in the order given.
	opts.Sources = []Input{lines, parts}
	again, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.Sources[0].Name != "lines.csv" || !reflect.DeepEqual(again.Sources[1], res.Sources[0]) || !reflect.DeepEqual(again.Sources[0], res.Sources[1]) {
		t.Errorf("the sources in another order profile otherwise:\n%+v\n%+v", again.Sources, res.Sources)
	}
	code := column(t, res, "parts.csv", "Code")
	if want := []Group{{Value: "A1", Finding: Finding{Count: 2, Cells: []string{"parts.csv:2"}}}}; !reflect.DeepEqual(code.Duplicates, want) {
		t.Errorf("duplicates = %+v, want %+v", code.Duplicates, want)
	}
	if want := []Group{{Value: "A1", Values: []string{"A1", "a1"}, Finding: Finding{Count: 2, Cells: []string{"parts.csv:2"}}}}; !reflect.DeepEqual(code.CaseDuplicates, want) {
		t.Errorf("case duplicates = %+v, want %+v", code.CaseDuplicates, want)
	}
	desc := column(t, res, "parts.csv", "Desc")
	if desc.Blank != 1 || desc.MaxAllowed != 10 || desc.TooLong.Count != 1 || desc.TooLong.Cells[0] != "parts.csv:4" {
		t.Errorf("Desc: blank %d, max allowed %d, too long %+v", desc.Blank, desc.MaxAllowed, desc.TooLong)
	}
	if desc.Spaces.Count != 1 || desc.Spaces.Cells[0] != "parts.csv:3" {
		t.Errorf("Desc: spaces %+v", desc.Spaces)
	}
	if desc.Longest.Value != "A description far too long" || desc.MinLength != 4 {
		t.Errorf("Desc: longest %+v, min length %d", desc.Longest, desc.MinLength)
	}
	price := column(t, res, "parts.csv", "Price")
	if !price.Numeric || price.TextInNumbers.Count != 1 || price.TextInNumbers.Cells[0] != "parts.csv:4" || price.NumbersAsText.Count != 0 {
		t.Errorf("Price: numeric %v, text %+v, numbers as text %+v (a CSV holds only text)", price.Numeric, price.TextInNumbers, price.NumbersAsText)
	}
	missing := func(res *Result) []string {
		var got []string
		for _, m := range column(t, res, "lines.csv", "Part").Missing {
			got = append(got, fmt.Sprintf("%s in %s near %q: %d %v more %d", m.Value, m.In, m.Near, m.Count, m.Cells, m.More()))
		}
		return got
	}
	// With the target read: Z9, which the company holds, is no finding
	// (exists: takes it), and b2 is one, near the part it differs from in
	// case and spaces only.
	want := []string{
		`b2  in LOGPART on the target, nor in parts.csv column Code near "parts.csv:4": 1 [lines.csv:4] more 0`,
	}
	if got := missing(res); !reflect.DeepEqual(got, want) {
		t.Errorf("missing:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !res.TargetRead {
		t.Error("the target was not read")
	}
	// Without it, the sources alone: both are missing from them.
	opts.Target = nil
	offline, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		`Z9 in parts.csv column Code near "": 2 [lines.csv:3] more 1`,
		`b2  in parts.csv column Code near "parts.csv:4": 1 [lines.csv:4] more 0`,
	}
	if got := missing(offline); !reflect.DeepEqual(got, want) {
		t.Errorf("missing offline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Two sources that refer to each other: the one read first keeps its
// values and checks them at the end; the missing values past MaxDistinct
// are not kept, and the column says so.
func TestRunReferenceCycle(t *testing.T) {
	t.Parallel()
	a := csvInput(t, "a.csv", "X", "1", "2", "3", "4")
	b := csvInput(t, "b.csv", "Y", "1", "9", "8")
	res, err := Run(context.Background(), Options{
		Sources: []Input{a, b},
		Refs: []Ref{
			{Source: "a.csv", Column: "X", ToSource: "b.csv", ToColumn: "Y"},
			{Source: "b.csv", Column: "Y", ToSource: "a.csv", ToColumn: "X"},
		},
		MaxDistinct: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	missing := func(src, col string) (vals []string, approx bool) {
		c := column(t, res, src, col)
		for _, m := range c.Missing {
			vals = append(vals, m.Value)
		}
		return vals, c.MissingApprox
	}
	// a is read first with its check deferred: it keeps its first two
	// values (1, 2), 1 is in b; 3 and 4 are past the cap.
	if got, approx := missing("a.csv", "X"); !reflect.DeepEqual(got, []string{"2"}) || !approx {
		t.Errorf("a.X missing %v (approximate %v), want [2], approximate", got, approx)
	}
	if got, approx := missing("b.csv", "Y"); !reflect.DeepEqual(got, []string{"9", "8"}) || approx {
		t.Errorf("b.Y missing %v (approximate %v), want [9 8], exact", got, approx)
	}
}

// Past MaxDistinct a column's distinct values are estimated, and say so;
// below it they are exact.
func TestRunDistinctCap(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "big.csv")
	const rows = 50_000
	if err := sourcetest.WriteCSV(path, rows, []string{"Code", "Kind"}, func(row, col int) string {
		if col == 0 {
			return fmt.Sprintf("C%06d", row)
		}
		return fmt.Sprintf("K%d", row%7)
	}); err != nil {
		t.Fatal(err)
	}
	in := Input{Name: "big", File: "big.csv", Open: func() (source.Reader, error) { return source.Open(source.Options{Path: path}) }}
	res, err := Run(context.Background(), Options{Sources: []Input{in}, MaxDistinct: 1000})
	if err != nil {
		t.Fatal(err)
	}
	code := column(t, res, "big", "Code")
	if !code.Approximate || code.Distinct < rows*95/100 || code.Distinct > rows*105/100 {
		t.Errorf("Code: distinct %d (approximate %v), want about %d, approximate", code.Distinct, code.Approximate, rows)
	}
	kind := column(t, res, "big", "Kind")
	if kind.Approximate || kind.Distinct != 7 || kind.Top[0].Count != rows/7+1 {
		t.Errorf("Kind: distinct %d (approximate %v), top %+v", kind.Distinct, kind.Approximate, kind.Top)
	}
}

// A workbook saved by a spreadsheet program: LibreOffice Calc converts the
// CSV the example's workbook was made from, and the profile of what it
// writes now is the profile of the workbook committed beside it (which the
// other tests read without LibreOffice). -update saves it again.
func TestLibreOfficeWorkbook(t *testing.T) {
	soffice, err := exec.LookPath("soffice")
	if err != nil {
		t.Skip("soffice (LibreOffice) is not installed: apt-get install libreoffice-calc-nogui")
	}
	const data = "../examples/plans/data"
	dir := t.TempDir()
	// Quoted fields are text ("10" stays a text cell), special numbers
	// are detected (2026-02-01 becomes a date cell), as a user's import.
	cmd := exec.Command(soffice, "-env:UserInstallation=file://"+filepath.ToSlash(filepath.Join(dir, "profile")),
		"--headless", "--infilter=CSV:44,34,76,1,,1033,true,true", "--convert-to", "xlsx", "--outdir", dir,
		filepath.Join(data, "profile-lines.csv"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("soffice: %v\n%s", err, out)
	}
	converted := filepath.Join(dir, "profile-lines.xlsx")
	committed := filepath.Join(data, "profile-lines.xlsx")
	if golden.Updating() {
		b, err := os.ReadFile(converted)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(committed, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	profileOf := func(path string) []Column {
		res, err := Run(context.Background(), FromFile(path, FileOptions{Keys: []string{"Part"}}))
		if err != nil {
			t.Fatal(err)
		}
		cols := res.Sources[0].Columns
		for i := range cols {
			// the cells name the file; the rest must be the same
			cols[i] = renamed(cols[i], path)
		}
		return cols
	}
	got, want := profileOf(converted), profileOf(committed)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LibreOffice's workbook profiles as\n%+v\nthe committed one as\n%+v", got, want)
	}
	qty := column(t, &Result{Sources: []Source{{Name: "x", Columns: got}}}, "x", "Qty")
	if qty.Kinds.Number != 3 || qty.Kinds.Text != 2 || qty.Blank != 1 {
		t.Errorf("Qty kinds %+v, blank %d: want 3 numbers, 2 texts (\"10\" quoted, abc) and the cell the sheet leaves out blank", qty.Kinds, qty.Blank)
	}
	date := column(t, &Result{Sources: []Source{{Name: "x", Columns: got}}}, "x", "Date")
	if date.Kinds.Date != 6 || len(date.DateLayouts) != 1 || date.DateLayouts[0].Layout != "date cell" {
		t.Errorf("Date kinds %+v, layouts %+v: want date cells", date.Kinds, date.DateLayouts)
	}
}

// renamed replaces the file's name in a column's cells with FILE.
func renamed(c Column, path string) Column {
	fix := func(cells []string) []string {
		out := make([]string, len(cells))
		for i, s := range cells {
			out[i] = strings.ReplaceAll(s, path, "FILE")
		}
		return out
	}
	fixF := func(f Finding) Finding { return Finding{Count: f.Count, Cells: fix(f.Cells)} }
	for _, p := range []**Sample{&c.Shortest, &c.Longest} {
		if *p != nil {
			s := **p
			s.Cell = fix([]string{s.Cell})[0]
			*p = &s
		}
	}
	c.TooLong, c.NumbersAsText, c.TextInNumbers, c.Spaces = fixF(c.TooLong), fixF(c.NumbersAsText), fixF(c.TextInNumbers), fixF(c.Spaces)
	for i := range c.DateLayouts {
		c.DateLayouts[i].Finding = fixF(c.DateLayouts[i].Finding)
	}
	for i := range c.Duplicates {
		c.Duplicates[i].Finding = fixF(c.Duplicates[i].Finding)
	}
	for i := range c.CaseDuplicates {
		c.CaseDuplicates[i].Finding = fixF(c.CaseDuplicates[i].Finding)
	}
	return c
}

// Every value from a file is escaped on the page.
func TestHTMLEscapes(t *testing.T) {
	t.Parallel()
	in := csvInput(t, "x.csv", "Code,<i>Col</i>", `"<script>alert(1)</script>",a`, `"<script>alert(1)</script>",b`)
	in.Uses = []Use{{Column: "Code", Field: "--key", Key: true}}
	res, err := Run(context.Background(), Options{Sources: []Input{in}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteHTML(&b, res, PageInfo{Title: "<b>plan</b>"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script>alert", "<i>Col", "<b>plan"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the page lacks the escaped value")
	}
}

func TestHLL(t *testing.T) {
	t.Parallel()
	for _, n := range []int{10, 1000, 200_000} {
		var h hll
		for i := range n {
			h.add(hash64(fmt.Sprint("v", i)))
		}
		if got := h.estimate(); got < n*95/100 || got > n*105/100 {
			t.Errorf("estimate of %d distinct values: %d", n, got)
		}
	}
}

// TestRunBlankMandatory: a blank cell of a column written as it is to a
// mandatory field of a record always created is a finding that would make
// a load fail (apply's row error at that cell); a column that only feeds
// such a field through an expression, or a field that is not mandatory,
// gives none; a step's when: is named.
func TestRunBlankMandatory(t *testing.T) {
	t.Parallel()
	parts := csvInput(t, "parts.csv",
		"Code,Desc,Note,Unit",
		"A1,Bolt,x,",
		"A2,,,",
		"A3,,y,ea",
	)
	parts.Uses = []Use{
		{Column: "Code", Step: "parts", Form: "LOGPART", Field: "PARTNAME", Direct: true, Key: true},
		{Column: "Desc", Step: "parts", Form: "LOGPART", Field: "PARTDES", Direct: true, Mandatory: true, When: `row.Code != "A3"`},
		{Column: "Note", Step: "parts", Form: "LOGPART", Field: "EXTPART", Direct: true},
		{Column: "Unit", Step: "parts", Form: "LOGPART", Field: "UNITNAME", Expr: `row.Unit ?? "ea"`},
	}
	res, err := Run(context.Background(), Options{Sources: []Input{parts}, Cells: 5})
	if err != nil {
		t.Fatal(err)
	}
	desc := column(t, res, "parts.csv", "Desc")
	if want := (Finding{Count: 2, Cells: []string{"parts.csv:3", "parts.csv:4"}}); !reflect.DeepEqual(desc.BlankMandatory, want) {
		t.Errorf("Desc: blank mandatory %+v, want %+v", desc.BlankMandatory, want)
	}
	if desc.Blocking() != 1 {
		t.Errorf("Desc: %d blocking, want 1", desc.Blocking())
	}
	items := desc.Items()
	if len(items) != 1 || items[0].What != `blank, where LOGPART.PARTDES is mandatory: the server refuses the record (2 rows, unless when: row.Code != "A3" skips the row)` {
		t.Errorf("Desc: items %+v", items)
	}
	for _, name := range []string{"Note", "Unit"} {
		if c := column(t, res, "parts.csv", name); c.BlankMandatory.Count != 0 || c.Blocking() != 0 {
			t.Errorf("%s: blank mandatory %+v, blocking %d, want none", name, c.BlankMandatory, c.Blocking())
		}
	}
}

// cellsReader is a sheet's rows as typed cells, for a test.
type cellsReader struct {
	h    *source.Header
	rows [][]source.Cell
	i    int
}

func (r *cellsReader) Header() *source.Header { return r.h }
func (r *cellsReader) Close() error           { return nil }
func (r *cellsReader) Next() (source.Row, error) {
	if r.i >= len(r.rows) {
		return source.Row{}, io.EOF
	}
	r.i++
	return source.Row{Loc: source.Location{File: "book.xlsx", Sheet: "Parts", Line: r.i + 1}, Header: r.h, Cells: r.rows[r.i-1]}, nil
}

// TestRunDateInNumberField: a date cell of a column written to a numeric
// field is no number (the field refuses it, as apply's row error says);
// written to a text field, it is a date.
func TestRunDateInNumberField(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	in := Input{Name: "parts", File: "book.xlsx", Open: func() (source.Reader, error) {
		return &cellsReader{h: source.NewHeader([]string{"Price", "Note"}), rows: [][]source.Cell{
			{source.Number("1.5"), "a"}, {day, day}, {source.Number("2"), "b"},
		}}, nil
	}}
	in.Uses = []Use{
		{Column: "Price", Step: "parts", Form: "LOGPART", Field: "PRICE", Type: "Edm.Decimal", Direct: true},
		{Column: "Note", Step: "parts", Form: "LOGPART", Field: "EXTPART", Type: "Edm.String", Direct: true},
	}
	res, err := Run(context.Background(), Options{Sources: []Input{in}, Cells: 5})
	if err != nil {
		t.Fatal(err)
	}
	if price := column(t, res, "parts", "Price"); !reflect.DeepEqual(price.TextInNumbers, Finding{Count: 1, Cells: []string{"book.xlsx!Parts!A3"}}) {
		t.Errorf("Price: not numbers %+v, want the date cell", price.TextInNumbers)
	}
	if note := column(t, res, "parts", "Note"); note.TextInNumbers.Count != 0 || note.Blocking() != 0 {
		t.Errorf("Note: not numbers %+v, blocking %d, want none", note.TextInNumbers, note.Blocking())
	}
}

// TestCaseDuplicateBlocks: keys that differ only in case make a load fail
// where an expression computes the key from the column (it may fold case:
// the dry run's row error says the key comes twice), and not where the
// column is the key as it is (two keys, two records, as the dry run loads
// them); a file's --key is the column as it is.
func TestCaseDuplicateBlocks(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, class, in string
		use             Use
		blocking        int
	}{
		{"written as it is", "warn", "two records as the plan writes them",
			Use{Column: "Code", Step: "parts", Form: "LOGPART", Field: "PARTNAME", Direct: true, Key: true}, 0},
		{"computed", "bad", "one key once the plan's expression folds case",
			Use{Column: "Code", Step: "parts", Form: "LOGPART", Field: "PARTNAME", Expr: "upper(row.Code)", Key: true}, 1},
		{"a group computed", "bad", "one key once",
			Use{Column: "Code", Step: "orders", Form: "ORDERS", Field: "group_by", Expr: "trim(row.Code)", Group: true}, 1},
	} {
		parts := csvInput(t, "parts.csv", "Code", "P-1", "p-1")
		parts.Uses = []Use{tt.use}
		res, err := Run(context.Background(), Options{Sources: []Input{parts}, Cells: 5})
		if err != nil {
			t.Fatal(err)
		}
		c := column(t, res, "parts.csv", "Code")
		items := c.Items()
		if c.Blocking() != tt.blocking || len(items) != 1 || items[0].Class != tt.class || !strings.Contains(items[0].What, tt.in) {
			t.Errorf("%s: blocking %d, items %+v; want %d, one %s item with %q", tt.name, c.Blocking(), items, tt.blocking, tt.class, tt.in)
		}
	}
	res, err := Run(context.Background(), FromFile(writeFile(t, "k.csv", "Code\nP-1\np-1\n"), FileOptions{Keys: []string{"Code"}}))
	if err != nil {
		t.Fatal(err)
	}
	if c := &res.Sources[0].Columns[0]; c.Blocking() != 0 || len(c.CaseDuplicates) != 1 {
		t.Errorf("--key: blocking %d, case duplicates %+v; want 0 and one", c.Blocking(), c.CaseDuplicates)
	}
}

// writeFile writes text to a file name in a folder of its own.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
