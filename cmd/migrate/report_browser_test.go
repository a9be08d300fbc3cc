package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/cmd/migrate/cli"
	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/sandbox"
)

// TestReportInChromium renders the run report of the quickstart in a real
// browser, headless Chromium: the DOM it built holds every step with its
// counts, the page made no network request, and a screenshot shows it
// (go test -update saves it as testdata/report/quickstart.png, for people
// to look at). Skipped, saying so, where Chromium is not installed.
func TestReportInChromium(t *testing.T) {
	chromium := findChromium(t, "the run report")
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := copyDir("../../examples/plans", dir); err != nil {
		t.Fatal(err)
	}
	// Run from the plan's folder, as a user would: the page names the
	// plan and journal as given, not a temporary path.
	t.Chdir(dir)
	migrate(t, "apply", "quickstart.yaml", "--sandbox", "--journal", "quickstart.journal")
	migrate(t, "report", "quickstart.journal", "--html", "report.html")
	page := filepath.Join(dir, "report.html")

	v := view(t, chromium, page)
	v.holds(t, [][]string{
		// step, entity, records, lines, committed, failed, skipped, in doubt, pending
		{"families", "FAMILY_LOG", "4", "0", "4", "0", "0", "0", "0"},
		{"customers", "CUSTOMERS", "4", "0", "4", "0", "0", "0", "0"},
		{"parts", "LOGPART", "9", "0", "9", "0", "1", "0", "0"},
		{"orders", "ORDERS", "4", "12", "4", "0", "0", "0", "0"},
	}, "Complete: every record is committed or skipped", `<svg id="chart"`, `<b id="committed">21</b>`)

	// The check of requests can fail: a page that fetches is caught.
	control := filepath.Join(dir, "fetches.html")
	if err := os.WriteFile(control, []byte(`<!DOCTYPE html><img src="https://example.org/logo.png"><p>x</p>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, reqs := render(t, chromium, control, "--dump-dom"); len(reqs) == 0 {
		t.Error("a page with a remote image made no request that the test saw: the check proves nothing")
	}

	// It prints: the quickstart's report is one A4 page.
	printsOnOnePage(t, v)

	// The chart's bars are drawn (#2f6fba).
	if bar := screenshot(t, v, filepath.Join(here, "testdata/report/quickstart.png"), 0x2f6fba); bar < 100 {
		t.Errorf("the screenshot shows no chart bar (%d pixels of its colour)", bar)
	}
}

// TestDiffInChromium renders the page of a diff against a company that
// holds the quickstart's customers: one name changed to Hebrew (an update,
// its new value marked) and the customers inserted again (conflicts). The
// rendered DOM holds the counts per step and the marked change, the page
// made no network request and prints on one A4 page; go test -update
// saves the screenshot as testdata/report/diff.png.
func TestDiffInChromium(t *testing.T) {
	chromium := findChromium(t, "the diff's page")
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MIGRATE_TARGET", serveSandbox(t, sandbox.Options{}))
	t.Setenv("MIGRATE_USER", "demo")
	t.Setenv("MIGRATE_PASSWORD", "demo")
	t.Setenv("MIGRATE_AUTH", "basic")
	dir := t.TempDir()
	if err := copyDir("../../examples/plans", dir); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	migrate(t, "apply", "quickstart.yaml", "--journal", "quickstart.journal")
	customers, err := os.ReadFile("data/customers.csv")
	if err != nil {
		t.Fatal(err)
	}
	customers = bytes.Replace(customers, []byte("Galil Engineering Ltd"), []byte(`"גליל הנדסה בע""מ"`), 1)
	if err := os.WriteFile("data/customers.csv", customers, 0o644); err != nil {
		t.Fatal(err)
	}
	const plan = `version: 1
name: customers again
sources:
  customers: {file: data/customers.csv}
steps:
  - {name: customers, entity: CUSTOMERS, source: customers, mode: upsert, fields: {CUSTNAME: row.Code, CUSTDES: row.Name}}
  - {name: again, entity: CUSTOMERS, source: customers, after: [customers], fields: {CUSTNAME: row.Code, CUSTDES: row.Name}}
`
	if err := os.WriteFile("customers.yaml", []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := cli.Run(context.Background(), []string{"diff", "customers.yaml", "--html", "diff.html"}, strings.NewReader(""), &out, &errb); code != 1 {
		t.Fatalf("diff: exit %d, want 1 (conflicts)\n%s%s", code, out.String(), errb.String())
	}
	page := filepath.Join(dir, "diff.html")

	v := view(t, chromium, page)
	v.holds(t, [][]string{
		// step, entity, create, update, unchanged, conflict, missing
		{"customers", "CUSTOMERS", "0", "1", "3", "0", "0"},
		{"again", "CUSTOMERS", "0", "0", "0", "4", "0"},
	}, `<span class="old" dir="auto">Galil Engineering Ltd</span> → <mark class="new" dir="auto">גליל הנדסה בע"מ</mark>`,
		`<b id="conflict">4</b>`, `<dt>User</dt><dd dir="auto">demo</dd>`)
	printsOnOnePage(t, v)
	// The new value's mark is drawn (#ffeb84).
	if marked := screenshot(t, v, filepath.Join(here, "testdata/report/diff.png"), 0xffeb84); marked < 20 {
		t.Errorf("the screenshot shows no marked change (%d pixels of its colour)", marked)
	}
}

// findChromium is the path of headless Chromium, or skips the test saying
// what was not rendered.
func findChromium(t *testing.T, what string) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skipf("SKIPPED: Chromium is not installed, so %s was not rendered in a browser (Debian package `chromium`; .ci/run installs it)", what)
	return ""
}

// viewed is a page as one run of headless Chromium saw it: the DOM it
// built, the requests the page made, the page printed to PDF and a
// 1280x2000 screenshot (one browser start for all four).
type viewed struct {
	page      string
	dom       string
	requests  []string
	pdf, shot string
}

// view opens page in headless Chromium once, dumping its DOM, printing it
// and taking its screenshot.
func view(t *testing.T, chromium, page string) viewed {
	t.Helper()
	dir := t.TempDir()
	v := viewed{page: page, pdf: filepath.Join(dir, "page.pdf"), shot: filepath.Join(dir, "shot.png")}
	v.dom, v.requests = render(t, chromium, page, "--dump-dom", "--no-pdf-header-footer", "--print-to-pdf="+v.pdf,
		"--screenshot="+v.shot, "--window-size=1280,2000")
	return v
}

// holds fails the test unless the viewed page made no network request,
// its table of steps has the rows steps, and its DOM holds each of texts.
func (v viewed) holds(t *testing.T, steps [][]string, texts ...string) {
	t.Helper()
	if len(v.requests) > 0 {
		t.Errorf("the page made network requests: %v", v.requests)
	}
	if got := stepRows(v.dom); !reflect.DeepEqual(got, steps) {
		t.Errorf("the rendered steps are\n%q\nwant\n%q", got, steps)
	}
	for _, s := range texts {
		if !strings.Contains(v.dom, s) {
			t.Errorf("the rendered page lacks %s", s)
		}
	}
}

// printsOnOnePage fails unless the viewed page printed on one A4 page.
func printsOnOnePage(t *testing.T, v viewed) {
	t.Helper()
	printed, err := os.ReadFile(v.pdf)
	if err != nil {
		t.Fatalf("chromium printed no PDF: %v", err)
	}
	if n := len(regexp.MustCompile(`/Type\s*/Page\b`).FindAll(printed, -1)); n != 1 || !bytes.Contains(printed, []byte("/MediaBox [0 0 594.9")) {
		t.Errorf("%s prints on %d pages (want one A4 page; 0: the PDF's pages could not be counted)", filepath.Base(v.page), n)
	}
}

// screenshot counts the pixels (of every other row and column) of one
// colour in the viewed page's 1280x2000 screenshot, and with -update saves
// the screenshot as keep.
func screenshot(t *testing.T, v viewed, keep string, rgb uint32) int {
	t.Helper()
	shot := v.shot
	img := readPNG(t, shot)
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 2000 {
		t.Errorf("screenshot is %v, want 1280x2000", b)
	}
	n := 0
	for y := 0; y < img.Bounds().Dy(); y += 2 {
		for x := 0; x < img.Bounds().Dx(); x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 == rgb>>16 && g>>8 == rgb>>8&0xff && b>>8 == rgb&0xff {
				n++
			}
		}
	}
	if golden.Updating() {
		data, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keep, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// migrate runs the command line in this process and fails on a non-zero
// exit.
func migrate(t *testing.T, args ...string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Run(context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("migrate %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
}

// render opens a file in headless Chromium, with every host name made
// unresolvable and a network log: it returns what Chromium wrote on stdout
// and the URLs the page itself asked for (Chromium's own background
// requests, which have no page behind them, are not the page's).
func render(t *testing.T, chromium, file string, args ...string) (string, []string) {
	t.Helper()
	netlog := filepath.Join(t.TempDir(), "netlog.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--host-resolver-rules=MAP * ~NOTFOUND", "--log-net-log=" + netlog},
		append(args, "file://"+file)...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return stdout.String(), pageRequests(t, netlog)
}

// pageRequests reads a Chromium network log for requests started on behalf
// of a file:// page (their network isolation key is the file origin).
func pageRequests(t *testing.T, netlog string) []string {
	t.Helper()
	data, err := os.ReadFile(netlog)
	if err != nil {
		t.Fatalf("chromium wrote no network log: %v", err)
	}
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int `json:"type"`
			Params struct {
				URL string `json:"url"`
				NIK string `json:"network_isolation_key"`
			} `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatalf("network log: %v", err)
	}
	start, ok := log.Constants.LogEventTypes["URL_REQUEST_START_JOB"]
	if !ok {
		t.Fatal("network log without URL_REQUEST_START_JOB events: cannot tell what the page fetched")
	}
	var out []string
	for _, e := range log.Events {
		if e.Type == start && e.Params.URL != "" && strings.Contains(e.Params.NIK, "file://") && !strings.HasPrefix(e.Params.URL, "file:") {
			out = append(out, e.Params.URL)
		}
	}
	return out
}

var (
	stepRowRE = regexp.MustCompile(`(?s)<tr data-step="[^"]*">(.*?)</tr>`)
	cellRE    = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
)

// stepRows reads the steps table of a rendered page.
func stepRows(dom string) [][]string {
	var out [][]string
	for _, m := range stepRowRE.FindAllStringSubmatch(dom, -1) {
		var row []string
		for _, c := range cellRE.FindAllStringSubmatch(m[1], -1) {
			row = append(row, strings.TrimSpace(c[1]))
		}
		out = append(out, row)
	}
	return out
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return img
}
