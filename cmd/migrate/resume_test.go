package main

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdResume: `resume N ARGS...` runs `migrate ARGS...` again while it exits
// 4 (interrupted or in doubt: run it again, docs/cli.md), at most N times.
// Any other exit but 0, or a crash, fails the script, as does a 4 at the
// N-th run. The last run's output is the script's stdout and stderr, and
// $RUNS the number of runs.
func cmdResume(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: resume N ARGS...")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	for run := 1; run <= n; run++ {
		err := ts.Exec("migrate", args[1:]...)
		out := ts.ReadFile("stdout") + ts.ReadFile("stderr")
		if strings.Contains(out, "panic:") || strings.Contains(out, "goroutine ") {
			ts.Fatalf("migrate %s crashed:\n%s", strings.Join(args[1:], " "), out)
		}
		var ee *exec.ExitError
		switch {
		case err == nil:
			ts.Setenv("RUNS", strconv.Itoa(run))
			return
		case errors.As(err, &ee) && ee.ExitCode() == 4:
			continue
		default:
			ts.Fatalf("migrate %s, run %d: %v\n%s", strings.Join(args[1:], " "), run, err, out)
		}
	}
	ts.Fatalf("migrate %s still exits 4 after %d runs", strings.Join(args[1:], " "), n)
}
