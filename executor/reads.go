package executor

import (
	"context"

	"github.com/migrate-tool/migrate/odata"
)

// readBatch is readBatchOnce whose 404s are confirmed (confirmAbsent). The
// dry run takes its answers as they are: its offline 404s are predictions,
// and it counts the calls a warm server would cost.
func (r *runner) readBatch(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
	out, err := r.readBatchOnce(ctx, reqs)
	if err != nil || r.dry {
		return out, err
	}
	return r.warm.ConfirmAbsent(reqs, out, func(again []odata.BatchRequest) ([]odata.BatchResponse, error) {
		return r.readBatchOnce(ctx, again)
	})
}
