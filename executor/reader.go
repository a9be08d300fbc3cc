package executor

import "github.com/migrate-tool/migrate/read"

// readWindow is how many records of an upsert or update step wait for
// their read: enough to fill one call with or-chains (limit GETs of
// read.Chain keys), so that N records cost about N/4,000 calls, not N/100.
func (r *runner) readWindow() int { return r.limit * read.Chain }
