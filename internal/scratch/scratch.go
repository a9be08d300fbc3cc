// Package scratch puts a test binary's temporary files (t.TempDir, the
// scripts' work folders, the journals and sources the campaigns write) in
// a folder on a file system in memory where the machine has one (Linux's
// /dev/shm), unless TMPDIR already names a folder. The journal syncs what
// it writes before each batch goes, and on a disk every sync is a wait,
// several seconds of the whole suite's. What the tests assert is the same
// on either.
package scratch

import "os"

// TestingM is what Main runs: *testing.M.
type TestingM interface{ Run() int }

// Main runs m with the temporary files in a folder of their own in memory,
// removed after, and returns m's exit code.
func Main(m TestingM) int { return inMemoryM{m}.Run() }

// M is m running as Main runs it, for a TestMain that hands its m on
// (testscript.Main).
func M(m TestingM) TestingM { return inMemoryM{m} }

type inMemoryM struct{ m TestingM }

func (im inMemoryM) Run() int {
	if os.Getenv("TMPDIR") != "" {
		return im.m.Run()
	}
	root, ok := inMemory()
	if !ok {
		return im.m.Run()
	}
	dir, err := os.MkdirTemp(root, "migrate-test-")
	if err != nil {
		return im.m.Run()
	}
	defer os.RemoveAll(dir)
	if os.Setenv("TMPDIR", dir) != nil {
		return im.m.Run()
	}
	defer os.Unsetenv("TMPDIR")
	return im.m.Run()
}
