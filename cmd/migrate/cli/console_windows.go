//go:build windows

package cli

import (
	"os"

	"golang.org/x/sys/windows"
)

// enableEscapes turns on the Windows console's handling of the escape
// sequences the progress bar redraws its line with (Windows 10 and later);
// without it they print as text and garble the line. It reports whether
// the console takes them.
func enableEscapes(f *os.File) bool {
	h := windows.Handle(f.Fd())
	var mode uint32
	if windows.GetConsoleMode(h, &mode) != nil {
		return false
	}
	if mode&windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0 {
		return true
	}
	return windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING) == nil
}
