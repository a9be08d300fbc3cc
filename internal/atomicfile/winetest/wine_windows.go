//go:build windows

package winetest

import (
	"os"
	_ "unsafe" // go:linkname
)

// deleteFallback is the runtime's switch to the older way of deleting.
//
//go:linkname deleteFallback internal/syscall/windows.TestDeleteatFallback
var deleteFallback bool

func init() {
	if os.Getenv("MIGRATE_WINE") != "" {
		deleteFallback = true
	}
}
