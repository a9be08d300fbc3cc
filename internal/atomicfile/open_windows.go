//go:build windows

package atomicfile

import (
	"io/fs"
	"os"
	"syscall"
)

// OpenFile is os.OpenFile, but the file is opened as Unix opens one: it
// may be renamed, replaced or deleted while it is open (FILE_SHARE_DELETE,
// which Go's own open leaves out). Windows otherwise refuses to rename an
// output we still hold open, to replace the journal's index that a reader
// holds, or to remove a temporary name the journal is written through.
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	p, err := syscall.UTF16PtrFromString(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = syscall.GENERIC_READ
	case os.O_WRONLY:
		access = syscall.GENERIC_WRITE
	case os.O_RDWR:
		access = syscall.GENERIC_READ | syscall.GENERIC_WRITE
	}
	if flag&os.O_APPEND != 0 {
		access &^= syscall.GENERIC_WRITE
		access |= syscall.FILE_APPEND_DATA
	}
	var create uint32
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		create = syscall.CREATE_NEW
	case flag&(os.O_CREATE|os.O_TRUNC) == os.O_CREATE|os.O_TRUNC:
		create = syscall.CREATE_ALWAYS
	case flag&os.O_CREATE == os.O_CREATE:
		create = syscall.OPEN_ALWAYS
	case flag&os.O_TRUNC == os.O_TRUNC:
		create = syscall.TRUNCATE_EXISTING
	default:
		create = syscall.OPEN_EXISTING
	}
	attrs := uint32(syscall.FILE_ATTRIBUTE_NORMAL)
	if flag&os.O_CREATE != 0 && perm&0o200 == 0 {
		attrs = syscall.FILE_ATTRIBUTE_READONLY
	}
	share := uint32(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE)
	h, err := syscall.CreateFile(p, access, share, nil, create, attrs, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}
