package main

import (
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// A full disk for real: scripts mount a small tmpfs. That needs root on
// Linux (CI runs as root); elsewhere the [tmpfs] condition is false and the
// script skips, saying why. The journal package covers the same failures
// with an injected file everywhere.

var (
	tmpfsOnce sync.Once
	tmpfsOK   bool
)

// canMountTmpfs reports whether this process can mount a tmpfs.
func canMountTmpfs() bool {
	tmpfsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tmpfs-probe-")
		if err != nil {
			return
		}
		defer os.Remove(dir)
		if exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).Run() != nil {
			return
		}
		tmpfsOK = exec.Command("umount", dir).Run() == nil
	})
	return tmpfsOK
}

// scriptCondition adds [tmpfs] and [cap] to testscript's conditions.
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "tmpfs":
		return canMountTmpfs(), nil
	case "cap":
		return capCondition(), nil
	}
	return false, nil
}

// cmdTmpfs: `tmpfs DIR SIZE` mounts a tmpfs of SIZE (64k, 1m) on DIR,
// unmounted when the script ends; `tmpfs ro DIR` / `tmpfs rw DIR` remount
// it read-only or writable.
func cmdTmpfs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tmpfs DIR SIZE | tmpfs ro|rw DIR")
	}
	run := func(args ...string) {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			ts.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	switch args[0] {
	case "ro", "rw":
		run("mount", "-o", "remount,"+args[0], ts.MkAbs(args[1]))
		return
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	run("mount", "-t", "tmpfs", "-o", "size="+args[1], "tmpfs", dir)
	ts.Defer(func() { _ = exec.Command("umount", "-l", dir).Run() })
}
