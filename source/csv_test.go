package source

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"golang.org/x/text/encoding/charmap"
)

func utf16Bytes(s string, bigEndian, bom bool) []byte {
	var b []byte
	put := func(u uint16) {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	if bom {
		put(0xFEFF)
	}
	for _, u := range utf16.Encode([]rune(s)) {
		put(u)
	}
	return b
}

func encode(t *testing.T, cm *charmap.Charmap, s string) []byte {
	t.Helper()
	b, err := cm.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCSV(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []byte
		opts Options
		want string // dump of the rows
	}{
		{"plain", []byte("a,b\n1,2\n3,4\n"), Options{},
			"header [\"a\" \"b\"]\nf.csv:2 [\"1\" \"2\"]\nf.csv:3 [\"3\" \"4\"]\n"},
		{"no final newline, CRLF", []byte("a,b\r\n1,2\r\n3,4"), Options{},
			"header [\"a\" \"b\"]\nf.csv:2 [\"1\" \"2\"]\nf.csv:3 [\"3\" \"4\"]\n"},
		{"semicolon", []byte("a;b\n1,5;2\n"), Options{Delimiter: ';'},
			"header [\"a\" \"b\"]\nf.csv:2 [\"1,5\" \"2\"]\n"},
		{"tab", []byte("a\tb\n1\t2\n"), Options{Delimiter: '\t'},
			"header [\"a\" \"b\"]\nf.csv:2 [\"1\" \"2\"]\n"},
		{"quotes and embedded newlines: line is where the record starts", []byte("a,b\n\"x\ny\",\"say \"\"hi\"\"\"\n3,4\n"), Options{},
			"header [\"a\" \"b\"]\nf.csv:2 [\"x\\ny\" \"say \\\"hi\\\"\"]\nf.csv:4 [\"3\" \"4\"]\n"},
		{"empty strings stay empty strings, and so do the cells of a short row", []byte("a,b,c\n,,x\n1\n"), Options{},
			"header [\"a\" \"b\" \"c\"]\nf.csv:2 [\"\" \"\" \"x\"]\nf.csv:3 [\"1\" \"\" \"\"]\n"},
		{"header names are trimmed", []byte(" a , b\n1,2\n"), Options{},
			"header [\"a\" \"b\"]\nf.csv:2 [\"1\" \"2\"]\n"},
		{"trailing empty lines and delimiter-only lines are skipped", []byte("a,b\n1,2\n,\n\n,\n\n"), Options{},
			"header [\"a\" \"b\"]\nf.csv:2 [\"1\" \"2\"]\n"},
		{"empty extra fields are tolerated", []byte("a,b\n1,2,,\n"), Options{},
			"header [\"a\" \"b\"]\nf.csv:2 [\"1\" \"2\"]\n"},
		{"trailing empty header columns are dropped", []byte("a,b,,\n1,2,,\n3,4,5,\n"), Options{},
			"header [\"a\" \"b\"]\nf.csv:2 [\"1\" \"2\"]\nerror: f.csv:3: the row has 4 fields but the header has 2: remove the extra fields or add names to the header (a delimiter inside a value must be quoted)\n"},
		{"long row is a row error, reading goes on", []byte("a,b\n1,2,3\n4,5\n"), Options{},
			"header [\"a\" \"b\"]\nerror: f.csv:2: the row has 3 fields but the header has 2: remove the extra fields or add names to the header (a delimiter inside a value must be quoted)\nf.csv:3 [\"4\" \"5\"]\n"},
		{"utf-8 BOM is stripped", append([]byte("\xEF\xBB\xBF"), "קוד,שם\n1,בורג\n"...), Options{},
			"header [\"קוד\" \"שם\"]\nf.csv:2 [\"1\" \"בורג\"]\n"},
		{"utf-16 LE with BOM whatever the declared encoding", utf16Bytes("קוד,name\n1,בורג\n", false, true), Options{Encoding: "windows-1255"},
			"header [\"קוד\" \"name\"]\nf.csv:2 [\"1\" \"בורג\"]\n"},
		{"utf-16 BE with BOM", utf16Bytes("a,b\n1,é\n", true, true), Options{},
			"header [\"a\" \"b\"]\nf.csv:2 [\"1\" \"é\"]\n"},
		{"utf-16 without BOM is LE", utf16Bytes("a,b\n1,2\n", false, false), Options{Encoding: "UTF-16"},
			"header [\"a\" \"b\"]\nf.csv:2 [\"1\" \"2\"]\n"},
		{"utf8 spelled without dash", []byte("a\nü\n"), Options{Encoding: "UTF8"},
			"header [\"a\"]\nf.csv:2 [\"ü\"]\n"},
		{"invalid utf-8 names the line and the encoding option", []byte("a,b\n1,2\n3,caf\xe9\n"), Options{},
			"header [\"a\" \"b\"]\nf.csv:2 [\"1\" \"2\"]\nerror: f.csv:3: column 2 is not valid UTF-8: set the source's encoding (e.g. encoding: windows-1255 or windows-1252)\n"},
		{"bare quote", []byte("a,b\n1,12\" pipe\n"), Options{},
			"header [\"a\" \"b\"]\nerror: f.csv:2:5: a quote inside a field that is not quoted: quote the whole field and double the quote inside (\"12\"\" pipe\"), or set lazy_quotes: true on the source: bare \" in non-quoted-field\n"},
		{"unclosed quote across lines", []byte("a,b\n1,\"open\n2,3\n"), Options{},
			"header [\"a\" \"b\"]\nerror: f.csv:2: a quoted field of this record is not closed properly (the error shows at line 3, column 5): close it with a quote and double quotes inside it: extraneous or missing \" in quoted-field\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := newCSVReader("f.csv", bytes.NewReader(tt.in), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := dump(r); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestCSVCharmaps(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		enc  string
		cm   *charmap.Charmap
		text string
	}{
		{"windows-1255", charmap.Windows1255, "שלום"},
		{"cp1255", charmap.Windows1255, "₪ מחיר"},
		{"ISO-8859-8", charmap.ISO8859_8, "עברית"},
		{"Windows-1252", charmap.Windows1252, "Café €"},
		{"cp1252", charmap.Windows1252, "naïve"},
	} {
		t.Run(tt.enc, func(t *testing.T) {
			t.Parallel()
			in := append(encode(t, tt.cm, "name\n"), encode(t, tt.cm, tt.text+"\n")...)
			r, err := newCSVReader("f.csv", bytes.NewReader(in), Options{Encoding: tt.enc})
			if err != nil {
				t.Fatal(err)
			}
			row, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if row.Get("name") != tt.text {
				t.Errorf("got %q, want %q", row.Get("name"), tt.text)
			}
		})
	}
}

func TestCSVOpenErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		opts Options
		want string
		is   error
		line int
	}{
		{"empty file", "", Options{}, "f.csv: no header row: the file is empty; the first line must name the columns", ErrNoHeader, 0},
		{"only blank lines", "\n\n\n", Options{}, "f.csv: no header row: the file is empty; the first line must name the columns", ErrNoHeader, 0},
		{"duplicate names", "a,b,a,b\n", Options{}, `f.csv:1: the header names columns twice: "a" (column 1 and column 3), "b" (column 2 and column 4); make every name unique`, nil, 1},
		{"empty names", "a,,c,,e\n", Options{}, "f.csv:1: the header has no name for column 2, column 4: name every column", nil, 1},
		{"empty header line", ",,\n1,2\n", Options{}, "f.csv:1: the header has no name for column 1: name every column", nil, 1},
		{"semicolon file read with comma", "code;name;price\n", Options{}, "", nil, 0},
		{"unknown encoding", "a\n", Options{Encoding: "klingon"}, `f.csv: unknown encoding "klingon": use utf-8, utf-16, utf-16le, utf-16be, windows-1255, windows-1252, iso-8859-8 or iso-8859-1`, nil, 0},
		{"bad delimiter", "a\n", Options{Delimiter: '"'}, `f.csv: delimiter '"' cannot be used: choose one such as ",", ";" or "\t"`, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := newCSVReader("f.csv", strings.NewReader(tt.in), tt.opts)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if got := r.Header().Names; len(got) != 1 || got[0] != "code;name;price" {
					t.Errorf("header %q", got)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
			var se *Error
			if !errors.As(err, &se) || se.File != "f.csv" || se.Line != tt.line {
				t.Errorf("error %#v: want *Error at f.csv line %d", err, tt.line)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tsv := write("x.tsv", "a\tb\n1\t2\n")
	txt := write("x.TXT", "a;b\n1;2\n")
	ods := write("x.ods", "")
	r, err := Open(Options{Name: "x.tsv", Path: tsv})
	if err != nil {
		t.Fatal(err)
	}
	if got := dump(r); got != "header [\"a\" \"b\"]\nx.tsv:2 [\"1\" \"2\"]\n" {
		t.Errorf(".tsv defaults to tab: %s", got)
	}
	r.Close()
	r, err = Open(Options{Name: "x.TXT", Path: txt, Delimiter: ';'})
	if err != nil {
		t.Fatal(err)
	}
	if got := dump(r); got != "header [\"a\" \"b\"]\nx.TXT:2 [\"1\" \"2\"]\n" {
		t.Errorf(".TXT is CSV: %s", got)
	}
	r.Close()

	_, err = Open(Options{Name: "x.ods", Path: ods})
	if !errors.Is(err, ErrUnknownFormat) || err.Error() != `x.ods: unknown source format ".ods": use a .csv, .txt, .tsv, .xlsx or .xlsm file (save .xls and .ods files as .xlsx)` {
		t.Errorf("unknown format: %v", err)
	}
	_, err = Open(Options{Name: "data/missing.csv", Path: filepath.Join(dir, "missing.csv")})
	if !errors.Is(err, os.ErrNotExist) && (err == nil || !strings.HasPrefix(err.Error(), "data/missing.csv: cannot open: the file does not exist (looked for ")) {
		t.Errorf("missing file: %v", err)
	}
	_, err = Open(Options{Name: "data/missing.xlsx", Path: filepath.Join(dir, "missing.xlsx")})
	if err == nil || !strings.HasPrefix(err.Error(), "data/missing.xlsx: cannot open: the file does not exist (looked for ") {
		t.Errorf("missing workbook: %v", err)
	}
	bad := write("bad.xlsx", "not a zip")
	_, err = Open(Options{Name: "bad.xlsx", Path: bad})
	if err == nil || !strings.HasPrefix(err.Error(), "bad.xlsx: not a readable .xlsx workbook") {
		t.Errorf("bad workbook: %v", err)
	}
}

func TestLocation(t *testing.T) {
	t.Parallel()
	csvLoc := Location{File: "parts.csv", Line: 42}
	xl := Location{File: "customers.xlsx", Sheet: "Customers", Line: 17}
	h := NewHeader([]string{"Code", "Name"})
	h.Columns = []int{1, 2} // the header starts in column B
	for _, tt := range []struct{ got, want string }{
		{csvLoc.String(), "parts.csv:42"},
		{csvLoc.Cell(2), "parts.csv:42"},
		{xl.String(), "customers.xlsx!Customers!17"},
		{xl.Cell(2), "customers.xlsx!Customers!C17"},
		{xl.Cell(27), "customers.xlsx!Customers!AB17"},
		{Location{File: "f.csv"}.String(), "f.csv"},
		{Row{Loc: xl, Header: h}.CellRef("Name"), "customers.xlsx!Customers!C17"},
		{Row{Loc: xl, Header: h}.CellRef("Nope"), "customers.xlsx!Customers!17"},
		{Row{Loc: csvLoc, Header: NewHeader([]string{"a"})}.CellRef("a"), "parts.csv:42"},
		{ColumnName(0) + ColumnName(25) + ColumnName(26) + ColumnName(701) + ColumnName(702) + ColumnName(16383), "AZAAZZAAAXFD"},
		{(&Error{File: "parts.csv", Line: 42, Err: errors.New("x")}).Error(), "parts.csv:42: x"},
		{(&Error{File: "c.xlsx", Sheet: "S", Line: 17, Cell: "C17", Err: errors.New("x")}).Error(), "c.xlsx!S!C17: x"},
		{(&Error{File: "c.xlsx", Sheet: "S", Line: 17, Err: errors.New("x")}).Error(), "c.xlsx!S!17: x"},
		{(&Error{File: "c.xlsx", Sheet: "S", Err: errors.New("x")}).Error(), "c.xlsx!S: x"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	for _, ref := range []string{"C17", "c17", "XFD1048576", "A1"} {
		c, r, ok := cellIndex(ref)
		if !ok || ColumnName(c)+strconv.Itoa(r) != strings.ToUpper(ref) {
			t.Errorf("cellIndex(%q) = %d, %d, %v", ref, c, r, ok)
		}
	}
	for _, ref := range []string{"", "17", "C0", "C-1", "C+1", "C1x", "Ä1"} {
		if _, _, ok := cellIndex(ref); ok {
			t.Errorf("cellIndex(%q) accepted", ref)
		}
	}
}

// TestCSVRowsKept checks a row stays intact after later rows are read:
// the transform keeps rows for its reports, and encoding/csv reuses its
// record slice.
func TestCSVRowsKept(t *testing.T) {
	t.Parallel()
	r, err := newCSVReader("f.csv", strings.NewReader("a,b\n1,2\n3,4\n5,6\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var kept []Row
	for {
		row, err := r.Next()
		if err != nil {
			break
		}
		kept = append(kept, row)
	}
	if got := cells(kept[0].Cells) + cells(kept[1].Cells) + cells(kept[2].Cells); got != `["1" "2"]["3" "4"]["5" "6"]` {
		t.Errorf("kept rows = %s", got)
	}
}
