package sourcetest

import (
	"archive/zip"
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/source"
)

// WriteXLSXShared writes a large workbook the way Excel saves one: the
// header cols in row 1 and rows rows of text below, every text in the
// shared strings (each distinct text once), no cell for an empty text.
// Unlike WriteWorkbook it streams the sheet through a temporary file, so a
// million rows need no more memory than the table of distinct texts.
func WriteXLSXShared(path string, rows int, cols []string, gen func(row, col int) string) (err error) {
	tmp, err := os.CreateTemp("", "sheet-*.xml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	sst := &sharedStrings{index: map[string]int{}}
	sw := bufio.NewWriterSize(tmp, 256<<10)
	writeRow := func(r int, cell func(c int) string) {
		fmt.Fprintf(sw, `<row r="%d" spans="1:%d">`, r, len(cols))
		for c := range cols {
			if v := cell(c); v != "" {
				fmt.Fprintf(sw, `<c r="%s%d" t="s"><v>%d</v></c>`, source.ColumnName(c), r, sst.add(v))
			}
		}
		sw.WriteString(`</row>`)
	}
	writeRow(1, func(c int) string { return cols[c] })
	for r := 0; r < rows; r++ {
		writeRow(r+2, func(c int) string { return gen(r, c) })
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	// The small parts as WriteWorkbook writes them; the sheet and the
	// shared strings are streamed in their place.
	parts, err := Workbook{Sheets: []Sheet{{Name: "Sheet1", Rows: [][]any{{"x"}}}}}.Parts()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	z := zip.NewWriter(f)
	for _, p := range parts {
		w, err := z.CreateHeader(&zip.FileHeader{Name: p.Name, Method: zip.Deflate, Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			return err
		}
		switch p.Name {
		case "xl/worksheets/sheet1.xml":
			if _, err := tmp.Seek(0, io.SeekStart); err != nil {
				return err
			}
			head, _, _ := strings.Cut(p.Body, "<dimension ")
			fmt.Fprintf(w, `%s<dimension ref="A1:%s%d"/><sheetData>`, head, source.ColumnName(len(cols)-1), rows+1)
			if _, err := io.Copy(w, tmp); err != nil {
				return err
			}
			_, err = io.WriteString(w, `</sheetData></worksheet>`)
		case "xl/sharedStrings.xml":
			bw := bufio.NewWriterSize(w, 256<<10)
			fmt.Fprintf(bw, `%s<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="%d" uniqueCount="%d">`, decl, sst.count, len(sst.list))
			for _, v := range sst.list {
				bw.WriteString(`<si><t xml:space="preserve">` + escape(v, false) + `</t></si>`)
			}
			bw.WriteString(`</sst>`)
			err = bw.Flush()
		default:
			_, err = io.WriteString(w, p.Body)
		}
		if err != nil {
			return err
		}
	}
	return z.Close()
}
