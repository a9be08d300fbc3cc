package source

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/xuri/excelize/v2"
)

// sheetRead is everything a sheetStream gives for one input: the rows
// with their cells, and how it ended.
type sheetRead struct {
	rows []string
	end  string
}

func readSheet(s *sheetStream, limit int) sheetRead {
	var out sheetRead
	for i := 0; i < limit; i++ {
		n, cells, err := s.next()
		if err != nil {
			out.end = err.Error()
			// An error stays: the next call gives it again.
			if _, _, err2 := s.next(); err2 == nil || err2.Error() != err.Error() {
				out.end += fmt.Sprintf(" / then %v", err2)
			}
			return out
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d:", n)
		for _, c := range cells {
			if c.err != nil {
				fmt.Fprintf(&b, " %d!%s", c.col, c.err)
			} else {
				fmt.Fprintf(&b, " %d=%T(%#v)", c.col, c.val, c.val)
			}
		}
		out.rows = append(out.rows, b.String())
	}
	out.end = "limit"
	return out
}

// chunked delivers r's bytes in pieces of 1 to n bytes, to exercise the
// scanner's restarts at every boundary.
type chunked struct {
	r io.Reader
	n int
	i int
}

func (c *chunked) Read(p []byte) (int, error) {
	c.i++
	k := 1 + c.i%c.n
	if len(p) > k {
		p = p[:k]
	}
	return c.r.Read(p)
}

var (
	testSST    = sstOf("zero", "one_x000D_two", "  padded ")
	testDateXf = []bool{false, true, false}
)

// compareScanner reads xml with the scanner (whole, and in small pieces)
// and with encoding/xml alone, and fails on any difference.
func compareScanner(t *testing.T, xml string, date1904 bool) sheetRead {
	t.Helper()
	want := readSheet(newReferenceSheetStream(strings.NewReader(xml), testSST, testDateXf, date1904), 5000)
	for _, rd := range []struct {
		name string
		r    io.Reader
	}{
		{"whole", strings.NewReader(xml)},
		{"bytes", iotest.OneByteReader(strings.NewReader(xml))},
		{"pieces", &chunked{r: strings.NewReader(xml), n: 7}},
		{"data+err", iotest.DataErrReader(strings.NewReader(xml))},
	} {
		got := readSheet(newSheetStream(rd.r, testSST, testDateXf, date1904), 5000)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: scanner and encoding/xml differ on %q:\nscanner:  %q\nreference: %q", rd.name, xml, got, want)
		}
	}
	return want
}

const sheetHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
	`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><dimension ref="A1:C3"/><sheetData>`

var scannerCases = []struct {
	name, body string
	rows       int    // rows read before the end
	end        string // how it ends: "EOF" or part of the error
}{
	{"plain", `<row r="1" spans="1:3"><c r="A1" t="s"><v>0</v></c><c r="B1" t="inlineStr"><is><t>Name</t></is></c><c r="C1"><v>12.50</v></c></row></sheetData></worksheet>`, 1, "EOF"},
	{"entities", `<row r="1"><c t="inlineStr"><is><t xml:space="preserve"> a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#233;&#xE9;&#x1F600; </t></is></c><c t="str"><v>x&amp;y</v></c></row></sheetData>`, 1, "EOF"},
	{"prefixes", `<x:row r="1"><x:c r="A1" x:t="inlineStr"><x:is><x:t>p</x:t></x:is></x:c><x:c r="B1"><x:v>1E-3</x:v></x:c></x:row></x:sheetData>`, 1, "EOF"},
	{"self-closing", `<row r="1"/><row r="2"><c r="A2" s="1"/><c r="B2"><v>3</v></c><c r="C2"/></row><row r="3" spans="1:3"/></sheetData>`, 3, "EOF"},
	{"as Excel writes blanks", `<row r="2" spans="1:7" x14ac:dyDescent="0.25"><c r="A2" t="s"><v>0</v></c><c r="D2" s="1"><v>46336</v></c><c r="E2"><v>12.5</v></c></row><row r="4" spans="2:2" x14ac:dyDescent="0.25"><c r="B4" t="b"><v>1</v></c><c r="C4" s="2"/></row></sheetData>`, 2, "EOF"},
	{"no refs", `<row><c><v>1</v></c><c><v>2</v></c></row><row><c t="b"><v>1</v></c></row></sheetData>`, 2, "EOF"},
	{"formula", `<row r="1"><c r="A1"><f>SUM(B1:C1)</f><v>3</v></c><c r="B1"><f>1/0</f></c><c r="C1" t="e"><f>1/0</f><v>#DIV/0!</v></c></row></sheetData>`, 1, "EOF"},
	{"dates", `<row r="1"><c r="A1" s="1"><v>45292.75</v></c><c r="B1" t="d"><v>2024-02-29T10:30:00</v></c><c r="C1" s="1"><v>x</v></c></row></sheetData>`, 1, "EOF"},
	{"shared", `<row r="1"><c t="s"><v> 1 </v></c><c t="s"><v>2</v></c><c t="s"><v>9</v></c><c t="s"><v>+1</v></c></row></sheetData>`, 1, "EOF"},
	{"rich and phonetic", `<row r="1"><c t="inlineStr"><is><r><t>a</t></r><r><rPr/><t>b</t></r><rPh><t>x</t></rPh><phoneticPr/></is></c></row></sheetData>`, 1, "EOF"},
	{"nested v", `<row r="1"><c><v>1<x>2</x>3</v><v>4</v></c></row></sheetData>`, 1, "EOF"},
	{"comment and cdata", `<row r="1"><!-- a comment --><c r="A1" t="str"><v><![CDATA[<raw> & ]]></v></c></row><?pi x?><row r="2"><c><v>2</v></c></row></sheetData>`, 2, "EOF"},
	{"carriage return", "<row r=\"1\"><c t=\"str\"><v>a\r\nb\rc</v></c></row></sheetData>", 1, "EOF"},
	{"unicode", `<row r="1"><c t="inlineStr"><is><t>Zürich 東京 😀</t></is></c></row></sheetData>`, 1, "EOF"},
	{"odd spacing", "<row  r = '1' ><c\n r=\"A1\"\tt='str' ><v >x</v ></c ></row\n></sheetData >", 1, "EOF"},
	{"after sheetData", `<row r="1"><c><v>1</v></c></row></sheetData><mergeCells><mergeCell ref="A1:B1"/></mergeCells><row r="5"><c><v>1</v></c></row></worksheet>`, 1, "EOF"},
	{"no sheetData end", `<row r="1"><c><v>1</v></c></row></worksheet>`, 1, "EOF"},
	{"xmlns r attribute", `<row xmlns:r="urn:x"><c><v>1</v></c></row></sheetData>`, 0, "not a row number"},
	{"bad row number", `<row r="1"><c><v>1</v></c></row><row r="x"><c><v>1</v></c></row>`, 1, "not a row number"},
	{"row too big", `<row r="1048577"/>`, 0, "not a row number"},
	{"rows out of order", `<row r="2"/><row r="2"/>`, 1, "comes after row 2"},
	{"cell of another row", `<row r="1"><c r="A2"><v>1</v></c></row>`, 0, "not a cell of this row"},
	{"too many cells", `<row r="1"><c r="XFD1"><v>1</v></c><c><v>2</v></c></row>`, 0, "more than 16384 cells"},
	{"stray end tag", `<row r="1"><c r="A1"></v></c></row>`, 0, "unexpected </v>"},
	{"bad entity", `<row r="1"><c t="str"><v>a &nbsp; b</v></c></row>`, 0, "invalid character entity"},
	{"zero entity", `<row r="1"><c t="str"><v>&#0;</v></c></row>`, 0, "illegal character code"},
	{"surrogate entity", `<row r="1"><c t="str"><v>&#xD800;</v></c></row></sheetData>`, 1, "EOF"},
	{"huge entity", `<row r="1"><c t="str"><v>&#99999999999999999999;</v></c></row>`, 0, "invalid character entity"},
	{"invalid utf-8", "<row r=\"1\"><c t=\"str\"><v>a\xffb</v></c></row>", 0, "invalid UTF-8"},
	{"control character", "<row r=\"1\"><c t=\"str\"><v>a\x01b</v></c></row>", 0, "illegal character"},
	{"cdata end in text", `<row r="1"><c t="str"><v>a]]>b</v></c></row>`, 0, "unescaped ]]>"},
	{"unquoted attribute", `<row r=1><c><v>1</v></c></row>`, 0, "unquoted"},
	{"less-than in attribute", `<row r="1"><c r="A<1"><v>1</v></c></row>`, 0, "unescaped <"},
	{"truncated in cell", `<row r="1"><c r="A1"><v>1</v>`, 0, "ends inside cell A1"},
	{"truncated in row", `<row r="1"><c r="A1"><v>1</v></c>`, 0, "ends inside row 1"},
	{"truncated in tag", `<row r="1"><c r="A1"><v>1</v></c></ro`, 0, "unexpected EOF"},
	{"bad name", `<row r="1"><c r="A1"><1v>1</1v></c></row>`, 0, "invalid XML name: 1v"},
	{"two colons", `<row r="1"><a:b:c/></row>`, 0, "expected element name"},
	{"unknown type", `<row r="1"><c t="zz"><v>1</v></c><c t="b"><v>2</v></c><c t="e"><v>#N/A</v></c></row></sheetData>`, 1, "EOF"},
	{"doctype", `<!DOCTYPE x><row r="1"><c><v>1</v></c></row></sheetData>`, 1, "EOF"},
}

// TestSheetScannerAgainstXML reads each sheet with the byte scanner and
// with encoding/xml alone: the rows, cells and errors must be the same.
func TestSheetScannerAgainstXML(t *testing.T) {
	t.Parallel()
	for _, tc := range scannerCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := compareScanner(t, sheetHead+tc.body, false)
			if len(got.rows) != tc.rows {
				t.Errorf("%d rows, want %d: %q", len(got.rows), tc.rows, got.rows)
			}
			if !strings.Contains(got.end, tc.end) {
				t.Errorf("ends with %q, want %q", got.end, tc.end)
			}
		})
	}
}

// TestSheetScannerStaysFast checks the usual shapes of rows are read by
// the scanner itself: encoding/xml reads only the prologue up to the
// first row.
func TestSheetScannerStaysFast(t *testing.T) {
	t.Parallel()
	for _, tc := range scannerCases[:10] {
		s := newSheetStream(strings.NewReader(sheetHead+tc.body), testSST, testDateXf, false)
		got := readSheet(s, 100)
		if got.end != "EOF" || s.slowRuns != 1 {
			t.Errorf("%s: %d rows, ends %q, %d stretches read by encoding/xml, want 1", tc.name, len(got.rows), got.end, s.slowRuns)
		}
	}
}

// TestSheetScannerValues checks what the scanner makes of the cells
// itself, beyond agreeing with encoding/xml.
func TestSheetScannerValues(t *testing.T) {
	t.Parallel()
	s := newSheetStream(strings.NewReader(sheetHead+scannerCases[1].body), nil, nil, false)
	_, cells, err := s.next()
	if err != nil {
		t.Fatal(err)
	}
	want := []Cell{" a & b <c> \"d\" 'e' éé😀 ", "x&y"}
	if len(cells) != 2 || cells[0].val != want[0] || cells[1].val != want[1] {
		t.Fatalf("cells %+v, want %q", cells, want)
	}
}

// TestSheetScannerReadError passes the part's read error on, after the
// rows read before it, as encoding/xml did.
func TestSheetScannerReadError(t *testing.T) {
	t.Parallel()
	xml := sheetHead + strings.Repeat(`<row><c t="inlineStr"><is><t>abc</t></is></c></row>`, 3000)
	boom := errors.New("flate: corrupt input")
	for _, cut := range []int{len(sheetHead) + 10, len(xml) / 2, len(xml) - 3} {
		mk := func() io.Reader { return io.MultiReader(strings.NewReader(xml[:cut]), iotest.ErrReader(boom)) }
		want := readSheet(newReferenceSheetStream(mk(), nil, nil, false), 5000)
		got := readSheet(newSheetStream(mk(), nil, nil, false), 5000)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("cut at %d: scanner %d rows, %q; encoding/xml %d rows, %q", cut, len(got.rows), got.end, len(want.rows), want.end)
		}
		if !strings.Contains(got.end, "flate: corrupt input") || len(got.rows) == 0 && cut > len(sheetHead)+100 {
			t.Fatalf("cut at %d: %d rows, ends %q", cut, len(got.rows), got.end)
		}
	}
}

// TestSheetScannerLongRow reads a row longer than the scanner buffers;
// encoding/xml reads it, and the scanner goes on after it.
func TestSheetScannerLongRow(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", maxScanBytes)
	xml := sheetHead + `<row r="1"><c t="inlineStr"><is><t>` + long + `</t></is></c></row><row r="2"><c><v>2</v></c></row></sheetData>`
	got := readSheet(newSheetStream(strings.NewReader(xml), nil, nil, false), 10)
	if len(got.rows) != 2 || got.end != "EOF" || len(got.rows[0]) < maxScanBytes || got.rows[1] != `2: 0=source.Number("2")` {
		t.Fatalf("%d rows, ends %q", len(got.rows), got.end)
	}
}

// FuzzSheetScanner: on any worksheet XML, the byte scanner and encoding/xml
// give the same rows and the same error, and neither panics.
func FuzzSheetScanner(f *testing.F) {
	for _, tc := range scannerCases {
		f.Add(sheetHead+tc.body, false)
	}
	f.Add(`<row r="1"><c r="A1" t="inlineStr"><is><t>h</t></is></c></row><row r="2"><c r="A2" s="1"><v>60</v></c></row></sheetData>`, true)
	f.Fuzz(func(t *testing.T, xml string, date1904 bool) {
		compareScanner(t, xml, date1904)
	})
}

// TestSheetScannerExcelizeWorkbooks compares the scanner with encoding/xml
// on whole worksheets as excelize writes them: the stream writer's inline
// strings, and the ordinary writer's shared strings, formulas, styles and
// merged cells, with text that needs escaping.
func TestSheetScannerExcelizeWorkbooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	texts := []string{"plain", "a & b", "<tag>", `"quoted" 'single'`, " lead and trail ", "Zürich 東京 😀", "line\nbreak", "cr\r\nlf", "tab\there", "]]>", "_x000D_"}
	gen := func(row, col int) any {
		switch col {
		case 0:
			return texts[row%len(texts)]
		case 1:
			return float64(row) / 7
		case 2:
			return row%2 == 0
		case 3:
			return time.Date(2024, 1, 1+row%300, row%24, 0, 0, 0, time.UTC)
		}
		return row * 1000003
	}
	stream := filepath.Join(dir, "stream.xlsx")
	sf := excelize.NewFile()
	sw, err := sf.NewStreamWriter("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	for row := 1; row <= 3000; row++ {
		vals := make([]any, 5)
		for col := range vals {
			vals[col] = gen(row, col)
		}
		cell, _ := excelize.CoordinatesToCellName(1, row)
		if err := sw.SetRow(cell, vals); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := sf.SaveAs(stream); err != nil {
		t.Fatal(err)
	}
	f := excelize.NewFile()
	for row := 1; row <= 300; row++ {
		for col := 0; col < 5; col++ {
			cell, _ := excelize.CoordinatesToCellName(col+1, row)
			if err := f.SetCellValue("Sheet1", cell, gen(row, col)); err != nil {
				t.Fatal(err)
			}
		}
		cell, _ := excelize.CoordinatesToCellName(7, row)
		if err := f.SetCellFormula("Sheet1", cell, fmt.Sprintf("B%d*2", row)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.MergeCell("Sheet1", "H1", "J1"); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.xlsx")
	if err := f.SaveAs(plain); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{stream, plain} {
		wb, err := openWorkbook(p)
		if err != nil {
			t.Fatal(err)
		}
		part := func() io.Reader {
			rc, err := wb.open(wb.sheets[0].target)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rc.Close() })
			return rc
		}
		want := readSheet(newReferenceSheetStream(part(), wb.sst, wb.dateXf, wb.date1904), 5000)
		fast := newSheetStream(part(), wb.sst, wb.dateXf, wb.date1904)
		got := readSheet(fast, 5000)
		if !reflect.DeepEqual(got, want) {
			for i := range min(len(got.rows), len(want.rows)) {
				if got.rows[i] != want.rows[i] {
					t.Fatalf("%s: row %d:\nscanner:   %s\nreference: %s", p, i, got.rows[i], want.rows[i])
				}
			}
			t.Fatalf("%s: %d rows, %q; reference %d rows, %q", p, len(got.rows), got.end, len(want.rows), want.end)
		}
		if len(got.rows) < 300 || got.end != "EOF" {
			t.Fatalf("%s: %d rows, ends %q", p, len(got.rows), got.end)
		}
		if fast.slowRuns != 1 {
			t.Errorf("%s: %d stretches read by encoding/xml, want only the prologue", p, fast.slowRuns)
		}
		wb.close()
	}
}
