//go:build !windows

package atomicfile

import "os"

// renameOver is os.Rename: on Unix a target held open is replaced, and its
// readers keep what they opened.
func renameOver(from, to string) error { return os.Rename(from, to) }
