package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/migrate-tool/migrate/internal/atomicfile"
)

// A journal is written by one run at a time. Two applies on one journal
// once sent 1,907 orders for 1,000 rows and left a file every command
// refused. The guard is an OS lock on a file beside the journal,
// held from before the journal is read until it is closed: the OS drops it
// when its holder dies, even by SIGKILL, so it never goes stale. The file
// says who holds it, for the message the next run prints.

// LockPath is the lock file of the journal at path.
func LockPath(path string) string { return path + ".lock" }

// Holder is the run that holds a journal's lock, as its lock file says.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host,omitempty"`
	Started time.Time `json:"started"`
}

func (h Holder) String() string {
	if h.PID == 0 {
		return "a run that has not said who it is yet"
	}
	s := fmt.Sprintf("pid %d", h.PID)
	if h.Host != "" {
		s += " on " + h.Host
	}
	if !h.Started.IsZero() {
		s += ", started " + h.Started.UTC().Format(time.RFC3339)
	}
	return s
}

// gone reports whether h names a process of this machine that no longer
// runs.
func (h Holder) gone() bool {
	if h.PID == 0 {
		return false
	}
	if host, err := os.Hostname(); err != nil || host != h.Host {
		return false
	}
	return processGone(h.PID)
}

func (h Holder) same(o Holder) bool {
	return h.PID == o.PID && h.Host == o.Host && h.Started.Equal(o.Started)
}

// LockedError is a journal that another run is writing.
type LockedError struct {
	Path   string // the journal
	Holder Holder
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s is in use by another run (%s); let it finish or stop it, then run again", e.Path, e.Holder)
}

// errBusy is what the platform's lock call returns when another holds it.
var errBusy = errors.New("lock held by another process")

// A lock file that names no holder is looked at lockAttempts more times,
// lockPause apart, before the run is refused.
const (
	lockAttempts = 10
	lockPause    = 20 * time.Millisecond
)

// lock is a held journal lock.
type lock struct {
	f    *os.File
	path string
}

// acquire takes the exclusive lock of the journal at path, or returns a
// *LockedError naming the holder.
func acquire(path string) (*lock, error) {
	return acquireWaiting(path, func() { time.Sleep(lockPause) })
}

// acquireWaiting is acquire with the pause between two looks injected.
func acquireWaiting(path string, pause func()) (*lock, error) {
	var named Holder // who the lock file named at the last look
	for attempt := 0; ; attempt++ {
		// Never through a symbolic link: a link planted at the lock's
		// name would have the run write, and release empty, its target.
		f, err := atomicfile.OpenNoFollow(LockPath(path), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fileError(path, "lock", err)
		}
		err = lockFile(f, true)
		if errors.Is(err, errBusy) {
			h := readHolder(f)
			f.Close()
			// A file that names no one is a status probing for an
			// instant, or a run that has just locked or is releasing it.
			// One that names someone may still name a holder killed
			// before: a run that has just locked the file has not
			// written itself over it yet (two runs started at once
			// named a dead pid; the crash campaign's two-run rounds).
			// Only a holder named twice, a pause apart, is the holder.
			// A name whose process is gone from this machine is a killed
			// holder's: the live one has not written itself yet.
			if h.gone() {
				h = Holder{}
			}
			if h.PID != 0 && h.same(named) || attempt >= lockAttempts {
				return nil, &LockedError{Path: path, Holder: h}
			}
			named = h
			pause()
			continue
		}
		if err != nil {
			f.Close()
			return nil, fileError(path, "lock", err)
		}
		// The holder before us removes the file as it lets go: a lock on
		// a file no longer at the path guards nothing.
		if fi, err := f.Stat(); err == nil {
			if now, err := os.Stat(LockPath(path)); err != nil || !os.SameFile(fi, now) {
				f.Close()
				if attempt >= lockAttempts {
					return nil, fileError(path, "lock", errors.New("its lock file keeps changing"))
				}
				continue
			}
		}
		// Who holds it is a courtesy for the refused run's message: a full
		// disk that cannot take these bytes must not stop the lock.
		host, _ := os.Hostname()
		b, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC()})
		if f.Truncate(0) == nil {
			_, _ = f.WriteAt(append(b, '\n'), 0)
		}
		return &lock{f: f, path: LockPath(path)}, nil
	}
}

// release removes the lock file and unlocks it. A run that opened the file
// just before finds, once it has the lock, that the path names another
// file or none, and starts over (acquire). Where an open file cannot be
// removed (Windows), the file stays, emptied so that it names no one.
func (l *lock) release() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = os.Remove(l.path)
	_ = unlockFile(l.f)
	l.f.Close()
	l.f = nil
}

func readHolder(f *os.File) Holder {
	var h Holder
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 4096))
	if err == nil {
		_ = json.Unmarshal(b, &h)
	}
	return h
}

// InUse reports whether a run holds the journal at path, and who: for
// read-only commands, which never wait for the lock. The probe takes a
// shared lock for an instant, so it cannot be mistaken for a run.
func InUse(path string) (Holder, bool) {
	f, err := atomicfile.OpenNoFollow(LockPath(path), os.O_RDONLY, 0)
	if err != nil {
		return Holder{}, false
	}
	defer f.Close()
	if err := lockFile(f, false); err != nil {
		if errors.Is(err, errBusy) {
			return readHolder(f), true
		}
		return Holder{}, false
	}
	_ = unlockFile(f)
	return Holder{}, false
}
