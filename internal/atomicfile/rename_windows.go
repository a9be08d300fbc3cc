//go:build windows

package atomicfile

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// renameOver renames from over to as Unix does: the target is replaced
// even while a reader holds it open (with FILE_SHARE_DELETE, as OpenFile
// opens it), which keeps reading what it opened (Windows 10 1709 and
// later, on NTFS). Where that is not supported, it is os.Rename, which
// refuses a target held open.
func renameOver(from, to string) error {
	if posixRename(from, to) == nil {
		return nil
	}
	return os.Rename(from, to)
}

// heldOpen says whether a rename failed because another program holds the
// target open without letting it be deleted (Excel with a workbook):
// "Access is denied", or a sharing violation.
func heldOpen(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}

const (
	renameReplaceIfExists = 0x1 // FILE_RENAME_FLAG_REPLACE_IF_EXISTS
	renamePOSIXSemantics  = 0x2 // FILE_RENAME_FLAG_POSIX_SEMANTICS
)

func posixRename(from, to string) error {
	abs, err := filepath.Abs(to)
	if err != nil {
		return err
	}
	p, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	name, err := windows.UTF16FromString(abs)
	if err != nil {
		return err
	}
	name = name[:len(name)-1] // FileNameLength counts no NUL
	h, err := windows.CreateFile(p, windows.DELETE|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	// FILE_RENAME_INFO on 64-bit Windows: Flags at 0, RootDirectory at 8,
	// FileNameLength at 16, FileName from 20.
	buf := make([]byte, 20+2*len(name)+2)
	binary.LittleEndian.PutUint32(buf[0:], renameReplaceIfExists|renamePOSIXSemantics)
	binary.LittleEndian.PutUint32(buf[16:], uint32(2*len(name)))
	for i, c := range name {
		binary.LittleEndian.PutUint16(buf[20+2*i:], c)
	}
	return windows.SetFileInformationByHandle(h, windows.FileRenameInfoEx, &buf[0], uint32(len(buf)))
}
