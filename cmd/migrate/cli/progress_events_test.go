package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
)

// TestProgressEvents: apply --json's progress lines on stderr, on a clock
// that moves 400 ms a record: a step's start with its total, a progress
// line at most once a second with the rate and the time left at that
// rate, a pause, and the step's end. Nothing else is written.
func TestProgressEvents(t *testing.T) {
	t.Parallel()
	var w bytes.Buffer
	h := &progressHook{w: &w, quiet: true, totals: map[string]int{"parts": 10}}
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	h.progressEvents(func() time.Time { return at })
	h.StepStarted("parts", "LOGPART")
	for i := range 5 {
		at = at.Add(400 * time.Millisecond)
		status := "committed"
		if i == 3 {
			status = "failed"
		}
		h.RecordDone("parts", executor.Outcome{Status: status})
	}
	h.Waiting("parts", odata.Wait{For: 37 * time.Second, RateLimit: true})
	h.Waiting("parts", odata.Wait{For: 200 * time.Millisecond}) // the client's own pacing: not told
	h.StepFinished("parts", executor.StepSummary{})
	want := `{"event":"step","step":"parts","entity":"LOGPART","done":0,"failed":0,"total":10,"records_per_second":0}
{"event":"progress","step":"parts","done":3,"failed":0,"total":10,"records_per_second":2.5,"seconds_left":3}
{"event":"waiting","step":"parts","done":5,"failed":1,"total":10,"records_per_second":2.5,"wait_seconds":37,"rate_limit":true}
{"event":"step_done","step":"parts","done":5,"failed":1,"total":10,"records_per_second":2.5}
`
	if got := w.String(); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}
