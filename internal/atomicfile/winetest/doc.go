// Package winetest lets tests run under Wine: imported for its effect
// (`import _ ".../internal/atomicfile/winetest"`) by a package's
// _windows_test.go file, it makes the runtime delete files the way
// Windows before 10 does when MIGRATE_WINE is set. Wine 8 refuses the
// newer way with an error Go does not expect, so every test's temporary
// folder would be left behind and its test failed; real Windows keeps the
// older way too. The test binary must be linked with
// -ldflags=-checklinkname=0 (.ci/wine/run does). HoldAsExcel holds a file
// open as Excel holds a workbook.
package winetest
