package executor

import (
	"context"
	"errors"
	"net/url"

	"github.com/migrate-tool/migrate/odata"
)

// Client is what the executor needs of odata.Client: $batch. Reads for
// upsert, replace and reconciliation go through batches too, so a fake in a
// test implements one method.
type Client interface {
	Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error)
}

// BatchOptions are continue-on-error always, and said explicitly (the two
// formats have opposite defaults, and the documented example sends false),
// so that one bad record does not stop the others.
var BatchOptions = odata.BatchOptions{ContinueOnError: true}

// ErrInterrupted is returned (wrapped) when Options.Stop or ctx stopped the
// run: in-flight batches were finished and journaled; run apply again to
// resume.
var ErrInterrupted = errors.New("interrupted: run apply again to resume")

// ErrInDoubt is returned (wrapped) when a batch's outcome could not be
// known (timeout, dropped connection, 5xx on the batch). Nothing more was
// sent; run apply again: it reconciles what is in doubt before sending.
var ErrInDoubt = errors.New("a batch's outcome is unknown: run apply again to reconcile it")

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
