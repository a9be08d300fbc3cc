package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/odata"
)

// progressHook shows one bar per step on a terminal (progressbar does no
// TTY detection of its own), and warnings always.
type progressHook struct {
	executor.NopHook
	w     io.Writer
	tty   bool
	quiet bool // --json: warnings only

	mu   sync.Mutex
	bars map[string]*progressbar.ProgressBar
	// desc is each bar's own description, shown again once a wait is over.
	desc    map[string]string
	waiting map[string]bool
	// totals is the number of records a step will report, where the
	// engine could count them (executor.Hook's StepTotal); the bar then
	// shows an ETA.
	totals map[string]int

	// events: apply --json writes a progressEvent a line on w as it goes,
	// at most one "progress" a second per step.
	events bool
	now    func() time.Time // the command's clock
	// runs is each running step's count, which its bar and its events show.
	runs map[string]*stepRun
}

// stepRun is a running step's progress.
type stepRun struct {
	started, told time.Time
	done, failed  int
}

// progressEvent is one line of apply --json's progress on stderr: "step"
// when a step starts, "progress" at most once a second while it runs,
// "waiting" when its calls pause, "step_done" when it ends. total and
// seconds_left are there once the engine counted the step's records
// (StepTotal: at its start, or a grouped step's once its rows are read).
type progressEvent struct {
	Event       string  `json:"event"`
	Step        string  `json:"step"`
	Entity      string  `json:"entity,omitempty"`
	Done        int     `json:"done"`
	Failed      int     `json:"failed"`
	Total       int     `json:"total,omitempty"`
	PerSecond   float64 `json:"records_per_second"`
	SecondsLeft *int    `json:"seconds_left,omitempty"`
	WaitSeconds int     `json:"wait_seconds,omitempty"`
	RateLimit   bool    `json:"rate_limit,omitempty"`
}

// tell writes the event of kind for step (h.mu held); edit fills in what
// only that kind says.
func (h *progressHook) tell(kind, step string, edit func(*progressEvent)) {
	r := h.runs[step]
	if r == nil {
		return
	}
	now := h.now()
	r.told = now
	ev := progressEvent{Event: kind, Step: step, Done: r.done, Failed: r.failed, Total: h.totals[step]}
	if secs := now.Sub(r.started).Seconds(); secs > 0 && r.done > 0 {
		ev.PerSecond = math.Round(float64(r.done)/secs*10) / 10
		if ev.Total > r.done && kind == "progress" {
			left := int(math.Ceil(float64(ev.Total-r.done) / (float64(r.done) / secs)))
			ev.SecondsLeft = &left
		}
	}
	if edit != nil {
		edit(&ev)
	}
	b, _ := json.Marshal(ev)
	fmt.Fprintf(h.w, "%s\n", b)
}

func (a *app) newHook(asJSON bool) *progressHook {
	h := &progressHook{w: a.stderr, quiet: asJSON, bars: map[string]*progressbar.ProgressBar{},
		desc: map[string]string{}, waiting: map[string]bool{}, now: a.now, runs: map[string]*stepRun{}}
	if f, ok := a.stderr.(*os.File); ok && !asJSON {
		// A console that cannot redraw a line (Windows before 10) gets the
		// lines a log gets, not a garbled bar.
		h.tty = term.IsTerminal(int(f.Fd())) && enableEscapes(f)
	}
	return h
}

// WantsTotals says whether a bar or events show the steps' totals: without
// them the engine counts nothing.
func (h *progressHook) WantsTotals() bool { return h.tty || h.events }

// StepTotal keeps the step's total for its bar and events: before the
// step starts (rows counted), or while it runs (groups counted), when the
// bar, a spinner until then, gets its length.
func (h *progressHook) StepTotal(step string, records int) {
	if !h.WantsTotals() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.totals == nil {
		h.totals = map[string]int{}
	}
	h.totals[step] = records
	if b := h.bars[step]; b != nil {
		b.ChangeMax(records)
	}
}

func (h *progressHook) StepStarted(step, entity string) {
	if !h.tty && !h.events {
		return // neither a bar nor events: the lock stays off the record path
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs[step] = &stepRun{started: h.now()}
	if h.events {
		h.tell("step", step, func(ev *progressEvent) { ev.Entity = entity })
	}
	if !h.tty {
		return
	}
	total := -1 // unknown: a spinner with the count and the rate
	if n := h.totals[step]; n > 0 {
		total = n
	}
	h.desc[step] = fmt.Sprintf("%-14s %s", step, entity)
	h.bars[step] = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(h.w),
		progressbar.OptionSetDescription(h.desc[step]),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("records"),
		progressbar.OptionSetPredictTime(true), // shown once the length is known
		progressbar.OptionSpinnerType(14),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	)
}

func (h *progressHook) RecordDone(step string, o executor.Outcome) {
	if !h.tty && !h.events {
		return // neither a bar nor events: the lock stays off the record path
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.runs[step]
	if r == nil {
		return
	}
	r.done++
	if o.Status == "failed" {
		r.failed++
	}
	if h.events && h.now().Sub(r.told) >= time.Second {
		h.tell("progress", step, nil)
	}
	b := h.bars[step]
	if b == nil {
		return
	}
	if o.Status == "failed" {
		h.desc[step] = fmt.Sprintf("%-14s %d failed", step, r.failed)
		b.Describe(h.desc[step])
	} else if h.waiting[step] {
		b.Describe(h.desc[step])
	}
	h.waiting[step] = false
	_ = b.Add(1)
}

// longWait is the shortest pause told on a terminal without bars (a log);
// the client's own pacing pauses under a second at every call.
const longWait = 10 * time.Second

// Waiting tells why a step's bar stands still: the bar's description
// becomes "waiting 37 s for the rate limit" until the next record; without
// a terminal, a long pause gets a line of its own.
func (h *progressHook) Waiting(step string, w odata.Wait) {
	if h.events && w.For >= time.Second {
		h.mu.Lock()
		h.tell("waiting", step, func(ev *progressEvent) {
			ev.WaitSeconds, ev.RateLimit = int(math.Ceil(w.For.Seconds())), w.RateLimit
		})
		h.mu.Unlock()
	}
	if h.quiet || w.For < time.Second || !h.tty && w.For < longWait {
		return
	}
	msg := fmt.Sprintf("waiting %d s before retrying", int(math.Ceil(w.For.Seconds())))
	if w.RateLimit {
		msg = fmt.Sprintf("waiting %d s for the rate limit", int(math.Ceil(w.For.Seconds())))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.bars[step]
	if !h.tty || b == nil {
		fmt.Fprintf(h.w, "%s: %s\n", step, msg)
		return
	}
	h.waiting[step] = true
	b.Describe(fmt.Sprintf("%-14s %s", step, msg))
	_ = b.RenderBlank()
}

func (h *progressHook) StepFinished(step string, s executor.StepSummary) {
	if !h.tty && !h.events {
		return // neither a bar nor events: the lock stays off the record path
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.events {
		h.tell("step_done", step, nil)
	}
	delete(h.runs, step)
	if b := h.bars[step]; b != nil {
		_ = b.Finish()
		delete(h.bars, step)
	}
}

func (h *progressHook) Warn(msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintln(h.w, "warning:", diag.Printable(msg))
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

// progressEvents makes apply --json tell its progress as events on the
// hook's writer (stderr), timed by now.
func (h *progressHook) progressEvents(now func() time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events, h.now = true, now
	if h.runs == nil {
		h.runs = map[string]*stepRun{}
	}
}
