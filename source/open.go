package source

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Open opens a source by its extension: .csv, .txt and .tsv are read as
// CSV (.tsv defaults to a tab delimiter), .xlsx and .xlsm as workbooks.
// The header is read before Open returns, so a file without one fails
// here, with ErrNoHeader.
func Open(opts Options) (Reader, error) {
	return open(opts, nil)
}

// workbookExts are the extensions of the files read as workbooks; every
// other file is read as CSV (.csv, .txt, .tsv) or refused.
var workbookExts = []string{".xlsx", ".xlsm"}

// IsWorkbook reports whether Open reads path as an XLSX workbook (by its
// extension, in any case). The plan's checks of CSV-only and XLSX-only keys
// ask it.
func IsWorkbook(path string) bool {
	return slices.Contains(workbookExts, strings.ToLower(filepath.Ext(path)))
}

// open is Open, with the workbooks of files when it is not nil.
func open(opts Options, files *Files) (Reader, error) {
	if opts.Name == "" {
		opts.Name = opts.Path
	}
	if opts.Path == "" {
		opts.Path = opts.Name
	}
	ext := strings.ToLower(filepath.Ext(opts.Path))
	switch {
	case ext == ".csv" || ext == ".txt" || ext == ".tsv":
		if ext == ".tsv" && opts.Delimiter == 0 {
			opts.Delimiter = '\t'
		}
		return openCSV(opts)
	case IsWorkbook(opts.Path):
		return openXLSX(opts, files)
	default:
		return nil, &Error{File: opts.Name, Err: fmt.Errorf("%w %q: use a .csv, .txt, .tsv, .xlsx or .xlsm file (save .xls and .ods files as .xlsx)", ErrUnknownFormat, ext)}
	}
}

// Files opens the sources of one run: a workbook is opened once, however
// many times it is read (for its header, for a step's rows, for a lookup
// or a linked sub-form), so its shared strings are read once and its
// merged header cells are looked for once. Readers it opens may be used
// concurrently; Close closes the workbooks once every reader is done.
// The zero value is ready to use.
type Files struct {
	mu    sync.Mutex
	books map[string]*workbook // by path
}

// Open is Open with the workbooks kept open for the next.
func (f *Files) Open(opts Options) (Reader, error) {
	return open(opts, f)
}

// workbook returns the workbook at path, opening it the first time.
func (f *Files) workbook(path string) (*workbook, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if wb := f.books[path]; wb != nil {
		return wb, nil
	}
	wb, err := openWorkbook(path)
	if err != nil {
		return nil, err
	}
	wb.shared = true
	if f.books == nil {
		f.books = make(map[string]*workbook)
	}
	f.books[path] = wb
	return wb, nil
}

// Close closes the workbooks. A nil Files has none.
func (f *Files) Close() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for p, wb := range f.books {
		errs = append(errs, wb.closeFile())
		delete(f.books, p)
	}
	return errors.Join(errs...)
}
