package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// deepCopy copies rows through JSON, as Snapshot would hand them out.
func deepCopy[M ~map[string][]map[string]any](t *testing.T, m M) map[string][]map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string][]map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// asSnapshot turns expected data into what Snapshot would hold: with the
// server-assigned fields and nulls the comparison must ignore.
func asSnapshot(t *testing.T, want expected) map[string][]map[string]any {
	t.Helper()
	snap := deepCopy(t, want)
	for i, o := range snap["ORDERS"] {
		o["ORDNAME"], o["ORD"], o["ORDSTATUSDES"] = fmt.Sprintf("SO%08d", i+1), float64(i+1), nil
		if atts, ok := o["EXTFILES_SUBFORM"].([]any); ok {
			for _, a := range atts {
				a.(map[string]any)["CURDATE"] = "2026-11-01T09:00:00+00:00"
			}
		}
	}
	for i, c := range snap["CUSTOMERS"] {
		c["CUST"] = float64(i + 1)
	}
	return snap
}

// TestCompareCatches proves the campaigns' comparison sees each kind of
// damage they exist to find; a comparison that passes everything would
// make every campaign pass.
func TestCompareCatches(t *testing.T) {
	t.Parallel()
	l := generate(t, t.TempDir(), loadConfig{records: 60, seed: 3})
	if d := compare(l.want, nil, asSnapshot(t, l.want)); !d.ok() || d.Rows != l.records {
		t.Fatalf("the expected data itself: %v", d)
	}
	firstWith := func(snap map[string][]map[string]any, nav string) map[string]any {
		for _, o := range snap["ORDERS"] {
			if o[nav] != nil {
				return o
			}
		}
		t.Fatalf("the load has no order with %s", nav)
		return nil
	}
	tests := []struct {
		name   string
		damage func(snap map[string][]map[string]any)
		check  func(d diff) bool
	}{
		{"order duplicated", func(s map[string][]map[string]any) {
			dup := map[string]any{}
			for k, v := range s["ORDERS"][0] {
				dup[k] = v
			}
			dup["ORDNAME"] = "SO99999999"
			s["ORDERS"] = append(s["ORDERS"], dup)
		}, func(d diff) bool { return len(d.Duplicated) == 1 }},
		{"customer missing", func(s map[string][]map[string]any) { s["CUSTOMERS"] = s["CUSTOMERS"][1:] },
			func(d diff) bool { return len(d.Missing) == 1 }},
		{"part extra", func(s map[string][]map[string]any) {
			s["LOGPART"] = append(s["LOGPART"], map[string]any{"PARTNAME": "X-1", "PARTDES": "stray"})
		}, func(d diff) bool { return len(d.Extra) == 1 }},
		{"line lost", func(s map[string][]map[string]any) {
			o := firstWith(s, "ORDERITEMS_SUBFORM")
			o["ORDERITEMS_SUBFORM"] = o["ORDERITEMS_SUBFORM"].([]any)[1:]
		}, func(d diff) bool { return len(d.Different) == 1 }},
		{"text appended twice", func(s map[string][]map[string]any) {
			txt := firstWith(s, "ORDERSTEXT_SUBFORM")["ORDERSTEXT_SUBFORM"].(map[string]any)
			txt["TEXT"] = txt["TEXT"].(string) + txt["TEXT"].(string)
		}, func(d diff) bool { return len(d.Different) == 1 }},
		{"attachment twice", func(s map[string][]map[string]any) {
			o := firstWith(s, "EXTFILES_SUBFORM")
			atts := o["EXTFILES_SUBFORM"].([]any)
			o["EXTFILES_SUBFORM"] = append(atts, atts[0])
		}, func(d diff) bool { return len(d.Different) == 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := asSnapshot(t, l.want)
			tc.damage(snap)
			if d := compare(l.want, nil, snap); d.ok() || !tc.check(d) {
				t.Errorf("not caught as it should be: %v", d)
			}
		})
	}
}

// TestCompareCatchesTouchedCompany proves the comparison sees what a run
// may do to a company that held data before it: take a look-alike order
// for its own, change it, delete it (apply or undo), or leave its own data
// behind after undo.
func TestCompareCatchesTouchedCompany(t *testing.T) {
	t.Parallel()
	l := generate(t, t.TempDir(), loadConfig{records: 60, seed: 3, upsert: true})
	own := asSnapshot(t, l.want)
	// The company: the first customer (the load upserts it), an order
	// like the load's first with a line, one like it without, and an order
	// of its own.
	lookAlike := func(ordname string, lines bool) map[string]any {
		o := map[string]any{}
		for k, v := range own["ORDERS"][0] {
			o[k] = v
		}
		o["ORDNAME"], o["ORD"] = ordname, float64(9000+len(ordname))
		delete(o, "ORDERITEMS_SUBFORM")
		if lines {
			o["ORDERITEMS_SUBFORM"] = []any{map[string]any{"PARTNAME": "P-00001", "TQUANT": 1.0, "PRICE": 2.0, "KLINE": 1.0}}
		}
		return o
	}
	before := company{
		"CUSTOMERS": {own["CUSTOMERS"][0], {"CUSTNAME": "X-OWN", "CUSTDES": "own", "CUST": 900.0}},
		"ORDERS":    {lookAlike("SO90000001", true), lookAlike("SO900000002", false), {"ORDNAME": "SO90000003", "CUSTNAME": "X-OWN", "DETAILS": "own"}},
	}
	// after apply: the company plus the load's data; after undo: the company.
	// Each a copy: a damage must not reach before.
	afterApply := func() map[string][]map[string]any {
		snap, held := asSnapshot(t, l.want), deepCopy(t, before)
		snap["CUSTOMERS"] = append(snap["CUSTOMERS"], held["CUSTOMERS"][1])
		snap["ORDERS"] = append(snap["ORDERS"], held["ORDERS"]...)
		return snap
	}
	if d := compare(l.want, before, afterApply()); !d.ok() || d.Rows != l.records {
		t.Fatalf("the company and the load: %v", d)
	}
	if left := leftovers(before, map[string][]map[string]any(before)); len(left) > 0 {
		t.Fatalf("the company alone: %v", left)
	}
	drop := func(rows []map[string]any, key string) []map[string]any {
		var out []map[string]any
		for _, r := range rows {
			if r["ORDNAME"] != key && r["CUSTNAME"] != key {
				out = append(out, r)
			}
		}
		return out
	}
	firstOrder := own["ORDERS"][0]["ORDNAME"].(string)
	tests := []struct {
		name   string
		damage func(snap map[string][]map[string]any)
		check  func(d diff) bool
	}{
		{"look-alike taken for the load's own", func(s map[string][]map[string]any) { s["ORDERS"] = drop(s["ORDERS"], firstOrder) },
			func(d diff) bool { return len(d.Missing) == 1 && len(d.Touched) == 0 }},
		{"look-alike without lines given the load's lines", func(s map[string][]map[string]any) {
			s["ORDERS"] = drop(s["ORDERS"], firstOrder)
			for _, o := range s["ORDERS"] {
				if o["ORDNAME"] == "SO900000002" {
					o["ORDERITEMS_SUBFORM"] = own["ORDERS"][0]["ORDERITEMS_SUBFORM"]
				}
			}
		}, func(d diff) bool { return len(d.Missing) == 1 && len(d.Touched) == 1 }},
		{"look-alike deleted", func(s map[string][]map[string]any) { s["ORDERS"] = drop(s["ORDERS"], "SO90000001") },
			func(d diff) bool { return len(d.Touched) == 1 && len(d.Missing) == 0 }},
		{"customer held before deleted", func(s map[string][]map[string]any) {
			s["CUSTOMERS"] = drop(s["CUSTOMERS"], own["CUSTOMERS"][0]["CUSTNAME"].(string))
		}, func(d diff) bool { return len(d.Touched) == 1 && len(d.Missing) == 1 }},
		{"order of its own changed", func(s map[string][]map[string]any) {
			for _, o := range s["ORDERS"] {
				if o["ORDNAME"] == "SO90000003" {
					o["DETAILS"] = "SRC-000001"
				}
			}
		}, func(d diff) bool { return len(d.Touched) == 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := afterApply()
			tc.damage(snap)
			if d := compare(l.want, before, snap); d.ok() || !tc.check(d) {
				t.Errorf("not caught as it should be: %v", d)
			}
		})
	}

	// After undo: the company exactly, nothing of the load.
	for _, tc := range []struct {
		name   string
		damage func(snap map[string][]map[string]any)
	}{
		{"look-alike deleted by undo", func(s map[string][]map[string]any) { s["ORDERS"] = drop(s["ORDERS"], "SO900000002") }},
		{"customer held before deleted by undo", func(s map[string][]map[string]any) { s["CUSTOMERS"] = drop(s["CUSTOMERS"], "X-OWN") }},
		{"an order of the load left", func(s map[string][]map[string]any) { s["ORDERS"] = append(s["ORDERS"], own["ORDERS"][3]) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := deepCopy(t, before)
			tc.damage(snap)
			if left := leftovers(before, snap); len(left) != 1 {
				t.Errorf("undo's leftovers: got %v, want one", left)
			}
		})
	}
}

// TestWritersSeeTwoAtOnce proves the two-run rounds' watch sees two users
// writing at the same time, and not one user's concurrent batches, nor a
// write of a run killed with it in flight (its connection closed), which
// no client can call back and the run that takes the journal over
// reconciles.
func TestWritersSeeTwoAtOnce(t *testing.T) {
	t.Parallel()
	w := newWriters()
	served, release := make(chan context.Context), make(chan struct{})
	srv := httptest.NewServer(w.wrap(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		served <- r.Context()
		<-release
	})))
	defer srv.Close()
	done := make(chan struct{}, 4)
	send := func(ctx context.Context, user string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
		req.SetBasicAuth(user, user)
		if res, err := srv.Client().Do(req); err == nil {
			res.Body.Close()
		}
		done <- struct{}{}
	}
	killed, kill := context.WithCancel(context.Background())
	go send(killed, "demo2")
	dead := <-served
	kill() // the client goes, its connection with it
	<-dead.Done()
	go send(context.Background(), "demo")
	<-served
	go send(context.Background(), "demo") // the same run's second batch in flight
	<-served
	if n := w.overlaps.Load(); n != 0 {
		t.Errorf("one user's two batches, beside a killed run's write still at the server, counted as %d overlaps", n)
	}
	go send(context.Background(), "demo2")
	<-served
	if n := w.overlaps.Load(); n != 1 {
		t.Errorf("a second user writing while the first is in flight: %d overlaps, want 1", n)
	}
	close(release)
	for range 4 {
		<-done
	}
	w.idle()
}

// fatalTB stands in for the test given to a campaign's helper: its Fatalf
// is recorded and ends the helper's goroutine, as testing's does.
type fatalTB struct {
	testing.TB
	fatal string
}

func (f *fatalTB) Helper()             {}
func (f *fatalTB) Logf(string, ...any) {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestResumeCatchesAStuckResume proves the campaigns' resume loop fails a
// resume that stops again and again with nothing to decide (which would
// otherwise run up to maxAttempts, and past go test's timeout), resets
// its count on a kill or a stop that moved the round on, and returns the
// run that exits 0.
func TestResumeCatchesAStuckResume(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		codes []int // the attempts' exits in turn: -1 killed
		// progress: the exits 4 that moved the round on, by attempt
		progress map[int]bool
		stuck    bool
		done     int // the attempt that exits 0
	}{
		{name: "five stops in a row", codes: []int{4, 4, 4, 4, 4, 0}, stuck: true},
		{name: "a kill between", codes: []int{4, 4, 4, 4, -1, 4, 4, 4, 4, 0}, done: 9},
		{name: "a stop that moved on", codes: []int{4, 4, 4, 4, 4, 4, 0}, progress: map[int]bool{3: true}, done: 6},
		{name: "finished at once", codes: []int{0}},
		{name: "another exit", codes: []int{4, 1}, stuck: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fatalTB{TB: t}
			got, cur := -1, 0
			ended := make(chan struct{})
			go func() {
				defer close(ended)
				_, got = resume(ft, 1, phase{
					what: "apply",
					kill: func(int) time.Duration { return 0 },
					run: func(attempt int, _ time.Duration) []outcome {
						cur = attempt
						c := tc.codes[attempt]
						return []outcome{{code: c, killed: c == -1}}
					},
					stopped: func(outcome) bool { return tc.progress[cur] },
				})
			}()
			<-ended
			if tc.stuck != (ft.fatal != "") {
				t.Fatalf("failed: %q, want a failure: %v", ft.fatal, tc.stuck)
			}
			if !tc.stuck && got != tc.done {
				t.Errorf("finished at attempt %d, want %d", got, tc.done)
			}
		})
	}
}
