package bench

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time so far: on a machine shared
// with other work it is steadier than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
