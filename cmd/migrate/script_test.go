package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/xuri/excelize/v2"

	"github.com/migrate-tool/migrate/cmd/migrate/cli"
	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/internal/scratch"
	"github.com/migrate-tool/migrate/odata/odatatest"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

func TestMain(m *testing.M) {
	testscript.Main(scratch.M(m), map[string]func(){
		// The binary as main runs it, but for the clients' clock: the
		// backoff before a retry and a 429's Retry-After pass at once (from
		// now, so a Retry-After date still means what it says), and a
		// server that keeps failing is tried as often, without the wait.
		"migrate": func() {
			clock := cli.WithClock(odatatest.NewClock(time.Now()))
			os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, clock))
		},
	})
}

// setupWork gives a script a home of its own (so no token cache is shared)
// and the example plans in $WORK/examples.
func setupWork(env *testscript.Env) error {
	env.Setenv("HOME", env.WorkDir)
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
	return copyDir("../../examples/plans", filepath.Join(env.WorkDir, "examples"))
}

// TestScripts runs the real binary on txtar scripts under testdata/script,
// with the example plans copied into $WORK/examples and, on `sandbox start`,
// a sandbox in this process whose data the script can dump and compare.
func TestScripts(t *testing.T) {
	t.Cleanup(capPool.Close)
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: golden.Updating(), // -update rewrites the files scripts compare against
		Setup:         setupWork,
		Condition:     scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sandbox":  cmdSandbox,
			"cap":      cmdCap,
			"xlsx":     cmdXLSX,
			"waitfile": cmdWaitFile,
			"tmpfs":    cmdTmpfs,
			"mig":      cmdMig,
			"resume":   cmdResume,
			"notes":    cmdNotes,
			"expand":   cmdExpand,
			"tamper":   cmdTamper,
		},
	})
}

// cmdSandbox: `sandbox start [VERSION] [key=value...]` (keys: refuse,
// latency, fault:KIND, quirks=all|a,b, unpermitted=FORM, rowcap=N (rows an answer holds at most), ignore=filter,skip (query options a hostile server ignores),...) starts a sandbox and
// points MIGRATE_TARGET, MIGRATE_USER and MIGRATE_PASSWORD at it;
// `sandbox dump SET...` prints what it holds of those entity sets as JSON,
// without the server-assigned values that change from run to run;
// `sandbox post PATH JSON` creates what a user makes by hand (as the
// service's own POST, docs/service.md, Writes); `sandbox drop-writes
// before|after N` makes the next N calls that write lose their connection
// before or after they take effect (in doubt either way); `sandbox patch PATH
// JSON` PATCHes an entity directly, as a user would, and `sandbox delete
// PATH` deletes one; `sandbox permit [FORM...]` leaves only the forms named
// unpermitted. `start companies=demo,test` declares the installation's
// companies (MIGRATE_TARGET addresses the first); dump, count, patch, post
// and delete address another company with `company=NAME` after the
// subcommand (default: the first). `sandbox hold N` lets N more $batch
// calls through and holds every later one until `sandbox release`: a run
// stands still in the middle of its load, for as long as the script needs,
// without a latency to outrun. A held call whose client goes away (killed)
// is served at once, as a server carries out a request it has received:
// the kill leaves that batch committed and in doubt.
func cmdSandbox(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: sandbox start [VERSION] | sandbox dump [company=NAME] SET... | sandbox patch [company=NAME] PATH JSON")
	}
	company := ""
	if len(args) > 1 && strings.HasPrefix(args[1], "company=") {
		company = strings.TrimPrefix(args[1], "company=")
		args = append(args[:1:1], args[2:]...)
	}
	// `sandbox CMD @NAME ...` is about the sandbox started with as=NAME.
	name := ""
	if len(args) > 1 && strings.HasPrefix(args[1], "@") {
		name = strings.TrimPrefix(args[1], "@")
		args = append([]string{args[0]}, args[2:]...)
	}
	switch args[0] {
	case "start":
		// A fixed clock keeps the values the server stamps (an attachment's
		// CURDATE) the same in every run.
		opts := sandbox.Options{Now: func() time.Time { return time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC) }}
		var ignore []string
		for _, a := range args[1:] {
			k, v, ok := strings.Cut(a, "=")
			switch {
			case !ok:
				opts.SystemVersion = a
			case k == "refuse":
				entity, key, _ := strings.Cut(v, ":")
				opts.RefuseKey = func(e, k string) string {
					if e == entity && k == key {
						return "record refused by the test"
					}
					return ""
				}
			case k == "latency":
				d, err := time.ParseDuration(v)
				ts.Check(err)
				opts.Latency = d
			case k == "quirks":
				q, err := sandbox.ParseQuirks(v)
				ts.Check(err)
				opts.Quirks = q
			case k == "unpermitted":
				opts.Unpermitted = strings.Split(v, ",")
			case k == "as":
				name = v
			case k == "ignore":
				// A server that ignores query options of collection reads
				// (a hostile source the sandbox does not imitate).
				ignore = strings.Split(v, ",")
			case k == "rowcap":
				n, err := strconv.Atoi(v)
				ts.Check(err)
				opts.RowCap = n
			case k == "companies":
				opts.Companies = strings.Split(v, ",")
			case strings.HasPrefix(k, "fault:"):
				r, err := strconv.ParseFloat(v, 64)
				ts.Check(err)
				if opts.Faults == nil {
					opts.Faults = map[string]float64{}
				}
				opts.Faults[strings.TrimPrefix(k, "fault:")] = r
			default:
				ts.Fatalf("sandbox start: unknown option %q", a)
			}
		}
		sb, err := sandbox.New(opts)
		ts.Check(err)
		var h http.Handler = sb
		if len(ignore) > 0 {
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				q := r.URL.Query()
				if q.Get("$top") != "1" { // a warm-up stays one
					for _, o := range ignore {
						q.Del("$" + o)
					}
					r.URL.RawQuery = q.Encode()
				}
				sb.ServeHTTP(w, r)
			})
		}
		g := &gate{}
		srv := httptest.NewServer(g.wrap(h))
		ts.Defer(srv.Close)
		ts.Defer(g.release) // before Close, which waits for held calls
		if name != "" {
			// Another installation, read through connection NAME of a plan:
			// its variables are the connection's own.
			env := "MIGRATE_" + strings.ToUpper(name) + "_"
			ts.Setenv(env+"TARGET", srv.URL+sandbox.CompanyPath(sb.Companies()[0]))
			ts.Setenv(strings.ToUpper(name)+"_SANDBOX_URL", srv.URL)
			ts.Setenv(env+"USER", "demo")
			ts.Setenv(env+"PASSWORD", "demo")
			ts.Setenv(env+"AUTH", "basic")
			sandboxMu.Lock()
			named[ts.Getenv("WORK")+"@"+name] = sb
			sandboxMu.Unlock()
			return
		}
		ts.Setenv("MIGRATE_TARGET", srv.URL+sandbox.CompanyPath(sb.Companies()[0]))
		ts.Setenv("SANDBOX_URL", srv.URL)
		ts.Setenv("MIGRATE_USER", "demo")
		ts.Setenv("MIGRATE_PASSWORD", "demo")
		ts.Setenv("MIGRATE_AUTH", "basic")
		sandboxMu.Lock()
		sandboxes[ts], gates[ts] = sb, g
		sandboxMu.Unlock()
	case "hold", "release":
		sandboxMu.Lock()
		g := gates[ts]
		sandboxMu.Unlock()
		if g == nil {
			ts.Fatalf("sandbox %s: no sandbox started", args[0])
		}
		if args[0] == "release" {
			g.release()
			return
		}
		if len(args) != 2 {
			ts.Fatalf("usage: sandbox hold N")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		g.hold(n)
	case "dump":
		sb := sandboxOf(ts, name)
		if sb == nil {
			ts.Fatalf("sandbox dump: no sandbox started")
		}
		snap := snapshotOf(ts, sb, company)
		out := map[string]any{}
		for _, set := range args[1:] {
			out[set] = scrub(snap[set])
		}
		b, err := json.MarshalIndent(out, "", "  ")
		ts.Check(err)
		fmt.Fprintln(ts.Stdout(), string(b))
	case "count":
		// `sandbox count SET FIELD PREFIX`: how many entities of SET have
		// FIELD starting with PREFIX, and how many distinct values.
		if len(args) != 4 {
			ts.Fatalf("usage: sandbox count SET FIELD PREFIX")
		}
		sandboxMu.Lock()
		sb := sandboxes[ts]
		sandboxMu.Unlock()
		if sb == nil {
			ts.Fatalf("sandbox count: no sandbox started")
		}
		n, distinct := 0, map[string]bool{}
		for _, ent := range snapshotOf(ts, sb, company)[args[1]] {
			if v := fmt.Sprint(ent[args[2]]); strings.HasPrefix(v, args[3]) {
				n++
				distinct[v] = true
			}
		}
		fmt.Fprintf(ts.Stdout(), "%d entities, %d distinct\n", n, len(distinct))
	case "stats":
		// `sandbox stats`: the $batch calls and sub-requests the sandbox
		// served so far (what a run sent, reads included).
		sb := sandboxOf(ts, name)
		if sb == nil {
			ts.Fatalf("sandbox stats: no sandbox started")
		}
		st := sb.Stats()
		fmt.Fprintf(ts.Stdout(), "batches %d subrequests %d\n", st.Batches, st.Subrequests)
	case "permit":
		// `sandbox permit FORM...`: the administrator grants the API user
		// permission on every form (only the ones named stay unpermitted).
		sandboxMu.Lock()
		sb := sandboxes[ts]
		sandboxMu.Unlock()
		if sb == nil {
			ts.Fatalf("sandbox permit: no sandbox started")
		}
		sb.SetUnpermitted(args[1:]...)
	case "patch", "post", "delete":
		// A user changing, making or deleting an entity or a line in the
		// ERP behind the tool's back; post prints what the service answered.
		payload := ""
		switch {
		case args[0] == "delete" && len(args) == 2:
		case args[0] != "delete" && len(args) == 3:
			payload = args[2]
		default:
			ts.Fatalf("usage: sandbox patch|post PATH JSON, sandbox delete PATH")
		}
		root := sandbox.BasePath
		sb := sandboxOf(ts, name)
		if company == "" && sb != nil {
			company = sb.Companies()[0]
		}
		if company != "" {
			root = sandbox.CompanyPath(company)
		}
		base := ts.Getenv("SANDBOX_URL")
		if name != "" {
			base = ts.Getenv(strings.ToUpper(name) + "_SANDBOX_URL")
		}
		var resp *http.Response
		var body []byte
		for try := 1; ; try++ {
			req, err := http.NewRequest(strings.ToUpper(args[0]), base+root+"/"+args[1], strings.NewReader(payload))
			ts.Check(err)
			req.SetBasicAuth("demo", "demo")
			req.Header.Set("Content-Type", "application/json")
			resp, err = http.DefaultClient.Do(req)
			ts.Check(err)
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			// A cold form (quirks) refuses a first POST with 404 and
			// stores nothing: the user tries again.
			if try == 2 || args[0] != "post" || resp.StatusCode != http.StatusNotFound {
				break
			}
		}
		if resp.StatusCode/100 != 2 {
			ts.Fatalf("sandbox %s %s: %s %s", args[0], args[1], resp.Status, body)
		}
		if args[0] == "post" {
			fmt.Fprintln(ts.Stdout(), string(body))
		}
	case "drop-writes":
		if len(args) != 3 || args[1] != "before" && args[1] != "after" {
			ts.Fatalf("usage: sandbox drop-writes before|after N")
		}
		n, err := strconv.Atoi(args[2])
		ts.Check(err)
		sandboxMu.Lock()
		sb := sandboxes[ts]
		sandboxMu.Unlock()
		if sb == nil {
			ts.Fatalf("sandbox drop-writes: no sandbox started")
		}
		sb.DropNextWrites(n, "drop-"+args[1]+"-commit")
	default:
		ts.Fatalf("sandbox: unknown subcommand %q", args[0])
	}
}

// cmdXLSX: `xlsx fill BOOK.xlsx SPEC` adds the rows of each sheet SPEC
// gives below the last row of that sheet of BOOK, as a person fills in a
// workbook (an intake workbook of migrate template); `xlsx write OUT.xlsx SPEC` writes the workbook SPEC describes
// (sourcetest.ParseWorkbook's text form) as a spreadsheet program saves
// one: blank cells absent from the sheet, shared strings, dates as serial
// numbers. `xlsx part FILE.xlsx PART` prints one part of a workbook, for a
// script to check what its XML holds.
func cmdXLSX(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("xlsx does not fail")
	}
	if len(args) != 3 || args[0] != "write" && args[0] != "part" && args[0] != "fill" {
		ts.Fatalf("usage: xlsx write OUT.xlsx SPEC | xlsx part FILE.xlsx PART | xlsx fill BOOK.xlsx SPEC")
	}
	if args[0] == "fill" {
		wb, err := sourcetest.ParseWorkbook(ts.ReadFile(args[2]))
		ts.Check(err)
		ts.Check(fillWorkbook(ts.MkAbs(args[1]), wb))
		return
	}
	if args[0] == "part" {
		body, err := sourcetest.ReadPart(ts.MkAbs(args[1]), args[2])
		ts.Check(err)
		ts.Stdout().Write(body)
		return
	}
	wb, err := sourcetest.ParseWorkbook(ts.ReadFile(args[2]))
	ts.Check(err)
	ts.Check(sourcetest.WriteWorkbook(ts.MkAbs(args[1]), wb))
}

// cmdNotes: `notes N [WIDTH]` writes customers.csv (N customers, Code and
// Name) and notes.csv (two notes a customer, Code and Subject, the second
// half a file after the first): a source too large to write into a
// script, whose groups and links do not stand together. With WIDTH each
// note also has a Text of WIDTH characters, which no plan maps: a source
// as many bytes as a longer one, in fewer rows.
func cmdNotes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: notes N [WIDTH]")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	width := 0
	if len(args) == 2 {
		width, err = strconv.Atoi(args[1])
		ts.Check(err)
	}
	ts.Check(sourcetest.WriteCSV(ts.MkAbs("customers.csv"), n, []string{"Code", "Name"}, func(r, c int) string {
		if c == 0 {
			return fmt.Sprintf("N%06d", r)
		}
		return fmt.Sprintf("Customer %d", r)
	}))
	header := []string{"Code", "Name", "Subject"}
	if width > 0 {
		header = append(header, "Text")
	}
	ts.Check(sourcetest.WriteCSV(ts.MkAbs("notes.csv"), 2*n, header, func(r, c int) string {
		switch c {
		case 0:
			return fmt.Sprintf("N%06d", r%n)
		case 1:
			return fmt.Sprintf("Customer %d", r%n)
		case 3:
			return strings.Repeat("x", width)
		}
		return fmt.Sprintf("note %d of N%06d", r/n+1, r%n)
	}))
}

// cmdWaitFile: `waitfile [-env NAME] FILE REGEXP` waits (up to a minute)
// until FILE exists and matches REGEXP, for a script that must act while
// a background command is at a given point; with -env, NAME is set to the
// first group of the match.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	env := ""
	if len(args) > 0 && args[0] == "-env" {
		if len(args) < 2 {
			ts.Fatalf("usage: waitfile [-env NAME] FILE REGEXP")
		}
		env, args = args[1], args[2:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfile [-env NAME] FILE REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	deadline := time.Now().Add(time.Minute)
	for {
		b, _ := os.ReadFile(ts.MkAbs(args[0]))
		if m := re.FindSubmatch(b); m != nil {
			if env != "" && len(m) > 1 {
				ts.Setenv(env, string(m[1]))
			}
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfile: %s did not match %q within a minute", args[0], args[1])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gate holds a sandbox's $batch calls (`sandbox hold`, `sandbox release`).
type gate struct {
	mu    sync.Mutex
	pass  int           // $batch calls still let through while holding
	open  chan struct{} // closed by release; nil: not holding
	held  sync.WaitGroup
	limit *time.Timer
}

// hold holds the $batch calls after the next pass ones. A minute later the
// gate lets go by itself: a run the script wrongly let load (a second one
// the lock let in) then ends, and the script fails on its exit code
// instead of hanging.
func (g *gate) hold(pass int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open == nil {
		g.open = make(chan struct{})
		g.limit = time.AfterFunc(time.Minute, g.release)
	}
	g.pass = pass
}

// release lets the held calls go and returns once the sandbox has carried
// them out, so what a script runs next finds their writes done.
func (g *gate) release() {
	g.mu.Lock()
	if g.open != nil {
		close(g.open)
		g.open = nil
		g.limit.Stop()
	}
	g.mu.Unlock()
	g.held.Wait()
}

// waitFor is what a call waits on before it is served; nil: nothing.
func (g *gate) waitFor(r *http.Request) <-chan struct{} {
	if !strings.HasSuffix(r.URL.Path, "/$batch") {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.open == nil:
		return nil
	case g.pass > 0:
		g.pass--
		return nil
	}
	g.held.Add(1)
	return g.open
}

func (g *gate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open := g.waitFor(r)
		if open == nil {
			h.ServeHTTP(w, r)
			return
		}
		defer g.held.Done()
		// The request as the server received it, whatever becomes of its
		// client while it waits.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		select {
		case <-open:
		case <-r.Context().Done():
			r = r.WithContext(context.WithoutCancel(r.Context()))
		}
		h.ServeHTTP(w, r)
	})
}

// snapshotOf is the data of a company of sb ("": the first one).
func snapshotOf(ts *testscript.TestScript, sb *sandbox.Server, company string) map[string][]map[string]any {
	if company == "" {
		return sb.Snapshot()
	}
	snap, ok := sb.SnapshotOf(company)
	if !ok {
		ts.Fatalf("sandbox: no company %s (it has %s)", company, strings.Join(sb.Companies(), ", "))
	}
	return snap
}

var (
	sandboxMu sync.Mutex
	sandboxes = map[*testscript.TestScript]*sandbox.Server{}
	gates     = map[*testscript.TestScript]*gate{} // of sandboxes, for sandbox hold and release
	named     = map[string]*sandbox.Server{}       // by $WORK@NAME (sandbox start as=NAME)
)

// sandboxOf is the script's sandbox: the one started as name, else the
// target's.
func sandboxOf(ts *testscript.TestScript, name string) *sandbox.Server {
	sandboxMu.Lock()
	defer sandboxMu.Unlock()
	if name != "" {
		return named[ts.Getenv("WORK")+"@"+name]
	}
	return sandboxes[ts]
}

// volatile are fields whose values depend on the clock or on the order of
// concurrent work; dumps leave them out so goldens stay stable.
var volatile = map[string]bool{"UDATE": true, "CURDATE_ASSIGNED": true, "FAMILY": true, "PART": true, "ORD": true, "CUST": true, "ABILITY": true, "IV": true}

func scrub(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if volatile[k] || e == nil {
				continue
			}
			out[k] = scrub(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = scrub(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = scrub(e)
		}
		return out
	}
	return v
}

func copyDir(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if strings.HasSuffix(path, ".journal") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// cmdExpand: `expand FILE...` replaces $VAR and ${VAR} in each file with
// the script's variables, for a plan that must name a sandbox's address
// itself (target.url, a connection's url) rather than take it from
// MIGRATE_TARGET.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: expand FILE...")
	}
	for _, f := range args {
		ts.Check(os.WriteFile(ts.MkAbs(f), []byte(os.Expand(ts.ReadFile(f), ts.Getenv)), 0o644))
	}
}

// fillWorkbook adds the rows of each sheet of wb below the last row of the
// sheet of that name in the workbook at path: text as text, numbers as
// numbers, dates as dates, blank cells left out.
func fillWorkbook(path string, wb sourcetest.Workbook) error {
	f, err := excelize.OpenFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, sh := range wb.Sheets {
		rows, err := f.GetRows(sh.Name)
		if err != nil {
			return err
		}
		for i, row := range sh.Rows {
			for j, c := range row {
				cell, _ := excelize.CoordinatesToCellName(j+1, len(rows)+i+1)
				switch v := c.(type) {
				case string:
					if v != "" {
						err = f.SetCellStr(sh.Name, cell, v)
					}
				case source.Number:
					n, perr := strconv.ParseFloat(string(v), 64)
					if perr != nil {
						return perr
					}
					err = f.SetCellFloat(sh.Name, cell, n, -1, 64)
				case time.Time:
					err = f.SetCellValue(sh.Name, cell, v)
				case bool:
					err = f.SetCellBool(sh.Name, cell, v)
				}
				if err != nil {
					return err
				}
			}
		}
	}
	return f.Save()
}
