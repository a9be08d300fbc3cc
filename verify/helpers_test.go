package verify

import (
	"context"
	"testing"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/executor/executortest"
	"github.com/migrate-tool/migrate/executor/fixture"
)

// verifyRun verifies what run r left on env's sandbox, reading through c
// (env's client, or one that hides a field); an error fails the test.
func verifyRun(t testing.TB, env *fixture.Env, r executortest.Run, c executor.Client) *Result {
	t.Helper()
	res, err := Verify(context.Background(), r.Journal, c, Options{Target: r.Target, Metadata: env.MD})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
