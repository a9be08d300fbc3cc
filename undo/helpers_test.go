package undo

import (
	"context"
	"testing"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/executor/executortest"
	"github.com/migrate-tool/migrate/executor/fixture"
)

// mustUndo undoes (or with opts.Yes unset, lists) the run of journal
// jpath through c; an error fails the test.
func mustUndo(t testing.TB, jpath string, c executor.Client, opts Options) *Summary {
	t.Helper()
	sum, err := Undo(context.Background(), jpath, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// undoRetried undoes, through the client client makes of env's, the
// order executortest.Retried loaded; an order left fails the test.
func undoRetried(t testing.TB, client func(env *fixture.Env) executor.Client) *Summary {
	t.Helper()
	env, o, _ := executortest.Retried(t)
	sum := mustUndo(t, o.Journal, client(env), Options{Yes: true, Target: o.Target, Metadata: fixture.MetadataOf(env.MD)})
	if n := len(env.SB.Snapshot()["ORDERS"]); n != 0 {
		t.Fatalf("%d orders left", n)
	}
	return sum
}
