package cli

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/executor"
)

// memoryFlag is --memory: what a run aims to stay under. The Go runtime
// collects garbage to stay under it (its soft memory limit, unless
// GOMEMLIMIT says otherwise), and transform keeps a grouped step's rows and
// a linked source in a temporary file past a share of it.
type memoryFlag struct{ bytes int64 }

func (m *memoryFlag) register(fs *flag.FlagSet) {
	m.bytes = executor.DefaultMemory
	fs.Var(m, "memory", "the memory the run aims to stay under, such as 256MB or 1GB; past a share of it grouped and linked rows go to a temporary file")
}

func (m *memoryFlag) String() string {
	if m == nil || m.bytes == 0 {
		return ""
	}
	if m.bytes%(1<<30) == 0 {
		return strconv.FormatInt(m.bytes>>30, 10) + "GB"
	}
	return strconv.FormatInt(m.bytes>>20, 10) + "MB"
}

// minMemory is the least --memory takes: below it the heap the command
// needs anyway would make the collector run without pause.
const minMemory = 32 << 20

func (m *memoryFlag) Set(s string) error {
	t := strings.ToUpper(strings.TrimSpace(s))
	unit := int64(1 << 20) // a bare number is megabytes
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"G", 1 << 30}, {"M", 1 << 20}} {
		if strings.HasSuffix(t, u.suffix) {
			t, unit = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.n
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > 1<<40/unit {
		return fmt.Errorf("%q is not a size: give megabytes or gigabytes, such as 256MB or 2GB", s)
	}
	if n*unit < minMemory {
		return fmt.Errorf("%s is less than the %d MB a run needs", s, minMemory>>20)
	}
	m.bytes = n * unit
	return nil
}

// apply sets the Go runtime's soft memory limit, unless GOMEMLIMIT set one.
func (m *memoryFlag) apply() {
	setMemoryLimit(m.bytes)
}

// setMemoryLimit holds the Go heap to 70 % of a budget of n
// bytes: the process's resident memory is the heap plus the runtime, the
// program and the buffers the OS counts. Whatever is live stays: when the
// data need more, the collector works harder, it does not fail.
func setMemoryLimit(n int64) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(n / 10 * 7)
	}
}
