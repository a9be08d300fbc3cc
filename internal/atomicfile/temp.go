package atomicfile

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CreateTemp is os.CreateTemp (a new file, mode 0600, named by pattern
// with a random part for its last "*") opened by OpenFile, so that it may
// be renamed or removed while it is open on Windows too.
func CreateTemp(dir, pattern string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; try < 10000; try++ {
		var b [4]byte
		_, _ = rand.Read(b[:])
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(binary.LittleEndian.Uint32(b[:])), 10)+suffix)
		f, err := OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, pattern), Err: fs.ErrExist}
}
