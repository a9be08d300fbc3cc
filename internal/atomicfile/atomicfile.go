package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// rename is renameOver; tests make it fail as Windows does.
var rename = renameOver

// File is an output being written. Write to it (it is an *os.File, open
// for reading and writing), then Commit it into place, or Abort it. Abort
// after Commit does nothing, so `defer f.Abort()` is always safe.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts the output at path with mode perm (0600 for anything
// holding customer data). The temporary file is named after the target
// with a random part, created with O_EXCL: it is always a new file.
func Create(path string, perm fs.FileMode) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, err
	}
	// CreateTemp makes it 0600; a wider output is widened here, on the
	// open file, never by its name.
	if perm != 0o600 {
		if err := f.Chmod(perm); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, err
		}
	}
	return &File{File: f, path: path}, nil
}

// Path is the target the file will replace.
func (f *File) Path() string { return f.path }

// Commit syncs and closes the file and renames it over the target.
func (f *File) Commit() error {
	kept, err := f.CommitOpen()
	if err != nil {
		return err
	}
	return kept.Close()
}

// CommitOpen is Commit that leaves the file open (at the target's name
// now), for a writer that reads back what it wrote.
func (f *File) CommitOpen() (*os.File, error) {
	if f.done {
		return nil, errors.New("atomicfile: " + f.path + " committed or aborted already")
	}
	if err := f.Sync(); err != nil {
		f.Abort()
		return nil, err
	}
	if err := rename(f.Name(), f.path); err != nil {
		f.Abort()
		if heldOpen(err) {
			// Windows refuses to replace a file another program holds
			// open: a report or workbook open in Excel. The temporary
			// name is gone: the message names the target only.
			var le *os.LinkError
			if errors.As(err, &le) {
				err = le.Err
			}
			return nil, fmt.Errorf("%s cannot be replaced (%w): another program has it open, most likely; close it in Excel (or the program that has it open) and run again; the file was left as it was", f.path, err)
		}
		return nil, err
	}
	f.done = true
	syncDir(filepath.Dir(f.path))
	return f.File, nil
}

// Abort closes and removes the temporary file; the target is untouched.
func (f *File) Abort() {
	if f == nil || f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.Name())
}

// Write writes the output at path with mode perm through write.
func Write(path string, perm fs.FileMode, write func(io.Writer) error) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// WriteFile is Write of data.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// syncDir makes a rename in dir survive a power cut too. Where folders
// cannot be synced (Windows) it does nothing.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// RemoveStale removes the temporary files of path's writers that a crash
// left behind, and the files beside it whose names begin with one of
// legacy (the temporary names of older writers). Only for a target one
// process writes at a time (the journal's index, under the journal's
// lock): it would remove another writer's file in flight.
func RemoveStale(path string, legacy ...string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	prefixes := append([]string{"." + base + ".tmp-"}, legacy...)
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		for _, p := range prefixes {
			if strings.HasPrefix(de.Name(), p) {
				os.Remove(filepath.Join(dir, de.Name()))
				break
			}
		}
	}
}
