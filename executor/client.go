package executor

import (
	"net/url"

	"github.com/migrate-tool/migrate/reconcile"
)

// Client is what the executor needs of odata.Client: $batch. Reads for
// upsert, replace and reconciliation go through batches too, so a fake in a
// test implements one method. It is reconcile's, which reads through it.
type Client = reconcile.Client

// BatchOptions are continue-on-error always (reconcile.BatchOptions).
var BatchOptions = reconcile.BatchOptions

// ErrInterrupted is returned (wrapped) when Options.Stop or ctx stopped the
// run: in-flight batches were finished and journaled; run apply again to
// resume. It is reconcile's, which a read that broke the $batch protocol
// stops with.
var ErrInterrupted = reconcile.ErrInterrupted

// ErrInDoubt is returned (wrapped) when a batch's outcome could not be
// known (timeout, dropped connection, 5xx on the batch). Nothing more was
// sent; run apply again: it reconciles what is in doubt before sending.
// It is reconcile's, which a read of reconciliation that failed for now
// leaves work in doubt with.
var ErrInDoubt = reconcile.ErrInDoubt

// Redact strips credentials from a target URL for the journal.
func Redact(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return ""
	}
	u.User = nil
	q := u.Query()
	for k := range q {
		q.Del(k)
	}
	u.RawQuery = ""
	return u.String()
}
