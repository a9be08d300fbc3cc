// Package odatatest holds what tests of the client and its users share: a
// clock on which the client's pauses (retry backoff, a 429's Retry-After,
// its own pace) pass at once, and which a test moves on by hand. It does not import odata, so odata's own
// tests use it too; production code never imports it.
package odatatest

import (
	"context"
	"sync"
	"time"
)

// Clock is an odata.Clock for tests: time stands still but for the pauses
// taken on it, which return at once, move it on by as long as they asked
// for, and are recorded. A test of retries or pacing then takes no real
// time and still sees every wait the client chose.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// NewClock is a clock that starts at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep returns at once, with ctx.Err() as a real sleep cut short would.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

// Advance moves the clock on by d without a pause: time that passes
// outside the client (a token ages, a minute of calls is over).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Sleeps are the pauses taken so far, in order.
func (c *Clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}
