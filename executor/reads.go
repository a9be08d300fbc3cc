package executor

import (
	"context"

	"github.com/migrate-tool/migrate/odata"
)

// readBatch is readBatchOnce whose 404s the service confirms
// (service.confirmAbsent).
func (r *runner) readBatch(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
	out, err := r.readBatchOnce(ctx, reqs)
	if err != nil {
		return out, err
	}
	return r.svc.confirmAbsent(reqs, out, func(again []odata.BatchRequest) ([]odata.BatchResponse, error) {
		return r.readBatchOnce(ctx, again)
	})
}
