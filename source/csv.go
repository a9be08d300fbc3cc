package source

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// csvReader streams a delimited text file. Cells are strings; an empty
// field stays "" (the transform decides what empty means), and so do the
// columns a short row lacks.
type csvReader struct {
	name   string
	file   io.Closer
	r      *csv.Reader
	check  bool // the text is meant to be UTF-8: report invalid bytes
	header *Header
	err    error // final error, returned again by every Next
	closed bool
}

func openCSV(opts Options) (Reader, error) {
	f, err := os.Open(opts.Path)
	if err != nil {
		return nil, openError(opts.Name, opts.Path, err)
	}
	r, err := newCSVReader(opts.Name, f, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

func openError(name, path string, err error) error {
	var msg string
	switch {
	case errors.Is(err, os.ErrNotExist):
		msg = "the file does not exist"
	case errors.Is(err, os.ErrPermission):
		msg = "permission denied"
	default:
		msg = err.Error()
	}
	if path != name {
		msg += " (looked for " + path + "); check the file name in the plan, relative to the plan's folder"
	} else {
		msg += "; check the file name in the plan"
	}
	return &Error{File: name, Err: fmt.Errorf("cannot open: %s", msg)}
}

// newCSVReader reads the header from in. It does not close in.
func newCSVReader(name string, in io.Reader, opts Options) (*csvReader, error) {
	delim := opts.Delimiter
	if delim == 0 {
		delim = ','
	}
	if delim == '"' || delim == '\r' || delim == '\n' || delim == utf8.RuneError || !utf8.ValidRune(delim) {
		return nil, &Error{File: name, Err: fmt.Errorf("delimiter %q cannot be used: choose one such as \",\", \";\" or \"\\t\"", delim)}
	}
	text, check, err := decoder(in, opts.Encoding)
	if err != nil {
		return nil, &Error{File: name, Err: err}
	}
	cr := csv.NewReader(newLineGuard(text, MaxLineBytes))
	cr.Comma = delim
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = opts.LazyQuotes
	cr.ReuseRecord = true
	r := &csvReader{name: name, r: cr, check: check}

	rec, line, err := r.read()
	if err == io.EOF {
		return nil, &Error{File: name, Err: fmt.Errorf("%w: the file is empty; the first line must name the columns", ErrNoHeader)}
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, len(rec))
	for i, s := range rec {
		names[i] = strings.TrimSpace(s)
	}
	// Spreadsheets export trailing empty columns ("a,b,,"): they are not
	// columns, and empty fields under them are ignored like any extra.
	for len(names) > 1 && names[len(names)-1] == "" {
		names = names[:len(names)-1]
	}
	if err := checkNames(names, nil); err != nil {
		return nil, &Error{File: name, Line: line, Err: err}
	}
	r.header = NewHeader(names)
	return r, nil
}

// checkNames reports empty and duplicate column names. cols gives the
// sheet column of each name (nil: CSV, where columns are numbered from 1).
func checkNames(names []string, cols []int) error {
	where := func(i int) string {
		if cols == nil {
			return fmt.Sprintf("column %d", i+1)
		}
		return "column " + ColumnName(cols[i])
	}
	var empty []string
	for i, n := range names {
		if n == "" {
			empty = append(empty, where(i))
		}
	}
	if len(empty) > 0 {
		if len(empty) > 5 {
			empty = append(empty[:5], fmt.Sprintf("and %d more", len(empty)-5))
		}
		return fmt.Errorf("the header has no name for %s: name every column", strings.Join(empty, ", "))
	}
	first := make(map[string]int, len(names))
	var dups []string
	for i, n := range names {
		if j, ok := first[n]; ok {
			dups = append(dups, fmt.Sprintf("%q (%s and %s)", n, where(j), where(i)))
			continue
		}
		first[n] = i
	}
	if len(dups) > 0 {
		return fmt.Errorf("the header names columns twice: %s; make every name unique", strings.Join(dups, ", "))
	}
	return nil
}

// read returns the next record and the line it starts on.
func (r *csvReader) read() ([]string, int, error) {
	rec, err := r.r.Read()
	if err != nil {
		if err == io.EOF {
			return nil, 0, io.EOF
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			e := &Error{File: r.name, Line: pe.StartLine, Err: csvMessage(pe)}
			if pe.StartLine == pe.Line {
				e.Col = pe.Column
			}
			return nil, pe.StartLine, e
		}
		var long *lineTooLong
		if errors.As(err, &long) {
			return nil, long.line, &Error{File: r.name, Line: long.line, Err: long}
		}
		return nil, 0, &Error{File: r.name, Err: fmt.Errorf("read: %w", err)}
	}
	line, _ := r.r.FieldPos(0)
	if r.check {
		for i, s := range rec {
			if !utf8.ValidString(s) {
				l, _ := r.r.FieldPos(i)
				return nil, l, &Error{File: r.name, Line: l, Err: fmt.Errorf("column %d is not valid UTF-8: set the source's encoding (e.g. encoding: windows-1255 or windows-1252)", i+1)}
			}
		}
	}
	return rec, line, nil
}

func csvMessage(pe *csv.ParseError) error {
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return fmt.Errorf("a quote inside a field that is not quoted: quote the whole field and double the quote inside (\"12\"\" pipe\"), or set lazy_quotes: true on the source: %w", pe.Err)
	case errors.Is(pe.Err, csv.ErrQuote):
		if pe.StartLine != pe.Line {
			return fmt.Errorf("a quoted field of this record is not closed properly (the error shows at line %d, column %d): close it with a quote and double quotes inside it: %w", pe.Line, pe.Column, pe.Err)
		}
		return fmt.Errorf("a quoted field is not closed properly: close it with a quote and double quotes inside it: %w", pe.Err)
	}
	return pe.Err
}

func (r *csvReader) Header() *Header { return r.header }

func (r *csvReader) Next() (Row, error) {
	if r.closed {
		return Row{}, ErrClosed
	}
	if r.err != nil {
		return Row{}, r.err
	}
	for {
		rec, line, err := r.read()
		if err != nil {
			r.err = err
			return Row{}, err
		}
		if blank(rec) {
			continue // a line of delimiters only, as spreadsheets export
		}
		n := len(r.header.Names)
		cells := blankCells(n)
		for i := 0; i < n && i < len(rec); i++ {
			cells[i] = rec[i]
		}
		row := Row{Loc: Location{File: r.name, Line: line}, Header: r.header, Cells: cells}
		if len(rec) > n {
			extra := 0
			for _, s := range rec[n:] {
				if s != "" {
					extra++
				}
			}
			if extra > 0 {
				return row, &Error{File: r.name, Line: line, RowOnly: true,
					Err: fmt.Errorf("the row has %d fields but the header has %d: remove the extra fields or add names to the header (a delimiter inside a value must be quoted)", len(rec), n)}
			}
		}
		return row, nil
	}
}

func blank(rec []string) bool {
	for _, s := range rec {
		if strings.TrimSpace(s) != "" {
			return false
		}
	}
	return true
}

func (r *csvReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.file != nil {
		return r.file.Close()
	}
	return nil
}
