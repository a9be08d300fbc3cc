package cli

import (
	"errors"
	"fmt"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/internal/workbook"
)

// workbookWritten is err of a writer of workbooks (report, diff, verify,
// export), nil when the files were written: cells a workbook could not
// hold whole (cut past 32,767 characters, control characters as U+FFFD)
// are said on stderr, whatever the view, with the CSV that keeps their
// whole values. The engine reports them; this prints.
func (a *app) workbookWritten(err error) error {
	var cc *workbook.CellsChanged
	if !errors.As(err, &cc) {
		return err
	}
	fmt.Fprintln(a.stderr, diag.Printable("warning: "+cc.Error()))
	return nil
}
