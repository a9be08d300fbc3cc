//go:build !windows

package atomicfile

import "os"

// heldOpen is never true here: a file held open is replaced all the same.
func heldOpen(error) bool { return false }

// renameOver is os.Rename: on Unix a target held open is replaced, and its
// readers keep what they opened.
func renameOver(from, to string) error { return os.Rename(from, to) }
