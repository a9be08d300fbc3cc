//go:build unix && !aix

package journal

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes flock(2) on f without waiting: the lock belongs to the
// open file, so the OS releases it when its holder exits, however it dies.
func lockFile(f *os.File, exclusive bool) error {
	how := unix.LOCK_SH | unix.LOCK_NB
	if exclusive {
		how = unix.LOCK_EX | unix.LOCK_NB
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return errBusy
		}
		return err
	}
}

func unlockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// processGone reports whether no process pid runs on this machine: a lock
// file may still name a holder killed before (a kill leaves its name).
func processGone(pid int) bool {
	return pid > 0 && errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}
