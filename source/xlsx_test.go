package source

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// book describes a workbook written part by part, so a test controls every
// byte Excel could have written: cell types, styles, formulas' cached
// values, the 1904 date system, merges, huge dimensions.
type book struct {
	sheets   []string // names; sheet i's XML is sheetXML[i]
	sheetXML []string // the <sheetData> content, plus anything after it
	sst      []string // raw <si> contents
	numFmts  string   // <numFmt> elements
	xfs      []int    // numFmtId of each cellXfs entry
	date1904 bool
}

func (b book) write(t testing.TB, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	put := func(name, body string) {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(withDecl(body))); err != nil {
			t.Fatal(err)
		}
	}
	put("[Content_Types].xml", `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`)
	put("_rels/.rels", `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`)
	var sheets, rels strings.Builder
	for i, name := range b.sheets {
		fmt.Fprintf(&sheets, `<sheet name=%q sheetId="%d" r:id="rId%d"/>`, name, i+1, i+1)
		fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet%d.xml"/>`, i+1, i+1)
		put(fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1), `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:XFD1048576"/><sheetData>`+b.sheetXML[i]+`</worksheet>`)
	}
	rels.WriteString(`<Relationship Id="rIdS" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>`)
	rels.WriteString(`<Relationship Id="rIdT" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="/xl/sharedStrings.xml"/>`)
	pr := ""
	if b.date1904 {
		pr = `<workbookPr date1904="1"/>`
	}
	put("xl/workbook.xml", `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">`+pr+`<sheets>`+sheets.String()+`</sheets></workbook>`)
	put("xl/_rels/workbook.xml.rels", `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`+rels.String()+`</Relationships>`)
	var xfs strings.Builder
	for _, id := range append([]int{0}, b.xfs...) {
		fmt.Fprintf(&xfs, `<xf numFmtId="%d"/>`, id)
	}
	put("xl/styles.xml", `<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts>`+b.numFmts+`</numFmts><cellXfs>`+xfs.String()+`</cellXfs></styleSheet>`)
	var sst strings.Builder
	for _, s := range b.sst {
		sst.WriteString("<si>" + s + "</si>")
	}
	put("xl/sharedStrings.xml", `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" uniqueCount="`+fmt.Sprint(len(b.sst))+`">`+sst.String()+`</sst>`)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func withDecl(s string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" + s
}

// rowsXML closes sheetData after the rows given.
func rowsXML(rows ...string) string { return strings.Join(rows, "") + "</sheetData>" }

func openBook(t *testing.T, b book, opts Options) (Reader, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.xlsx")
	b.write(t, p)
	opts.Name, opts.Path = "c.xlsx", p
	return Open(opts)
}

const hdr = `<row r="1"><c r="A1" t="inlineStr"><is><t>A</t></is></c><c r="B1" t="inlineStr"><is><t>B</t></is></c></row>`

func TestXLSXCells(t *testing.T) {
	t.Parallel()
	// Style 1: built-in date 14; 2: custom date; 3: custom number with a
	// quoted d; 4: elapsed hours; 5: built-in 22 (date time); 6: text.
	base := book{
		sheets:  []string{"S"},
		sst:     []string{"<t>shared</t>", `<r><t>rich </t></r><r><t>text</t></r><rPh><t>ふりがな</t></rPh>`, "<t>line_x000D_break</t>"},
		numFmts: `<numFmt numFmtId="164" formatCode="dd/mm/yyyy"/><numFmt numFmtId="165" formatCode="0.00&quot; d&quot;"/><numFmt numFmtId="166" formatCode="[h]:mm"/>`,
		xfs:     []int{14, 164, 165, 166, 22, 49},
	}
	tests := []struct {
		name string
		row  string
		want string
	}{
		{"numbers exact", `<c r="A2"><v>12.1</v></c><c r="B2" t="n"><v>1E-3</v></c>`, `[N:12.1 N:0.001]`},
		{"big and negative exponents", `<c r="A2"><v>1.2345678901234567E+20</v></c><c r="B2"><v>-2.5E-7</v></c>`, `[N:123456789012345670000 N:-0.00000025]`},
		{"shared and rich strings, phonetics dropped", `<c r="A2" t="s"><v>0</v></c><c r="B2" t="s"><v>1</v></c>`, `["shared" "rich text"]`},
		{"OOXML escapes", `<c r="A2" t="s"><v>2</v></c>`, `["line\rbreak" ""]`},
		{"inline string", `<c r="A2" t="inlineStr"><is><t xml:space="preserve"> x </t></is></c>`, `[" x " ""]`},
		{"booleans", `<c r="A2" t="b"><v>1</v></c><c r="B2" t="b"><v>0</v></c>`, `[B:true B:false]`},
		{"built-in date", `<c r="A2" s="1"><v>45292</v></c><c r="B2" s="5"><v>45292.75</v></c>`, `[T:2024-01-01T00:00:00.000Z T:2024-01-01T18:00:00.000Z]`},
		{"custom date format", `<c r="A2" s="2"><v>1</v></c><c r="B2" s="2"><v>61</v></c>`, `[T:1900-01-01T00:00:00.000Z T:1900-03-01T00:00:00.000Z]`},
		{"quoted d is not a date, elapsed hours are", `<c r="A2" s="3"><v>3.5</v></c><c r="B2" s="4"><v>0.5</v></c>`, `[N:3.5 T:1899-12-31T12:00:00.000Z]`},
		{"text format keeps a number a number", `<c r="A2" s="6"><v>7</v></c>`, `[N:7 ""]`},
		{"formula cached values keep their type", `<c r="A2"><f>1+1</f><v>2</v></c><c r="B2" t="str"><f>"a"&amp;"b"</f><v>ab</v></c>`, `[N:2 "ab"]`},
		{"ISO date cell", `<c r="A2" t="d"><v>2024-02-29T10:30:00</v></c>`, `[T:2024-02-29T10:30:00.000Z ""]`},
		{"formatted empty cells are blank", `<c r="A2" s="1"/><c r="B2" t="s"><v>0</v></c>`, `["" "shared"]`},
		{"cells without r follow each other", `<c><v>1</v></c><c><v>2</v></c>`, `[N:1 N:2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := base
			b.sheetXML = []string{rowsXML(hdr, `<row r="2">`+tt.row+`</row>`)}
			r, err := openBook(t, b, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			want := "header [\"A\" \"B\"]\nc.xlsx!S!2 " + tt.want + "\n"
			if got := dump(r); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestXLSX1904(t *testing.T) {
	t.Parallel()
	b := book{sheets: []string{"S"}, xfs: []int{14}, date1904: true,
		sheetXML: []string{rowsXML(hdr, `<row r="2"><c r="A2" s="1"><v>0</v></c><c r="B2" s="1"><v>43830</v></c></row>`)}}
	r, err := openBook(t, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := "header [\"A\" \"B\"]\nc.xlsx!S!2 [T:1904-01-01T00:00:00.000Z T:2024-01-01T00:00:00.000Z]\n"
	if got := dump(r); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestXLSXRowErrors(t *testing.T) {
	t.Parallel()
	b := book{sheets: []string{"Customers"}, xfs: []int{14},
		sheetXML: []string{rowsXML(hdr,
			`<row r="2"><c r="A2" t="e"><f>1/0</f><v>#DIV/0!</v></c><c r="B2"><v>1</v></c></row>`,
			`<row r="3"><c r="A3" t="e"><v>#N/A</v></c></row>`,
			`<row r="4"><c r="A4"><v>4</v></c><c r="D4" t="inlineStr"><is><t>note</t></is></c></row>`,
			`<row r="5"><c r="B5" s="1"><v>60</v></c></row>`,
			`<row r="6"><c r="A6"><f>A5*2</f></c></row>`,
			`<row r="7"><c r="A7" t="s"><v>9</v></c></row>`,
			`<row r="8"><c r="A8"><v>x1</v></c></row>`,
			`<row r="9"><c r="A9"><v>9</v></c><c r="C9" s="1"/></row>`,
		)}}
	r, err := openBook(t, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := `header ["A" "B"]
error: c.xlsx!Customers!A2: the formula's cached value is #DIV/0!: correct the formula or replace it by a value
error: c.xlsx!Customers!A3: the cell holds the error #N/A: correct it
error: c.xlsx!Customers!D4: D4: a value in a column without a header: name the column in row 1 or clear the cell
error: c.xlsx!Customers!B5: 60 is 29 February 1900, a day that does not exist (Excel's 1900 leap-year bug): correct the date
error: c.xlsx!Customers!A6: the formula has no saved value: open the workbook in Excel, let it calculate and save it
error: c.xlsx!Customers!A7: refers to shared string "9", which the workbook does not have: the file is damaged; open and save it in Excel
error: c.xlsx!Customers!A8: "x1" is not a number
c.xlsx!Customers!9 [N:9 ""]
`
	if got := dump(r); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// The row comes with the error, as far as it could be read: the cell in
	// error is blank.
	r2, _ := openBook(t, b, Options{})
	defer r2.Close()
	row, err := r2.Next()
	var se *Error
	if !errors.As(err, &se) || !se.RowOnly || se.Cell != "A2" || se.Line != 2 || se.Sheet != "Customers" {
		t.Fatalf("error %#v", err)
	}
	if row.Loc.Line != 2 || row.Get("B") != Number("1") || row.Get("A") != "" {
		t.Errorf("row with the error = %+v", row)
	}
}

func TestXLSXHeader(t *testing.T) {
	t.Parallel()
	is := func(ref, s string) string {
		return fmt.Sprintf(`<c r="%s" t="inlineStr"><is><t>%s</t></is></c>`, ref, s)
	}
	tests := []struct {
		name   string
		sheets []string
		xml    string
		opts   Options
		want   string // dump, or the error
	}{
		{"header_row with rows above ignored", []string{"S"},
			rowsXML(`<row r="1">`+is("A1", "Title")+`</row>`, `<row r="3">`+is("A3", "Code")+is("B3", "Name")+`</row>`, `<row r="4">`+is("A4", "x")+`</row>`),
			Options{HeaderRow: 3}, "header [\"Code\" \"Name\"]\nc.xlsx!S!4 [\"x\" \"\"]\n"},
		{"header not in column A keeps sheet columns", []string{"S"},
			rowsXML(`<row r="1">`+is("C1", "Code")+is("D1", "Name")+`</row>`, `<row r="2">`+is("D2", "y")+`</row>`),
			Options{}, "header [\"Code\" \"Name\"]\nc.xlsx!S!2 [\"\" \"y\"]\n"},
		{"merged header repeats with a suffix", []string{"S"},
			rowsXML(`<row r="1">`+is("A1", "Code")+is("B1", "Amount")+`<c r="C1"/><c r="D1"/></row>`, `<row r="2"><c r="A2"><v>1</v></c><c r="B2"><v>2</v></c><c r="C2"><v>3</v></c><c r="D2"><v>4</v></c></row>`) + `<mergeCells count="1"><mergeCell ref="B1:D1"/></mergeCells>`,
			Options{}, "header [\"Code\" \"Amount\" \"Amount_2\" \"Amount_3\"]\nc.xlsx!S!2 [N:1 N:2 N:3 N:4]\n"},
		{"vertical merge from above the header row", []string{"S"},
			rowsXML(`<row r="1">`+is("A1", "Code")+`</row>`, `<row r="2">`+is("B2", "Name")+`</row>`, `<row r="3">`+is("A3", "a")+is("B3", "b")+`</row>`) + `<x:mergeCells xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:mergeCell ref="A1:A2"/></x:mergeCells>`,
			Options{HeaderRow: 2}, "header [\"Code\" \"Name\"]\nc.xlsx!S!3 [\"a\" \"b\"]\n"},
		{"empty rows everywhere are skipped, empty row 1048576 too", []string{"S"},
			rowsXML(hdr, `<row r="2" s="1" customFormat="1"/>`, `<row r="3"><c r="A3"><v>3</v></c></row>`, `<row r="4"><c r="A4" s="1"/><c r="B4" t="inlineStr"><is><t>  </t></is></c></row>`, `<row r="1048576"><c r="XFD1048576" s="2"/></row>`),
			Options{}, "header [\"A\" \"B\"]\nc.xlsx!S!3 [N:3 \"\"]\n"},
		{"named sheet", []string{"One", "Two"}, "", Options{Sheet: "Two"}, "header [\"Second\"]\nc.xlsx!Two!2 [\"2\"]\n"},
		{"first sheet by default", []string{"One", "Two"}, "", Options{}, "header [\"First\"]\nc.xlsx!One!2 [\"1\"]\n"},
		{"unknown sheet", []string{"Customers", "Parts"}, "", Options{Sheet: "customer"},
			`error: c.xlsx: the workbook has no sheet "customer"; it has "Customers", "Parts"; did you mean "Customers"?`},
		{"empty sheet", []string{"S"}, rowsXML(), Options{}, "error: c.xlsx!S: no header row: the sheet is empty"},
		{"empty header row", []string{"S"}, rowsXML(`<row r="2">` + is("A2", "x") + `</row>`), Options{},
			"error: c.xlsx!S!1: no header row: row 1 is empty; the first row with values is 2: set header_row: 2"},
		{"header row past the data", []string{"S"}, rowsXML(hdr), Options{HeaderRow: 5},
			"error: c.xlsx!S: no header row: the sheet has no values in row 5 or below; set header_row to the row that names the columns"},
		{"gap in the header", []string{"S"}, rowsXML(`<row r="1">` + is("A1", "a") + is("C1", "c") + is("E1", "c") + `</row>`), Options{},
			`error: c.xlsx!S!1: the header has no name for column B, column D: name every column`},
		{"duplicate header", []string{"S"}, rowsXML(`<row r="1">` + is("A1", "a") + is("B1", "b") + is("C1", "a") + `</row>`), Options{},
			`error: c.xlsx!S!1: the header names columns twice: "a" (column A and column C); make every name unique`},
		{"damaged XML", []string{"S"}, `<row r="1">` + is("A1", "a") + `</row><row r="2"><c r="A2"><v>1</v></c>`, Options{},
			"header [\"a\"]\nerror: c.xlsx!S: the worksheet ends inside row 2: the file is truncated; save it again from Excel\n"},
		{"rows out of order", []string{"S"}, rowsXML(`<row r="2">`+is("A2", "a")+`</row>`, `<row r="1">`+is("A1", "b")+`</row>`), Options{HeaderRow: 2},
			"header [\"a\"]\nerror: c.xlsx!S: row 1 comes after row 2: the worksheet is damaged; open and save it in Excel\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := book{sheets: tt.sheets, xfs: []int{14, 0}}
			for i := range tt.sheets {
				x := tt.xml
				if x == "" {
					x = rowsXML(`<row r="1">`+is("A1", []string{"First", "Second", "Third"}[i])+`</row>`, `<row r="2">`+is("A2", fmt.Sprint(i+1))+`</row>`)
				}
				b.sheetXML = append(b.sheetXML, x)
			}
			r, err := openBook(t, b, tt.opts)
			var got string
			if err != nil {
				got = "error: " + err.Error()
				var se *Error
				if !errors.As(err, &se) || se.File != "c.xlsx" {
					t.Errorf("error %#v is not a *Error for c.xlsx", err)
				}
			} else {
				got = dump(r)
				r.Close()
			}
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestXLSXExcelize reads what excelize writes, the way Excel does it:
// shared strings, styles with date formats, merges, formulas.
func TestXLSXExcelize(t *testing.T) {
	t.Parallel()
	f := excelize.NewFile()
	defer f.Close()
	const sh = "Orders"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.SetSheetName("Sheet1", sh))
	must(f.SetSheetRow(sh, "B2", &[]any{"Order", "Date", "Qty", "Price", "Paid"}))
	must(f.MergeCell(sh, "D2", "E2"))
	date := time.Date(2024, 3, 15, 9, 30, 0, 0, time.UTC)
	must(f.SetSheetRow(sh, "B3", &[]any{"SO-1", date, 3, 12.1, true}))
	must(f.SetSheetRow(sh, "B5", &[]any{"SO-2", nil, 1e-3, nil, false}))
	custom := "d mmm yyyy"
	st, err := f.NewStyle(&excelize.Style{CustomNumFmt: &custom})
	must(err)
	must(f.SetCellStyle(sh, "C5", "C5", st))
	must(f.SetCellValue(sh, "C5", 45000))
	// Excel leaves formatted cells far away: they must cost nothing.
	must(f.SetCellStyle(sh, "A100000", "A100000", st))
	p := filepath.Join(t.TempDir(), "orders.xlsm")
	must(f.SaveAs(p))

	r, err := Open(Options{Name: "orders.xlsx", Path: p, HeaderRow: 2}) // .xlsm reads as a workbook
	must(err)
	defer r.Close()
	want := `header ["Order" "Date" "Qty" "Qty_2" "Paid"]
orders.xlsx!Orders!3 ["SO-1" T:2024-03-15T09:30:00.000Z N:3 N:12.1 B:true]
orders.xlsx!Orders!5 ["SO-2" T:2023-03-15T00:00:00.000Z N:0.001 "" B:false]
`
	if got := dump(r); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := r.Header().Columns; fmt.Sprint(got) != "[1 2 3 4 5]" {
		t.Errorf("Columns = %v", got)
	}
	row := Row{Loc: Location{File: "orders.xlsx", Sheet: sh, Line: 3}, Header: r.Header()}
	if got := row.CellRef("Qty"); got != "orders.xlsx!Orders!D3" {
		t.Errorf("CellRef = %s", got)
	}
}

// TestFindElement puts the merged ranges at every offset around the
// scanner's 64 KiB chunks, and decoys that are not the element.
func TestFindElement(t *testing.T) {
	t.Parallel()
	for _, pad := range []int{0, 1, 100, 65536 - 12, 65536 - 11, 65536 - 5, 65536, 65536 + 3, 2*65536 - 7} {
		for _, tag := range []string{"<mergeCells count=\"1\">", "<x:mergeCells>"} {
			in := "<t>mergeCells</t><mergeCellsX/>" + strings.Repeat("a", pad) + tag + "<mergeCell ref=\"A1:B1\"/>"
			rd, err := findElement(strings.NewReader(in), "mergeCells")
			if err != nil || rd == nil {
				t.Fatalf("pad %d %s: %v, %v", pad, tag, rd, err)
			}
			b := new(strings.Builder)
			if _, err := io.Copy(b, rd); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(b.String(), tag) {
				t.Errorf("pad %d: reader starts with %.30q", pad, b.String())
			}
		}
	}
	if rd, err := findElement(strings.NewReader("<sheetData/><t>mergeCells</t>"), "mergeCells"); rd != nil || err != nil {
		t.Errorf("found a decoy: %v %v", rd, err)
	}
}

func TestXLSXTypedHeader(t *testing.T) {
	t.Parallel()
	b := book{sheets: []string{"S"}, xfs: []int{14},
		sheetXML: []string{rowsXML(`<row r="1"><c r="A1"><v>2024</v></c><c r="B1" t="b"><v>1</v></c><c r="C1" s="1"><v>45292</v></c></row>`, `<row r="2"><c r="A2"><v>1</v></c></row>`)}}
	r, err := openBook(t, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := fmt.Sprint(r.Header().Names); got != "[2024 TRUE 2024-01-01]" {
		t.Errorf("header = %s", got)
	}
}

// TestXLSXZipBomb: a sheet part whose header says it inflates to 8 GiB is
// refused before anything is inflated, with a message that says why. (It
// used to be streamed until the data ran out: "unexpected EOF" at best,
// gigabytes of XML read at worst.)
func TestXLSXZipBomb(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.xlsx")
	book{sheets: []string{"S"}, sheetXML: []string{rowsXML(hdr)}}.write(t, good)
	zr, err := zip.OpenReader(good)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	bombed := ""
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "xl/worksheets/") && bombed == "" {
			bombed = f.Name
			var raw bytes.Buffer
			fw, _ := flate.NewWriter(&raw, flate.BestCompression)
			fw.Write(bytes.Repeat([]byte("<"), 1<<20))
			fw.Close()
			w, err := zw.CreateRaw(&zip.FileHeader{Name: f.Name, Method: zip.Deflate,
				CompressedSize64: uint64(raw.Len()), UncompressedSize64: 8 << 30})
			if err != nil {
				t.Fatal(err)
			}
			w.Write(raw.Bytes())
			continue
		}
		w, _ := zw.Create(f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(w, rc)
		rc.Close()
	}
	zw.Close()
	if bombed == "" {
		t.Fatal("the test book has no worksheet part")
	}
	bomb := filepath.Join(dir, "bomb.xlsx")
	if err := os.WriteFile(bomb, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r, err := Open(Options{Name: "bomb.xlsx", Path: bomb})
	if err == nil {
		r.Close()
		t.Fatal("a zip bomb was opened")
	}
	for _, want := range []string{"bomb.xlsx", "inflates to 8589934592 bytes, more than the limit of", "zip bomb"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing the bomb took %v", d)
	}
}

// TestXLSXSharedStringsBudget: a small workbook with millions of empty
// shared strings is refused once they pass the memory budget, with a
// message that names the part and says what to do, whether the header or
// a later row is what needs them; a normal workbook under the same budget
// reads, and the table is read only as far as the cells refer (a header of
// inline strings opens without it). Not parallel: it lowers the package's
// budget for its own duration.
func TestXLSXSharedStringsBudget(t *testing.T) {
	old := maxSharedStringBytes
	maxSharedStringBytes = 1 << 20
	defer func() { maxSharedStringBytes = old }()
	dir := t.TempDir()
	// refers is a header row, or a data row, whose cell A refers to shared string i.
	refers := func(row, i int) string {
		return fmt.Sprintf(`<row r="%d"><c r="A%d" t="s"><v>%d</v></c><c r="B%d" t="inlineStr"><is><t>B</t></is></c></row>`, row, row, i, row)
	}
	ok := filepath.Join(dir, "ok.xlsx")
	book{sheets: []string{"S"}, sheetXML: []string{rowsXML(refers(1, 0), refers(2, 1))}, sst: []string{"<t>a</t>", "<t>b</t>"}}.write(t, ok)
	r, err := Open(Options{Name: "ok.xlsx", Path: ok})
	if err != nil {
		t.Fatalf("a small workbook: %v", err)
	}
	if got := dump(r); got != "header [\"a\" \"B\"]\nok.xlsx!S!2 [\"b\" \"B\"]\n" {
		t.Errorf("a small workbook read\n%s", got)
	}
	r.Close()
	empties := make([]string, 300_000) // 300,000 × 4 bytes of offsets, growing
	long := []string{"<t>" + strings.Repeat("x", 2<<20) + "</t>"}
	for _, tc := range []struct {
		name   string
		sst    []string
		header string // refers to the strings, or not
		row    string
	}{
		{"empties.xlsx", empties, refers(1, len(empties)-1), ""},
		{"long.xlsx", long, refers(1, 0), ""},
		{"late.xlsx", empties, hdr, refers(2, len(empties)-1)},
	} {
		path := filepath.Join(dir, tc.name)
		book{sheets: []string{"S"}, sheetXML: []string{rowsXML(tc.header, tc.row)}, sst: tc.sst}.write(t, path)
		r, err := Open(Options{Name: tc.name, Path: path})
		if err == nil {
			// The header needed none of them: the row that does fails the sheet.
			_, err = r.Next()
			r.Close()
			var se *Error
			if tc.row == "" || errors.As(err, &se) && se.RowOnly {
				t.Fatalf("%s: read, or a row error only: %v", tc.name, err)
			}
		}
		for _, want := range []string{tc.name, "sharedStrings.xml", "the shared strings need more than 1 MiB of memory", "save it again"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, want)
			}
		}
	}
}
