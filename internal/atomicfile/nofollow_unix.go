//go:build unix

package atomicfile

import (
	"io/fs"
	"os"
	"syscall"
)

// OpenNoFollow opens path as os.OpenFile does, but refuses (ELOOP) a
// symbolic link at path instead of opening what it points to.
func OpenNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
}
