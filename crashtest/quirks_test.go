package crashtest

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/sandbox"
)

var campaignQuirks = flag.Bool("campaign.quirks", false, "fault campaign under quirks: dropped connections and 500s against a sandbox with every quirk of real servers (migrate sandbox --quirks), before 22.1 (21.0) and after (25.1)")

// TestFaultsUnderQuirks is the fault campaign against servers as they
// really answer (realServer): every quirk on (batch answers as
// g1-r1 and GETs without ids before 22.1, JSON screen errors from 19.1,
// cold forms, texts read back normalised, filters it cannot apply
// ignored, numbers answered as strings) and a line field hidden from the API user; connections dropped
// before and after the commit and 500s at each -fault.rates. Every run
// that stops must stop with exit 4, and the data must end exact: nothing
// lost, nothing twice, no text appended twice. Off unless -campaign.quirks.
//
// Not parallel: it runs before TestFaults, whose table would otherwise take
// its rows.
func TestFaultsUnderQuirks(t *testing.T) {
	if !*campaignQuirks {
		t.Skip("-campaign.quirks is off")
	}
	seed := *faultSeed + 1000
	// 21.0 has no version function: the binary is told its version (one
	// version at a time, as the environment is the process's).
	for _, sv := range []struct{ version, declared string }{{"21.0", "21.0"}, {"25.1", ""}} {
		version := sv.version
		t.Setenv("MIGRATE_SYSTEM_VERSION", sv.declared)
		t.Run(version, func(t *testing.T) {
			for _, kind := range []string{sandbox.FaultDropBeforeCommit, sandbox.FaultDropAfterCommit, sandbox.FaultError500} {
				for _, rate := range rates(t) {
					seed++
					kind, rate, seed := kind, rate, seed
					t.Run(fmt.Sprintf("%s=%v", kind, rate), func(t *testing.T) {
						t.Parallel()
						opts := realServer(version)
						opts.Latency, opts.Seed, opts.Faults = 2*time.Millisecond, seed, map[string]float64{kind: rate}
						runFaultCase(t, kind+" (quirks, "+version+")", fmt.Sprint(rate), seed, opts, nil)
					})
				}
			}
		})
	}
	table := takeFaultTable()
	t.Logf("fault campaign under quirks:\n%s", table)
	appendResults(t, "Fault campaign under quirks", table)
}

// realServer is a sandbox that answers as real servers do: every
// quirk on, at version, and a line's price hidden from the API user
// (field-level permissions), so that reconciliation must tell lines apart
// without it.
func realServer(version string) sandbox.Options {
	return sandbox.Options{SystemVersion: version, Quirks: sandbox.AllQuirks(), HiddenFields: []string{"ORDERITEMS_SUBFORM.PRICE"}}
}
