package main

import (
	"context"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/migrate-tool/migrate/odata/captest"
)

var (
	capMu      sync.Mutex
	capServers = map[*testscript.TestScript]*captest.Server{}
)

// capCondition is [cap]: the CAP test service can run here, or must (CI),
// so a script that needs it skips only where it is not installed and not
// required (docs/other-services.md, The CAP test service).
func capCondition() bool { return captest.Installed() == nil || captest.Required() }

// cmdCap: `cap start` runs the CAP test service (odata/captest) until the
// script ends and points MIGRATE_TARGET at it, with a user and password
// it takes (any); `cap dump SET [EXPAND]` prints what it holds of SET, with
// EXPAND as $expand, the values it makes up (Guids, times) steadied.
func cmdCap(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: cap start | cap dump SET [EXPAND]")
	}
	switch args[0] {
	case "start":
		s, err := captest.Start(context.Background())
		if err != nil {
			ts.Fatalf("cap start: %v", err)
		}
		ts.Defer(s.Close)
		capMu.Lock()
		capServers[ts] = s
		capMu.Unlock()
		ts.Defer(func() {
			capMu.Lock()
			delete(capServers, ts)
			capMu.Unlock()
		})
		ts.Setenv("MIGRATE_TARGET", s.Root)
		ts.Setenv("MIGRATE_USER", "alice")
		ts.Setenv("MIGRATE_PASSWORD", "alice")
	case "dump":
		if len(args) < 2 || len(args) > 3 {
			ts.Fatalf("usage: cap dump SET [EXPAND]")
		}
		capMu.Lock()
		s := capServers[ts]
		capMu.Unlock()
		if s == nil {
			ts.Fatalf("cap dump: no CAP service started")
		}
		expand := ""
		if len(args) == 3 {
			expand = args[2]
		}
		out, err := captest.Dump(context.Background(), s.Root, args[1], expand)
		ts.Check(err)
		_, _ = ts.Stdout().Write(out)
	default:
		ts.Fatalf("cap %s: want start or dump", args[0])
	}
}
