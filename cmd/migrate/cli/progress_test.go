package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
)

// While a call waits for the rate limit nothing moves; the view says why:
// in the step's bar on a terminal, as a line in a log for a long wait, and
// not at all under --json.
func TestProgressTellsWaits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		tty, json bool
		wait      odata.Wait
		want      string // "" : nothing about waiting
	}{
		{"terminal, rate limit", true, false, odata.Wait{For: 36200 * time.Millisecond, RateLimit: true}, "parts          waiting 37 s for the rate limit"},
		{"terminal, retry", true, false, odata.Wait{For: 4 * time.Second}, "waiting 4 s before retrying"},
		{"terminal, the client's pace", true, false, odata.Wait{For: 600 * time.Millisecond, RateLimit: true}, ""},
		{"log, long wait", false, false, odata.Wait{For: 37 * time.Second, RateLimit: true}, "parts: waiting 37 s for the rate limit\n"},
		{"log, short wait", false, false, odata.Wait{For: 3 * time.Second, RateLimit: true}, ""},
		{"json", false, true, odata.Wait{For: 37 * time.Second, RateLimit: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			h := (&app{stderr: &buf}).newHook(tt.json)
			h.tty = tt.tty
			h.StepStarted("parts", "LOGPART")
			h.Waiting("parts", tt.wait)
			got := buf.String()
			if tt.want == "" && strings.Contains(got, "waiting") || !strings.Contains(got, tt.want) {
				t.Fatalf("output %q; want %q", got, tt.want)
			}
			// The next record puts the bar's own description back.
			buf.Reset()
			h.RecordDone("parts", executor.Outcome{Status: "committed"})
			if !tt.tty {
				return
			}
			if got := h.bars["parts"].State().Description; strings.Contains(got, "waiting") || !strings.Contains(got, "LOGPART") {
				t.Errorf("after a record the bar says %q", got)
			}
			// A failed record is counted in the bar's description.
			h.RecordDone("parts", executor.Outcome{Status: "failed"})
			if got := h.bars["parts"].State().Description; !strings.Contains(got, "1 failed") {
				t.Errorf("after a failed record the bar says %q", got)
			}
			h.finish()
		})
	}
}
