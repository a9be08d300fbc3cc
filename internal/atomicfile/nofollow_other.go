//go:build !unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
)

// OpenNoFollow opens path as os.OpenFile does, but refuses a symbolic link
// at path. Without O_NOFOLLOW the check is made just before opening: a
// link planted between the two is not seen (creating one on Windows needs
// a privilege or developer mode).
func OpenNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("is a symbolic link")}
	}
	return OpenFile(path, flag, perm) // on Windows: removable while open
}
