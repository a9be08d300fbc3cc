package source

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzCSV reads random bytes as a CSV file: it never panics, every error
// is a *Error naming the file (and a line once past the header), and every
// row has a line no smaller than the header's and as many cells as names.
func FuzzCSV(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n",
		"a;b\r\n\"x\ny\";2\r\n",
		"\xEF\xBB\xBFa,b\n1,\"2\"\"\"\n",
		"\xFF\xFEa\x00,\x00b\x00\n\x001\x00",
		"a,a\n",
		"a,,b\n",
		"a,b\n1,2,3\n\n,\n",
		"a,b\n\"open\n",
		"a\nb\"c\n",
		"a,b\ncaf\xe9,1\n",
	} {
		f.Add([]byte(s), byte(','), "")
	}
	f.Add([]byte("a\tb\n1\t2\n"), byte('\t'), "utf-16")
	f.Add([]byte("\xf9\xec\xe5\xed\n1\n"), byte(';'), "windows-1255")
	f.Fuzz(func(t *testing.T, data []byte, delim byte, enc string) {
		opts := Options{Delimiter: rune(delim), Encoding: enc}
		r, err := newCSVReader("f.csv", bytes.NewReader(data), opts)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != "f.csv" {
				t.Fatalf("open error %v is not a *Error for f.csv", err)
			}
			return
		}
		n := len(r.Header().Names)
		last := 0
		for i := 0; i < 10000; i++ {
			row, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var se *Error
				if !errors.As(err, &se) || se.File != "f.csv" || se.Line < 1 || !strings.HasPrefix(err.Error(), "f.csv:") {
					t.Fatalf("error %v has no location", err)
				}
				if !se.RowOnly {
					if _, err2 := r.Next(); err2 != err {
						t.Fatalf("final error not repeated: %v then %v", err, err2)
					}
					break
				}
			}
			if len(row.Cells) != n && err == nil {
				t.Fatalf("row has %d cells, header %d", len(row.Cells), n)
			}
			if err == nil && (row.Loc.Line <= last || row.Loc.Line < 2) {
				t.Fatalf("line %d after %d", row.Loc.Line, last)
			}
			if err == nil {
				last = row.Loc.Line
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzXLSXCells fuzzes what turns a stored cell into a value: the number
// normalisation (checked against the float it denotes), the date-format
// test and the serial-to-date conversion, and the worksheet XML parser fed
// one row built from the fuzzed value, type and format.
func FuzzXLSXCells(f *testing.F) {
	f.Add("12.1", "n", "0.00", 0)
	f.Add("1E-3", "", "General", 0)
	f.Add("45292.75", "n", "dd/mm/yyyy hh:mm", 0)
	f.Add("60", "n", "m/d/yy", 14)
	f.Add("#DIV/0!", "e", "", 0)
	f.Add("1", "b", "", 0)
	f.Add("0", "s", "", 0)
	f.Add("2024-02-29T10:30:00", "d", "", 0)
	f.Add("-1.5E+300", "n", `[h]:mm "h"`, 0)
	f.Add("<v>1</v></c><c r=\"ZZZZZ2\">", "str", "[Red]0;@", 22)
	f.Fuzz(func(t *testing.T, v, typ, code string, id int) {
		if n, err := normaliseNumber(v); err == nil {
			checkSameNumber(t, v, string(n))
		}
		date := isDateFormat(id, code)
		if tm, err := serialTime(v, id%2 == 0); err == nil && (tm.Year() < 1899 || tm.Year() > 9999) {
			t.Fatalf("serialTime(%q) = %v", v, tm)
		}
		xf := []bool{false, date}
		esc := func(s string) string {
			var b bytes.Buffer
			_ = xmlEscape(&b, s)
			return b.String()
		}
		row := `<row r="1"><c r="A1" t="inlineStr"><is><t>h</t></is></c></row><row r="2"><c r="A2" s="1" t="` + esc(typ) + `"><v>` + esc(v) + `</v></c></row></sheetData>`
		s := newSheetStream(strings.NewReader(row), sstOf("shared"), xf, false)
		if _, _, err := s.next(); err != nil {
			return // a fuzzed type can break the XML (an invalid character)
		}
		n, cells, err := s.next()
		if err != nil {
			return
		}
		if n != 2 || len(cells) > 1 {
			t.Fatalf("row %d cells %v", n, cells)
		}
		// Raw XML in a row never panics either.
		s = newSheetStream(strings.NewReader(`<row>`+v+`</row>`+typ), nil, xf, true)
		for i := 0; i < 100; i++ {
			if _, _, err := s.next(); err != nil {
				break
			}
		}
	})
}

// checkSameNumber verifies the plain form denotes the same value as the
// stored form, digit by digit: same sign, same significant digits, same
// magnitude, no exponent.
func checkSameNumber(t *testing.T, in, out string) {
	t.Helper()
	if strings.ContainsAny(out, "eE+") || out == "" {
		t.Fatalf("normaliseNumber(%q) = %q", in, out)
	}
	sig := func(s string) (string, int, bool) {
		s = strings.TrimSpace(s)
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimLeft(s, "+-")
		exp := 0
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			e := 0
			sign := 1
			rest := s[i+1:]
			if rest != "" && (rest[0] == '+' || rest[0] == '-') {
				if rest[0] == '-' {
					sign = -1
				}
				rest = rest[1:]
			}
			for _, c := range rest {
				e = e*10 + int(c-'0')
			}
			exp = sign * e
			s = s[:i]
		}
		ip, fp, _ := strings.Cut(s, ".")
		digits := ip + fp
		point := len(ip) + exp
		lead := len(digits) - len(strings.TrimLeft(digits, "0"))
		digits = strings.Trim(digits, "0")
		if digits == "" {
			return "0", 0, false
		}
		return digits, point - lead, neg
	}
	d1, m1, n1 := sig(in)
	d2, m2, n2 := sig(out)
	if d1 != d2 || m1 != m2 || n1 != n2 {
		t.Fatalf("normaliseNumber(%q) = %q: (%s,%d,%v) vs (%s,%d,%v)", in, out, d1, m1, n1, d2, m2, n2)
	}
}

func xmlEscape(w io.Writer, s string) error {
	return xml.EscapeText(w, []byte(s))
}

// FuzzXLSXWorkbook reads a workbook whose worksheet, shared strings and
// styles are fuzzed: it never panics, errors are *Error for the file, and
// rows come below the header in increasing order.
func FuzzXLSXWorkbook(f *testing.F) {
	f.Add(`<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="inlineStr"><is><t>B</t></is></c></row><row r="2"><c r="A2" s="1"><v>45292.5</v></c><c r="B2"><v>1E-3</v></c></row></sheetData>`,
		`<si><t>A</t></si>`, `<numFmts><numFmt numFmtId="164" formatCode="dd/mm/yyyy"/></numFmts><cellXfs><xf numFmtId="0"/><xf numFmtId="164"/></cellXfs>`, false, 1)
	f.Add(`<row r="3"><c r="C3" t="str"><v>x</v></c></row><row r="9"><c r="C9" t="e"><v>#N/A</v></c><c r="D9" t="b"><v>1</v></c></row></sheetData><mergeCells><mergeCell ref="C3:E3"/></mergeCells>`,
		``, `<cellXfs><xf numFmtId="14"/></cellXfs>`, true, 3)
	f.Add(`<row><c><v>1</v></c></row><row r="1048576"><c r="XFD1048576"><v>2</v></c></row></sheetData>`, `<si><r><t>a</t></r><rPh><t>b</t></rPh></si>`, ``, false, 0)
	f.Fuzz(func(t *testing.T, sheet, sst, styles string, d1904 bool, headerRow int) {
		var buf bytes.Buffer
		z := zip.NewWriter(&buf)
		put := func(name, body string) {
			w, err := z.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte(body))
		}
		pr := ""
		if d1904 {
			pr = `<workbookPr date1904="true"/>`
		}
		put("xl/workbook.xml", `<workbook>`+pr+`<sheets><sheet name="S" r:id="rId1"/></sheets></workbook>`)
		put("xl/_rels/workbook.xml.rels", `<Relationships><Relationship Id="rId1" Type="x/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="x/styles" Target="styles.xml"/><Relationship Id="rId3" Type="x/sharedStrings" Target="sharedStrings.xml"/></Relationships>`)
		put("xl/worksheets/sheet1.xml", `<worksheet><sheetData>`+sheet+`</worksheet>`)
		put("xl/sharedStrings.xml", `<sst>`+sst+`</sst>`)
		put("xl/styles.xml", `<styleSheet>`+styles+`</styleSheet>`)
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		wb, err := readWorkbook(zr)
		if err != nil {
			return // a damaged styles or shared strings part
		}
		r, err := newXLSXReader(Options{Name: "f.xlsx", HeaderRow: headerRow % 2000}, wb)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != "f.xlsx" || !strings.HasPrefix(err.Error(), "f.xlsx") {
				t.Fatalf("open error %v", err)
			}
			return
		}
		defer r.Close()
		last := 0
		for i := 0; i < 2000; i++ {
			row, err := r.Next()
			if err == io.EOF {
				break
			}
			var se *Error
			if err != nil && (!errors.As(err, &se) || se.File != "f.xlsx" || se.Sheet != "S") {
				t.Fatalf("error %v", err)
			}
			if err != nil && !se.RowOnly {
				break
			}
			if row.Loc.Line <= last || row.Loc.Sheet != "S" || len(row.Cells) != len(r.Header().Names) {
				t.Fatalf("row %+v after line %d", row, last)
			}
			last = row.Loc.Line
		}
	})
}
