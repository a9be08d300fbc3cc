//go:build windows

package executor

import (
	"os"
	_ "unsafe" // go:linkname
)

// deleteFallback is the runtime's switch to delete files the way Windows
// before 10 does. Wine 8 refuses the newer way with an error Go does not
// expect, so every test's temporary folder would be left behind; under
// Wine (MIGRATE_WINE set, and the test binary linked with
// -ldflags=-checklinkname=0) the tests use the older way, which real
// Windows keeps too.
//
//go:linkname deleteFallback internal/syscall/windows.TestDeleteatFallback
var deleteFallback bool

func init() {
	if os.Getenv("MIGRATE_WINE") != "" {
		deleteFallback = true
	}
}
