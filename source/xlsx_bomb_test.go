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
)

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
