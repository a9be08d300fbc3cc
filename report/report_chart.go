package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/migrate-tool/migrate/journal"
)

// Chart is the run report's calls a minute over the run, laid out for an
// inline SVG: the template only draws what is computed here.
type Chart struct {
	Width, Height         int
	Left, Top             float64 // the plot area's corner
	PlotWidth, PlotHeight float64
	Interval              string // what one bar covers: "1s", "5m0s"
	Bars                  []ChartBar
	Throttles             []ChartMark
	Pauses                []ChartBand
	YTicks, XTicks        []ChartTick
	// Calls are every call of the run, as the report's figure counts them
	// (BatchCall.Made); Unplaced those of batches with no time recorded
	// (counted, not drawn).
	Calls, Throttled int
	Unplaced         int
	Pause            time.Duration // the longest pause
}

// ChartBar is one interval's calls.
type ChartBar struct {
	X, Y, W, H float64
	Title      string
}

// ChartMark flags an interval with 429 answers.
type ChartMark struct {
	X, Y  float64
	Count int
	Title string
}

// ChartBand shades a pause: no call for a minute or more, or a wait
// before a retry.
type ChartBand struct {
	X, W  float64
	Title string
}

// ChartTick is an axis label.
type ChartTick struct {
	Pos   float64
	Label string
}

// chartIntervals are the bar widths tried, shortest first: a run of an
// hour gets one bar a minute, a run resumed over days one an hour. Never
// less than a minute: a bar of a second would show a 4-call run as 240
// calls a minute, which a reader of a hosted limit of 100 takes for a
// breach.
var chartIntervals = []time.Duration{time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}

const (
	chartBars = 60          // at most, about
	pauseMin  = time.Minute // a gap without calls this long is a pause
)

type callAt struct {
	sent, at         time.Time
	calls, throttled int
	waited           time.Duration
}

// callChart lays out the calls of a run's batches (undo's too: they are
// calls the service meters), or returns nil when the journal has no times.
func callChart(batches []journal.BatchCall) *Chart {
	var calls []callAt
	unplaced := 0
	for _, b := range batches {
		if b.Made() == 0 {
			continue
		}
		// A batch whose answer was lost (in doubt) is drawn when it was
		// sent: it is one of the run's calls all the same.
		at := b.Answered
		if at.IsZero() {
			at = b.Sent
		}
		if at.IsZero() {
			unplaced += b.Made()
			continue
		}
		sent := b.Sent
		if sent.IsZero() || sent.After(at) {
			sent = at
		}
		calls = append(calls, callAt{sent: sent, at: at, calls: b.Made(), throttled: b.Throttled, waited: b.Waited})
	}
	if len(calls) == 0 {
		return nil
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].sent.Before(calls[j].sent) })
	start, end := calls[0].sent, calls[0].at
	for _, c := range calls {
		if c.at.After(end) {
			end = c.at
		}
	}
	span := end.Sub(start)
	step := chartIntervals[len(chartIntervals)-1]
	for _, w := range chartIntervals {
		if span/w < chartBars {
			step = w
			break
		}
	}
	if span/step >= chartBars {
		step = time.Duration(math.Ceil(float64(span)/float64(chartBars)/float64(24*time.Hour))) * 24 * time.Hour
	}
	t0 := start.Truncate(step)
	n := int(end.Sub(t0)/step) + 1
	perBar := make([]int, n)
	throttled := make([]int, n)
	ch := &Chart{Width: 960, Height: 260, Left: 56, Top: 18, PlotWidth: 960 - 56 - 16, PlotHeight: 260 - 18 - 44, Interval: step.String(),
		Calls: unplaced, Unplaced: unplaced}
	for _, c := range calls {
		i := int(c.at.Sub(t0) / step)
		perBar[i] += c.calls
		throttled[i] += c.throttled
		ch.Calls += c.calls
		ch.Throttled += c.throttled
	}
	perMinute := float64(time.Minute) / float64(step)
	peak := 0.0
	for _, v := range perBar {
		peak = math.Max(peak, float64(v)*perMinute)
	}
	top, tick := niceScale(peak)
	bw := ch.PlotWidth / float64(n)
	x := func(t time.Time) float64 { return ch.Left + float64(t.Sub(t0))/float64(step)*bw }
	for i, v := range perBar {
		if v == 0 {
			continue
		}
		rate := float64(v) * perMinute
		h := rate / top * ch.PlotHeight
		from := t0.Add(time.Duration(i) * step)
		w := math.Min(bw*0.8, 48) // a short run's few bars stay bars
		ch.Bars = append(ch.Bars, ChartBar{X: r1(ch.Left + (float64(i)+0.5)*bw - w/2), W: r1(w), Y: r1(ch.Top + ch.PlotHeight - h), H: r1(h),
			Title: fmt.Sprintf("%s, %s: calls %d (%s a minute)", from.UTC().Format("15:04:05"), step, v, strconv.FormatFloat(rate, 'f', -1, 64))})
		if throttled[i] > 0 {
			ch.Throttles = append(ch.Throttles, ChartMark{X: r1(ch.Left + (float64(i)+0.5)*bw), Y: r1(ch.Top + ch.PlotHeight - h - 4), Count: throttled[i],
				Title: fmt.Sprintf("%s: %d answered 429 (too many requests)", from.UTC().Format("15:04:05"), throttled[i])})
		}
	}
	band := func(from, to time.Time, title string) {
		w := math.Max(x(to)-x(from), 2)
		ch.Pauses = append(ch.Pauses, ChartBand{X: r1(x(from)), W: r1(w), Title: title})
		ch.Pause = max(ch.Pause, to.Sub(from))
	}
	last := calls[0].at
	for i, c := range calls {
		if i > 0 && c.sent.Sub(last) >= pauseMin {
			band(last, c.sent, fmt.Sprintf("no call for %s, from %s", durationText(c.sent.Sub(last)), last.UTC().Format("2006-01-02 15:04:05")))
		}
		if c.waited > 0 {
			band(c.at.Add(-c.waited), c.at, fmt.Sprintf("waited %s before retrying (429 or backoff)", durationText(c.waited)))
		}
		if c.at.After(last) {
			last = c.at
		}
	}
	for v := 0.0; v <= top+tick/2; v += tick {
		ch.YTicks = append(ch.YTicks, ChartTick{Pos: r1(ch.Top + ch.PlotHeight - v/top*ch.PlotHeight), Label: fmt.Sprintf("%.0f", v)})
	}
	layout := "15:04:05"
	if span > 24*time.Hour {
		layout = "Jan 2 15:04"
	} else if step >= time.Minute {
		layout = "15:04"
	}
	// Under the middle of a bar, labelled with its start, so that the last
	// label is not cut off at the edge.
	every := max(1, (n+5)/6)
	for i := 0; i < n; i += every {
		ch.XTicks = append(ch.XTicks, ChartTick{Pos: r1(ch.Left + (float64(i)+0.5)*bw), Label: t0.Add(time.Duration(i) * step).UTC().Format(layout)})
	}
	return ch
}

// r1 rounds a coordinate to a tenth of a pixel: a page that reads the same
// on every machine.
func r1(v float64) float64 { return math.Round(v*10) / 10 }

// niceScale is an axis top at or above peak and a tick of 1, 2 or 5
// times a power of ten, about five ticks.
func niceScale(peak float64) (top, tick float64) {
	if peak <= 0 {
		return 1, 1
	}
	raw := peak / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	tick = mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			tick = m * mag
			break
		}
	}
	tick = math.Max(tick, 1)
	return math.Ceil(peak/tick) * tick, tick
}
