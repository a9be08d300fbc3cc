package cli

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/migrate-tool/migrate/executor"
)

// progressHook shows one bar per step on a terminal (progressbar does no
// TTY detection of its own), and warnings always.
type progressHook struct {
	executor.NopHook
	w   io.Writer
	tty bool

	mu     sync.Mutex
	bars   map[string]*progressbar.ProgressBar
	failed map[string]int
}

func (a *app) newHook(asJSON bool) *progressHook {
	h := &progressHook{w: a.stderr, bars: map[string]*progressbar.ProgressBar{}, failed: map[string]int{}}
	if f, ok := a.stderr.(*os.File); ok && !asJSON {
		h.tty = term.IsTerminal(int(f.Fd()))
	}
	return h
}

func (h *progressHook) StepStarted(step, entity string) {
	if !h.tty {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bars[step] = progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(h.w),
		progressbar.OptionSetDescription(fmt.Sprintf("%-14s %s", step, entity)),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("records"),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	)
}

func (h *progressHook) RecordDone(step string, o executor.Outcome) {
	if !h.tty {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.bars[step]
	if b == nil {
		return
	}
	if o.Status == "failed" {
		h.failed[step]++
		b.Describe(fmt.Sprintf("%-14s %d failed", step, h.failed[step]))
	}
	_ = b.Add(1)
}

func (h *progressHook) StepFinished(step string, s executor.StepSummary) {
	if !h.tty {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if b := h.bars[step]; b != nil {
		_ = b.Finish()
		delete(h.bars, step)
	}
}

func (h *progressHook) Warn(msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintln(h.w, "warning:", msg)
}

// finish clears whatever bars are left (an interrupted run).
func (h *progressHook) finish() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, b := range h.bars {
		_ = b.Finish()
		delete(h.bars, k)
	}
}
