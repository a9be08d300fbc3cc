package executor

import (
	"errors"
	"io/fs"
	"net"
	"net/url"
	"syscall"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/source"
)

// A run that stops is someone's to fix, and the exit code says whose
// (docs/cli.md, Exit codes): apply used to blame the target (3) for a CSV
// syntax error and for a full temporary folder.

// SourceBroken reports whether err is a source file that broke while the
// run read it: a CSV syntax error, a damaged workbook. The file's, not the
// target's. A source that reads another company is a server: a page it
// answered against the query (read.Error), an answer refused or one that
// never came are that server's (3), as the target's would be.
func SourceBroken(err error) bool {
	var (
		se *source.Error
		re *read.Error
		oe *odata.Error
		ue *url.Error
		ne net.Error
	)
	if errors.As(err, &re) || errors.As(err, &oe) || errors.As(err, &ue) || errors.As(err, &ne) {
		return false
	}
	return errors.As(err, &se)
}

// LocalResource reports whether err is the machine's: a local file the
// run needed (the temporary file for the rows past --memory, a file it
// writes) could not be created, written or read, or the disk is full.
// Errors of the network are never *fs.PathError.
func LocalResource(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) || errors.Is(err, syscall.ENOSPC)
}
