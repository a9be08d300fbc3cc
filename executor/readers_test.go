package executor

import (
	"context"

	"github.com/migrate-tool/migrate/odata"
)

// The engine's scenarios that end by verifying a run or taking it back
// (a restarted server's cold forms, every quirk at once, numbers as
// strings, undo around doubt and resume) run verify and undo, which import
// this package, so its own tests cannot import them: readers_ext_test.go,
// in package executor_test, sets these to them.
var (
	// VerifyInTest is verify.Verify: its findings and its control totals
	// that differ, each as a line.
	VerifyInTest func(ctx context.Context, journalPath string, c Client, target string, md *odata.Metadata) ([]string, error)
	// UndoInTest is undo.Undo.
	UndoInTest func(ctx context.Context, journalPath string, c Client, o UndoInTestOptions) (*UndoInTestSummary, error)
)

// UndoInTestOptions are the undo options the scenarios set.
type UndoInTestOptions struct {
	Yes, Force bool
	Target     string
	Metadata   func(context.Context) (*odata.Metadata, error)
}

// UndoInTestSummary is what the scenarios read of undo's summary.
type UndoInTestSummary struct {
	Done, Failed     int
	Skipped, InDoubt []string
}
