package crashtest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/sandbox"
)

var crashChanging = flag.Int("crash.changing-source", 24, "crash campaign: kills to land in rounds that copy part families from a template company that changes during the copy (0: none)")

// templateRowCap is the rows a page of the template company holds, so
// that a copy of a few hundred families takes dozens of pages.
const templateRowCap = 7

// changingBatch is the plan's batch_size in the changing-source rounds:
// small, so that the copy's writes interleave with its pages and a kill
// lands mid-read.
const changingBatch = 10

// The plan of the changing-source rounds: part families with
// their malfunction lines, copied from the template company as
// sources-copy.txtar does; the Z families are left out by the filter.
const changingPlanYAML = `version: 1
name: copy-from-a-live-template
target:
  batch_size: %d
  concurrency: %d
connections:
  template: {url: "https://template.example.com/odata/Priority/tabula.ini/tmpl"}
sources:
  families:
    connection: template
    entity: FAMILY_LOG
    select: [FAMILYNAME, FAMILYDESC, DEBITFLAG]
    expand: FAMILYMALF_SUBFORM
    filter: "FAMILYNAME lt 'Z'"
steps:
  - name: families
    entity: FAMILY_LOG
    source: families
    fields:
      FAMILYNAME: row.FAMILYNAME
      FAMILYDESC: row.FAMILYDESC
      DEBITFLAG: row.DEBITFLAG
    subforms:
      - name: FAMILYMALF_SUBFORM
        each: row.FAMILYMALF_SUBFORM
        fields:
          MALFCODE: row.MALFCODE
          MALFDES: row.MALFDES
`

// changingFigures are the results of the changing-source rounds.
type changingFigures struct {
	Rounds      int
	Families    int // families the template holds when a round starts (under the filter)
	Lines       int // their malfunction lines
	Pages       int // pages of an uninterrupted read of them
	ApplyKills  int
	ResumeKills int // of those, kills of a run that started on a journal holding work
	UndoKills   int
	Finished    int // runs that ended before their kill
	Interrupted int // runs that exited 4 (and were resumed)
	MidRun      int // changes made while a run read the template (at its Nth page)
	Between     int // changes made between runs (after a kill, or an exit 4 under -crash.faults)
	// Families inserted at keys before and after the copy's position, and
	// deleted once copied or before the copy reached them.
	InsertedBehind, InsertedAhead, DeletedCopied, DeletedAhead int
	// Stable is families the template held from the start to the end of
	// the run that finished; MidLost those of them not copied exactly.
	Stable, MidLost   int
	MidBad            int // families duplicated, different or invented on the target right after a kill
	Missing, Dup, Bad int // over all rounds, after the last apply
	Invented          int // families on the target the template never held
	DeletedLeft       int // families deleted from the template after they were copied, still on the target (allowed)
	Survived          int
	Leftovers         int // families undo left behind, or that the target held and lost
}

// liveTemplate is the template company of a changing-source round: a
// sandbox the plan copies FAMILY_LOG from, which the round changes between
// runs and, through its handler, while a run reads it. Keys are F plus
// five digits: the families it starts with are every tenth number, the
// ones it inserts take numbers between, and no number is used twice, so
// a family deleted is never confused with one inserted after.
type liveTemplate struct {
	t      testing.TB
	tg     *target
	target *target // where the copy goes: a family it holds is copied
	f      *changingFigures

	mu    sync.Mutex
	rng   *rand.Rand
	span  int          // key numbers are below it
	used  map[int]bool // key numbers ever given
	gone  map[string]map[string]any
	pos   string // the last family the current (or last) run's read was given: the copy's position
	pages int    // reads of the collection since arm
	at    int    // the page before which the template changes (0: none)
}

// startTemplate starts the template company of a round holding families
// families (0-3 lines each) and five Z families the plan's filter leaves
// out, and the target the copy goes to, an empty company with faults,
// whose runs reach the template as connection "template".
func startTemplate(t testing.TB, families int, seed int64, faults map[string]float64, f *changingFigures) (*liveTemplate, *target) {
	t.Helper()
	l := &liveTemplate{t: t, f: f, rng: rand.New(rand.NewSource(seed)), span: 10 * families, used: map[int]bool{}, gone: map[string]map[string]any{}}
	// No latency on the template: the round's own changes go through its
	// handler, a few hundred to fill it; the target's latency paces a run.
	l.tg = startSandbox(t, sandbox.Options{Seed: seed, RowCap: templateRowCap}, l.wrap)
	for i := range families {
		l.insert(10 * i)
	}
	for i := range 5 {
		l.post(fmt.Sprintf("Z%05d", i))
	}
	tg := startSandbox(t, sandbox.Options{Latency: *crashLatency, Seed: seed, Faults: faults}, nil)
	tg.env = []string{"MIGRATE_TEMPLATE_TARGET=" + l.tg.url, "MIGRATE_TEMPLATE_USER=demo", "MIGRATE_TEMPLATE_PASSWORD=demo", "MIGRATE_TEMPLATE_AUTH=basic"}
	l.target = tg
	return l, tg
}

// wrap counts the template's reads of FAMILY_LOG, changes the template
// before it serves the armed one, and keeps the last family each answer
// gives: the copy's position, however the client pages.
func (l *liveTemplate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/FAMILY_LOG") {
			h.ServeHTTP(w, r)
			return
		}
		l.mu.Lock()
		l.pages++
		if l.pages == l.at {
			l.f.MidRun++
			l.changeLocked()
		}
		l.mu.Unlock()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var page struct {
			Value []struct{ FAMILYNAME string } `json:"value"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &page) == nil && len(page.Value) > 0 {
			l.mu.Lock()
			l.pos = page.Value[len(page.Value)-1].FAMILYNAME
			l.mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// arm makes the template change before the run's page-th read of it (0:
// not at all), counting from now.
func (l *liveTemplate) arm(page int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pages, l.at, l.pos = 0, page, ""
}

// change changes the template between runs, around the position where
// the last read stopped.
func (l *liveTemplate) change() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.f.Between++
	l.changeLocked()
}

// changeLocked inserts families at free keys before the copy's position
// and after it, and deletes families read and copied already and ones
// after the position not copied yet, 0-2 of each. Behind the position
// the inserts and deletes never cancel out: a reader that counts rows
// ($skip) rather than follow keys is thrown off by every change.
func (l *liveTemplate) changeLocked() {
	pos := -1
	if n, err := strconv.Atoi(strings.TrimPrefix(l.pos, "F")); err == nil {
		pos = n
	}
	copied := map[string]bool{}
	for _, row := range l.target.sb.Snapshot()["FAMILY_LOG"] {
		copied[row["FAMILYNAME"].(string)] = true
	}
	var behind, ahead []map[string]any
	for _, row := range l.families() {
		switch name := row["FAMILYNAME"].(string); {
		case copied[name] && name <= l.pos:
			behind = append(behind, row)
		case !copied[name] && name > l.pos:
			ahead = append(ahead, row)
		}
	}
	insBehind, delBehind := l.rng.Intn(3), l.rng.Intn(3)
	if insBehind == delBehind {
		delBehind = (delBehind + 1) % 3
	}
	for range insBehind {
		if n, ok := l.freeKey(0, pos); ok {
			l.insert(n)
			l.f.InsertedBehind++
		}
	}
	for range l.rng.Intn(3) {
		if n, ok := l.freeKey(pos+1, l.span); ok {
			l.insert(n)
			l.f.InsertedAhead++
		}
	}
	l.rng.Shuffle(len(behind), func(i, j int) { behind[i], behind[j] = behind[j], behind[i] })
	for _, row := range behind[:min(delBehind, len(behind))] {
		l.delete(row)
		l.f.DeletedCopied++
	}
	l.rng.Shuffle(len(ahead), func(i, j int) { ahead[i], ahead[j] = ahead[j], ahead[i] })
	for _, row := range ahead[:min(l.rng.Intn(3), len(ahead))] {
		l.delete(row)
		l.f.DeletedAhead++
	}
}

// freeKey picks a key number in [lo, hi) never given, off the tenths.
func (l *liveTemplate) freeKey(lo, hi int) (int, bool) {
	for range 50 {
		if hi <= lo {
			return 0, false
		}
		n := lo + l.rng.Intn(hi-lo)
		if n%10 != 0 && !l.used[n] {
			return n, true
		}
	}
	return 0, false
}

// families is what the template holds under the plan's filter, sorted.
func (l *liveTemplate) families() []map[string]any {
	var out []map[string]any
	for _, row := range l.tg.sb.Snapshot()["FAMILY_LOG"] {
		if row["FAMILYNAME"].(string) < "Z" {
			out = append(out, row)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["FAMILYNAME"].(string) < out[j]["FAMILYNAME"].(string) })
	return out
}

// byName is families normalised as the comparison reads them, by name.
func byName(rows []map[string]any) map[string]map[string]any {
	out := make(map[string]map[string]any, len(rows))
	for _, row := range rows {
		out[row["FAMILYNAME"].(string)] = normalize("FAMILY_LOG", row)
	}
	return out
}

func (l *liveTemplate) insert(n int) {
	l.used[n] = true
	l.post(fmt.Sprintf("F%05d", n))
}

// post creates a family with 0-3 malfunction lines in the template.
func (l *liveTemplate) post(name string) {
	r := l.rng
	text := func(prefix string) string {
		s := []rune(fmt.Sprintf("%s %s %s", prefix, words[r.Intn(len(words))], words[r.Intn(len(words))]))
		return string(s[:min(len(s), 32)])
	}
	fam := map[string]any{"FAMILYNAME": name, "FAMILYDESC": text(name), "DEBITFLAG": []string{"Y", "N"}[r.Intn(2)]}
	var lines []map[string]any
	for i := range r.Intn(4) {
		lines = append(lines, map[string]any{"MALFCODE": fmt.Sprintf("M%d", i+1), "MALFDES": text("Malf")})
	}
	if lines != nil {
		fam["FAMILYMALF_SUBFORM"] = lines
	}
	b, _ := json.Marshal(fam) // strings and lists of them
	l.do(http.MethodPost, "FAMILY_LOG", b, http.StatusCreated)
}

// delete deletes a family from the template, keeping it as it was.
func (l *liveTemplate) delete(row map[string]any) {
	name := row["FAMILYNAME"].(string)
	l.gone[name] = normalize("FAMILY_LOG", row)
	l.do(http.MethodDelete, "FAMILY_LOG('"+name+"')", nil, http.StatusNoContent)
}

// do sends a request to the template's sandbox as its user would, past
// the hook (which may hold the lock).
func (l *liveTemplate) do(method, path string, body []byte, want int) {
	req := httptest.NewRequest(method, sandbox.BasePath+"/"+path, bytes.NewReader(body))
	req.SetBasicAuth("demo", "demo")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	l.tg.sb.ServeHTTP(rec, req)
	if rec.Code != want {
		// Called from the handler too: Errorf, not Fatalf, off the test's goroutine.
		l.t.Errorf("template: %s %s: %d: %s", method, path, rec.Code, rec.Body.String())
	}
}

// copyDiff compares the families the target holds (got) with want, the
// template's, by name: each exactly once with the same fields and lines.
// A family on the target beyond want must be one of others (held by the
// template at some time during the round) exactly as the template held
// it; left counts those, anything else was invented.
func copyDiff(want, others map[string]map[string]any, got []map[string]any) (d diff, left int) {
	count := map[string]int{}
	have := map[string]map[string]any{}
	for _, row := range got {
		name := row["FAMILYNAME"].(string)
		count[name]++
		have[name] = normalize("FAMILY_LOG", row)
	}
	differs := func(name string, w map[string]any) bool {
		if ws, gs := canonical(w), canonical(have[name]); ws != gs {
			d.Different = append(d.Different, fmt.Sprintf("FAMILY_LOG %s:\n    want %s\n    got  %s", name, ws, gs))
			return true
		}
		return false
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		d.Rows++
		switch count[name] {
		case 0:
			d.Missing = append(d.Missing, "FAMILY_LOG "+name)
		case 1:
			differs(name, want[name])
		default:
			d.Duplicated = append(d.Duplicated, fmt.Sprintf("FAMILY_LOG %s (%d times)", name, count[name]))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(have)) {
		if _, ok := want[name]; ok {
			continue
		}
		o, ok := others[name]
		switch {
		case !ok:
			d.Extra = append(d.Extra, fmt.Sprintf("FAMILY_LOG %s (%d): the template never held it", name, count[name]))
		case count[name] > 1:
			d.Duplicated = append(d.Duplicated, fmt.Sprintf("FAMILY_LOG %s (%d times)", name, count[name]))
		case !differs(name, o):
			left++
		}
	}
	return d, left
}

// TestCrashChangingSource is the crash round of a changing source: the plan
// copies part families with their malfunction lines from a template company
// (another sandbox, answering seven rows a page) while the template
// changes: after every kill, and during every run at a random page of its
// read, families are inserted at keys before and after the copy's
// position and deleted, some already copied, some not yet. `migrate
// apply` is killed at seeded random moments and resumed until it exits 0,
// then run once more after the changes stop, then undone (killed too).
// With -crash.faults the target drops connections and answers 500s too
// (not during the calibration): a run then also stops with exit 4, and
// the template changes before the resume as after a kill.
// Exact: every family the template holds at the end is on the target
// once, with its fields and lines; every family the template held from
// the start to the end of the run that finished is there after that run;
// anything else on the target is a family deleted from the template, as
// it was there; and undo leaves the target as it was.
func TestCrashChangingSource(t *testing.T) {
	if *crashChanging == 0 {
		t.Skip("-crash.changing-source=0")
	}
	t.Parallel()
	const name = "copy from a template that changes"
	dir := t.TempDir()
	planPath := filepath.Join(dir, "copy.yaml")
	if err := os.WriteFile(planPath, fmt.Appendf(nil, changingPlanYAML, changingBatch, *crashConc), 0o644); err != nil {
		t.Fatal(err)
	}
	n := *crashKindSize
	f := &changingFigures{}
	rng := rand.New(rand.NewSource(*crashSeed))
	targetFamilies := func(tg *target) []map[string]any { return tg.sb.Snapshot()["FAMILY_LOG"] }
	faults := crashFaultRates(t) // on the target, after the calibration

	// Calibrate on a template that does not change.
	var span, undoSpan, overhead time.Duration
	{
		l, tg := startTemplate(t, n, *crashSeed, nil, f)
		fams := l.families()
		f.Families = len(fams)
		for _, fam := range fams {
			lines, _ := fam["FAMILYMALF_SUBFORM"].([]map[string]any)
			f.Lines += len(lines)
		}
		j := filepath.Join(dir, "calibrate.journal")
		l.arm(0)
		span = mustRun(t, tg, dir, "apply", planPath, "--journal", j).took
		l.mu.Lock()
		f.Pages = l.pages
		l.mu.Unlock()
		if d, _ := copyDiff(byName(fams), nil, targetFamilies(tg)); !d.ok() {
			t.Fatalf("an uninterrupted copy is not exact: %v", d)
		}
		overhead = mustRun(t, tg, dir, "apply", planPath, "--journal", j).took
		undoSpan = mustRun(t, tg, dir, "undo", j, "--yes").took
		if left := targetFamilies(tg); len(left) > 0 {
			t.Fatalf("an uninterrupted undo left %d families", len(left))
		}
	}
	t.Logf("%s: %d families, %d lines, %d pages a read; uninterrupted apply %v, undo %v, apply again %v",
		name, f.Families, f.Lines, f.Pages, span.Round(time.Millisecond), undoSpan.Round(time.Millisecond), overhead.Round(time.Millisecond))

	perRound := max(*crashPerRound, 2)
	applyKills, undoKills := max(perRound*3/4, 1), max(perRound/4, 1)
	kills := func() int { return f.ApplyKills + f.UndoKills }
	for kills() < *crashChanging {
		f.Rounds++
		l, tg := startTemplate(t, n, rng.Int63(), faults, f)
		before := targetFamilies(tg)
		j := filepath.Join(dir, fmt.Sprintf("changing-%d.journal", f.Rounds))

		// Apply, killed and resumed until it exits 0; each run changes the
		// template at a random page of its read, each stop once more.
		var started []map[string]any // what the template held when the last run started
		o, attempt := resume(t, f.Rounds, phase{
			what: "apply",
			kill: applyKill(rng, kills, *crashChanging, applyKills, undoKills, overhead, &span),
			run: func(_ int, kill time.Duration) []outcome {
				l.arm(2 + rng.Intn(max(f.Pages-3, 1)))
				started = l.families()
				return []outcome{migrate(t, tg, dir, kill, "apply", planPath, "--journal", j)}
			},
			killed: func(_ outcome, attempt int) {
				f.ApplyKills++
				if attempt > 0 {
					f.ResumeKills++
				}
			},
			// With faults a run stops at its first batch in doubt.
			stopped: func(outcome) bool { f.Interrupted++; return faults != nil },
			after: func(_ int, kill time.Duration, _ bool) {
				// Families are missing mid-run; none is invented, twice, or
				// other than the template held it.
				l.mu.Lock()
				ever := byName(l.families())
				for k, v := range l.gone {
					ever[k] = v
				}
				l.mu.Unlock()
				if d, _ := copyDiff(nil, ever, targetFamilies(tg)); !d.ok() {
					f.MidBad += len(d.Duplicated) + len(d.Different) + len(d.Extra)
					t.Errorf("round %d: after the kill at %v: %v", f.Rounds, kill, d)
				}
				l.change()
			},
		})
		f.Finished++
		span = renew(span, o, attempt)
		l.arm(0)

		// The run that finished read the template while it changed: every
		// family the template held from that run's start to its end is
		// on the target.
		now := byName(l.families())
		stable := map[string]map[string]any{}
		for name, fam := range byName(started) {
			if _, ok := now[name]; ok {
				stable[name] = fam
			}
		}
		others := map[string]map[string]any{}
		for _, m := range []map[string]map[string]any{now, l.gone} {
			for k, v := range m {
				others[k] = v
			}
		}
		f.Stable += len(stable)
		if d, _ := copyDiff(stable, others, targetFamilies(tg)); !d.ok() {
			f.MidLost += len(d.Missing) + len(d.Duplicated) + len(d.Different) + len(d.Extra)
			t.Errorf("round %d: after the run that finished: %v", f.Rounds, d)
		}
		if st := status(t, tg, dir, j); !st.Complete {
			t.Errorf("round %d: status says the journal is not complete: %+v", f.Rounds, st)
		}

		// The changes stop: one more apply copies what the runs could not
		// see (families inserted behind their position), and the target
		// holds the template's families exactly.
		for attempt := 0; ; attempt++ {
			o := migrate(t, tg, dir, 0, "apply", planPath, "--journal", j)
			if o.code == 0 {
				break
			}
			if o.code != 4 || faults == nil || attempt == maxAttempts {
				t.Fatalf("round %d: the last apply exited %d\nstdout:\n%.3000s\nstderr:\n%s", f.Rounds, o.code, o.stdout, o.stderr)
			}
			f.Interrupted++
		}
		d, left := copyDiff(byName(l.families()), l.gone, targetFamilies(tg))
		f.Missing += len(d.Missing)
		f.Dup += len(d.Duplicated)
		f.Bad += len(d.Different)
		f.Invented += len(d.Extra)
		f.DeletedLeft += left
		if !d.ok() {
			t.Errorf("round %d: after the last apply: %v", f.Rounds, d)
		}

		// Undo, killed and resumed until it exits 0.
		// An undo batch in doubt (-crash.faults) counts as interrupted.
		undoAll(t, oneRun(t, tg, dir), j, f.Rounds, rng, &undoSpan,
			func(attempt int) bool { return kills() < *crashChanging && attempt < 2*undoKills },
			&f.UndoKills, &f.Interrupted)
		f.Finished++
		if after := targetFamilies(tg); canonical(after) != canonical(before) {
			f.Leftovers += max(len(after)-len(before), 1)
			t.Errorf("round %d: undo left the target with %d families, it held %d before", f.Rounds, len(after), len(before))
		}
		if d.ok() && !t.Failed() {
			f.Survived++
		}
		if t.Failed() {
			break
		}
	}
	t.Logf("%s: %d rounds, %d kills (%d in apply, %d of them in a resume; %d in undo), %d runs finished before their kill, %d exits 4",
		name, f.Rounds, kills(), f.ApplyKills, f.ResumeKills, f.UndoKills, f.Finished, f.Interrupted)
	t.Logf("%s: template changed %d times during a run, %d times between runs: %d families inserted behind the copy's position, %d ahead; %d deleted once copied, %d before",
		name, f.MidRun, f.Between, f.InsertedBehind, f.InsertedAhead, f.DeletedCopied, f.DeletedAhead)
	t.Logf("%s: %d of %d rounds exact; after the run that finished %d families held throughout, %d of them not copied exactly; after the last apply lost %d, duplicated %d, different %d, invented %d, deleted from the template and left on the target %d; mid-run duplicated, different or invented %d; left after undo %d",
		name, f.Survived, f.Rounds, f.Stable, f.MidLost, f.Missing, f.Dup, f.Bad, f.Invented, f.DeletedLeft, f.MidBad, f.Leftovers)
	appendResults(t, "Crash campaign: "+name, changingTable(f))
}

// changingTable is the figures of the changing-source rounds as a
// Markdown table.
func changingTable(f *changingFigures) string {
	return fmt.Sprintf("| rounds | families (+ lines) | pages a read | kills | in apply | of which in a resume | in undo | runs ended before their kill | exits 4 | changes during a run / between runs | inserted behind / ahead | deleted copied / not yet | held throughout the finishing run | of which not copied exactly | rounds exact | lost | duplicated | different | invented | deleted, left on the target | bad mid-run | left after undo |\n"+
		"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"+
		"| %d | %d (+%d) | %d | %d | %d | %d | %d | %d | %d | %d / %d | %d / %d | %d / %d | %d | %d | %d of %d | %d | %d | %d | %d | %d | %d | %d |\n",
		f.Rounds, f.Families, f.Lines, f.Pages, f.ApplyKills+f.UndoKills, f.ApplyKills, f.ResumeKills, f.UndoKills, f.Finished, f.Interrupted,
		f.MidRun, f.Between, f.InsertedBehind, f.InsertedAhead, f.DeletedCopied, f.DeletedAhead, f.Stable, f.MidLost,
		f.Survived, f.Rounds, f.Missing, f.Dup, f.Bad, f.Invented, f.DeletedLeft, f.MidBad, f.Leftovers)
}
