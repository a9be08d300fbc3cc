//go:build !windows

package atomicfile

import (
	"io/fs"
	"os"
)

// OpenFile is os.OpenFile: on Unix an open file may be renamed, replaced
// or deleted already (the Windows build opens it so that it may too).
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
