package source

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// maxSheetRow is the last row a worksheet can have: a dimension that
// reaches it spans the whole sheet (formatting applied to whole columns),
// which says nothing of the rows that hold data.
const maxSheetRow = 1048576

// dimensionRef finds a worksheet's <dimension ref="A1:D1234"/>.
var dimensionRef = regexp.MustCompile(`<(?:\w+:)?dimension\s+ref="([^"]*)"`)

// CountRows is a cheap count of the rows below the header of a file
// source, for a progress bar's total and the time left: a CSV's lines
// (read at about 1 GB/s, the records not parsed), a worksheet's dimension
// as its part declares it in its first bytes. It may count high: a line
// break inside a quoted cell, formatted empty rows inside the dimension.
// ok is false when it cannot be known cheaply (a sheet without a
// dimension, or one that spans the whole sheet) or the file cannot be
// opened; Open says why.
func CountRows(opts Options) (n int, ok bool) {
	if opts.Path == "" {
		opts.Path = opts.Name
	}
	switch ext := strings.ToLower(filepath.Ext(opts.Path)); {
	case IsWorkbook(opts.Path):
		return sheetRows(opts)
	case ext == ".csv" || ext == ".txt" || ext == ".tsv":
		lines, err := countLines(opts.Path)
		if err != nil || lines < 1 {
			return 0, false
		}
		return lines - 1, true // the header
	}
	return 0, false
}

// sheetRows reads the dimension of the sheet opts names and counts its
// rows below the header row.
func sheetRows(opts Options) (int, bool) {
	wb, err := openWorkbook(opts.Path)
	if err != nil {
		return 0, false
	}
	defer wb.close()
	sh, ok := wb.sheet(opts.Sheet)
	if !ok || sh.target == "" || !wb.has(sh.target) {
		return 0, false
	}
	part, err := wb.open(sh.target)
	if err != nil {
		return 0, false
	}
	defer part.Close()
	head := make([]byte, 4096) // the dimension comes before the rows
	k, _ := io.ReadFull(part, head)
	m := dimensionRef.FindSubmatch(head[:k])
	if m == nil {
		return 0, false
	}
	ref := string(m[1])
	if i := strings.IndexByte(ref, ':'); i >= 0 {
		ref = ref[i+1:]
	}
	_, last, okRef := cellIndex(strings.ReplaceAll(ref, "$", ""))
	if !okRef || last >= maxSheetRow {
		return 0, false
	}
	header := opts.HeaderRow
	if header <= 0 {
		header = 1
	}
	if last < header {
		return 0, true
	}
	return last - header, true
}

// countLines counts the lines of a file, a last line without its line
// end included.
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	n, last := 0, byte('\n')
	for {
		k, err := f.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}
