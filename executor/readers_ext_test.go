package executor_test

import (
	"context"
	"fmt"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/undo"
	"github.com/migrate-tool/migrate/verify"
)

func init() {
	executor.VerifyInTest = func(ctx context.Context, journalPath string, c executor.Client, target string, md *odata.Metadata) ([]string, error) {
		res, err := verify.Verify(ctx, journalPath, c, verify.Options{Target: target, Metadata: md})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, f := range res.Findings {
			out = append(out, fmt.Sprintf("%+v", f))
		}
		for _, s := range res.Steps {
			for _, t := range s.Totals {
				if t.Source != t.Target {
					out = append(out, fmt.Sprintf("%s: %s sent %s, found %s", s.Name, t.What, t.Source, t.Target))
				}
			}
		}
		return out, nil
	}
	executor.UndoInTest = func(ctx context.Context, journalPath string, c executor.Client, o executor.UndoInTestOptions) (*executor.UndoInTestSummary, error) {
		sum, err := undo.Undo(ctx, journalPath, c, undo.Options{Yes: o.Yes, Force: o.Force, Target: o.Target, Metadata: o.Metadata})
		if sum == nil {
			return nil, err
		}
		return &executor.UndoInTestSummary{Done: sum.Done, Failed: sum.Failed, Skipped: sum.Skipped, InDoubt: sum.InDoubt}, err
	}
}
