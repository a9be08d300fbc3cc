//go:build !linux

package scratch

// inMemory: no file system in memory is known here; the temporary files
// stay where the system keeps them.
func inMemory() (string, bool) { return "", false }
