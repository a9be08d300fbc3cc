package source

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Open opens a source by its extension: .csv, .txt and .tsv are read as
// CSV (.tsv defaults to a tab delimiter), .xlsx and .xlsm as workbooks.
// The header is read before Open returns, so a file without one fails
// here, with ErrNoHeader.
func Open(opts Options) (Reader, error) {
	if opts.Name == "" {
		opts.Name = opts.Path
	}
	if opts.Path == "" {
		opts.Path = opts.Name
	}
	switch ext := strings.ToLower(filepath.Ext(opts.Path)); ext {
	case ".csv", ".txt", ".tsv":
		if ext == ".tsv" && opts.Delimiter == 0 {
			opts.Delimiter = '\t'
		}
		return openCSV(opts)
	case ".xlsx", ".xlsm":
		return openXLSX(opts)
	default:
		return nil, &Error{File: opts.Name, Err: fmt.Errorf("%w %q: use a .csv, .txt, .tsv, .xlsx or .xlsm file (save .xls and .ods files as .xlsx)", ErrUnknownFormat, ext)}
	}
}
