package winetest

import (
	"syscall"
	"testing"
)

// HoldAsExcel opens path as Excel holds a workbook it has open (others
// may read it, not write, rename or delete it: no FILE_SHARE_DELETE) until
// the function it returns is called, or the test ends.
func HoldAsExcel(t testing.TB, path string) (closeInExcel func()) {
	t.Helper()
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, syscall.FILE_SHARE_READ, nil, syscall.OPEN_EXISTING, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatalf("opening %s as Excel does: %v", path, err)
	}
	closed := false
	closeInExcel = func() {
		if !closed {
			closed = true
			syscall.CloseHandle(h)
		}
	}
	t.Cleanup(closeInExcel)
	return closeInExcel
}
