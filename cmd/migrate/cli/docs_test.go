package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/migrate-tool/migrate/internal/userdocs"
	"github.com/migrate-tool/migrate/report"
	"github.com/migrate-tool/migrate/sandbox"
)

// The users' documentation, in the product.
const (
	cliDoc    = "../../../docs/cli.md"
	formatDoc = "../../../docs/plan-format.md"
)

// runMain runs one command line as the binary would, with env as the whole
// environment.
func runMain(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }}
	code = a.main(context.Background(), args)
	return code, out.String(), errb.String()
}

// mainRunner is runMain bound to env, with stdout and stderr as one text.
func mainRunner(t *testing.T, env map[string]string) func(args ...string) (int, string) {
	return func(args ...string) (int, string) {
		t.Helper()
		code, out, errb := runMain(t, env, args...)
		return code, out + errb
	}
}

// The big example of docs/plan-format.md is a plan that works: `validate`
// finds no problem and the dry run no row error, against the sandbox's
// demo schema saved the way a user saves a target's (metadata pull), with
// small files under testdata/docs-example for the sources it declares
// (the two workbooks are written here).
func TestDocsExampleValidates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/docs-example")); err != nil {
		t.Fatal(err)
	}
	planPath := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planPath, []byte(userdocs.FirstYAML(t, formatDoc)), 0o644); err != nil {
		t.Fatal(err)
	}
	writeWorkbook(t, filepath.Join(dir, "data", "customers.xlsx"), "Customers", [][]any{
		{"Code", "Name", "Agent", "ShipAddress"},
		{"C001", "Acme Ltd", "A1", "1 Harbour Road, Haifa"},
		{"C002", "Beta", "A2", "7 Herzl St, Tel Aviv"},
	})
	// The first sheet; the date is text in the example's layout, the
	// quantity a number cell, the price text with a decimal comma.
	writeWorkbook(t, filepath.Join(dir, "data", "orders.xlsx"), "Lines", [][]any{
		{"OrderNo", "Customer", "Date", "Part", "Qty", "Price", "LineNote", "Remarks", "Attachment", "AttachmentTitle"},
		{"SO1", "C001", "05/11/2026", "P-100", 2, "12,50", "urgent", "first order", "data/drawing.txt", "Drawing"},
		{"SO1", "C001", "05/11/2026", "P-200", 5, "3,75", "in a bag", "first order", "data/drawing.txt", "Drawing"},
		{"SO2", "C002", "06/11/2026", "P-100", 1, "12,50", "by hand", "second order", "data/drawing.txt", "Drawing"},
	})

	env := map[string]string{"HOME": dir, "XDG_CONFIG_HOME": dir}
	if code, out, errs := runMain(t, env, "metadata", "pull", "--sandbox", "--out", filepath.Join(dir, "metadata.xml")); code != ExitOK {
		t.Fatalf("metadata pull: exit %d\n%s%s", code, out, errs)
	}

	code, out, errs := runMain(t, env, "validate", planPath, "--json")
	var v validateJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("validate --json: %v\n%s%s", err, out, errs)
	}
	if code != ExitOK || !v.OK || len(v.Problems) != 0 {
		t.Fatalf("validate: exit %d, ok %v, problems:\n%+v\n%s", code, v.OK, v.Problems, errs)
	}

	batches := filepath.Join(dir, "batches")
	code, out, errs = runMain(t, env, "plan", planPath, "--json", "--out", batches)
	var r runJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("plan --json: %v\n%s%s", err, out, errs)
	}
	if code != ExitOK || len(r.Errors) != 0 {
		t.Fatalf("plan: exit %d, errors:\n%+v\n%s", code, r.Errors, errs)
	}
	type counts struct {
		name                       string
		records, children, skipped int
	}
	var got []counts
	for _, s := range r.Steps {
		got = append(got, counts{s.Name, s.Records, s.Children, s.Skipped})
	}
	want := []counts{
		{"families", 2, 0, 0},
		{"customers", 2, 5, 0}, // three notes, two ship-to addresses
		{"parts", 2, 0, 1},     // the obsolete part is skipped by when
		{"orders", 2, 10, 0},   // three lines with a text each, two remarks, two attachments
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plan's steps:\n got %+v\nwant %+v", got, want)
	}
	// What the example's source keys say reached the batches: Hebrew from
	// windows-1255, a quote kept by lazy_quotes, a decimal comma, the lookup.
	var sent strings.Builder
	files, err := filepath.Glob(filepath.Join(batches, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no batches in %s: %v", batches, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sent.Write(b)
	}
	for _, want := range []string{`"PARTDES":"בורג 6 ממ"`, `"SUBJECT":"בע\"מ: pays on time"`, `"PRICE":12.50`, `"AGENTCODE":"7"`} {
		if !strings.Contains(sent.String(), want) {
			t.Errorf("the batches lack %s:\n%s", want, sent.String())
		}
	}
}

func writeWorkbook(t *testing.T, path, sheet string, rows [][]any) {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		t.Fatal(err)
	}
	for i, row := range rows {
		cell, err := excelize.CoordinatesToCellName(1, i+1)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.SetSheetRow(sheet, cell, &row); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
}

var (
	helpFlag   = regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)
	docFlag    = regexp.MustCompile("`--([a-z][a-z0-9-]*)")
	docCommand = regexp.MustCompile("^`migrate ([a-z -]+)`$")
)

// Every flag each command registers is in the command's part of cli.md's
// "Flags by command", and every flag named there exists. The flags come
// from the commands themselves (their --help), so a flag added without a
// line of documentation fails here.
func TestDocsNameEveryFlag(t *testing.T) {
	t.Parallel()
	documented := map[string][]string{}
	for heading, body := range userdocs.Subsections(userdocs.Section(t, cliDoc, "Flags by command")) {
		m := docCommand.FindStringSubmatch(heading)
		if m == nil {
			continue // Connection flags: shared, named again under each command
		}
		documented[m[1]] = []string{}
		for _, f := range docFlag.FindAllStringSubmatch(body, -1) {
			documented[m[1]] = append(documented[m[1]], f[1])
		}
	}
	var names []string
	for _, c := range commands() {
		if c.name == "metadata" {
			names = append(names, "metadata pull", "metadata list", "metadata show")
			continue
		}
		names = append(names, c.name)
	}
	for _, name := range names {
		code, _, help := runMain(t, map[string]string{}, append(strings.Fields(name), "--help")...)
		if code != ExitOK || !strings.Contains(help, "Usage: migrate "+name) {
			t.Errorf("migrate %s --help: exit %d\n%s", name, code, help)
			continue
		}
		var registered []string
		for _, m := range helpFlag.FindAllStringSubmatch(help, -1) {
			registered = append(registered, m[1])
		}
		doc, ok := documented[name]
		if !ok {
			t.Errorf("%s: no \"### `migrate %s`\" under \"Flags by command\"", cliDoc, name)
			continue
		}
		if got, want := userdocs.Set(doc), userdocs.Set(registered); got != want {
			t.Errorf("%s, `migrate %s`: documents flags [%s]; the command has [%s]", cliDoc, name, got, want)
		}
		delete(documented, name)
	}
	for name := range documented {
		t.Errorf("%s documents flags of `migrate %s`, which is no command", cliDoc, name)
	}
}

// Every field of every JSON document the commands print is named in
// cli.md's "JSON output".
func TestDocsNameEveryJSONField(t *testing.T) {
	t.Parallel()
	section := userdocs.Section(t, cliDoc, "JSON output")
	for _, v := range []any{runJSON{}, stepJSON{}, errorJSON{}, estimate{}, validateJSON{}, problemJSON{},
		infoJSON{}, undoJSON{}, undoActionJSON{}, resolveJSON{}, inDoubtJSON{}, candidateJSON{}, decisionJSON{},
		diffJSON{}, diffStepJSON{}, diffRecordJSON{}, fieldChangeJSON{},
		companiesJSON{}, companyRunJSON{}, statusesJSON{}, journalStatus{}, stepStatus{}, rangeJSON{}, posJSON{},
		profileJSON{}, profileSourceJSON{}, profileColumnJSON{}, profileCountJSON{}, profileSampleJSON{}, profileKindsJSON{},
		profileFieldJSON{}, profileFindingJSON{}, profileLayoutJSON{}, profileGroupJSON{}, profileMissingJSON{},
		testJSON{}, testCaseJSON{}, testFailureJSON{}, verifyEvidenceJSON{}, evidenceJournalJSON{}, report.EvidenceProblem{}} {
		typ := reflect.TypeOf(v)
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.Anonymous {
				continue // its fields are the embedded type's, listed on their own
			}
			name := f.Name
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == "-" {
				continue
			} else if tag != "" {
				name = tag
			}
			if !strings.Contains(section, "`"+name+"`") {
				t.Errorf("%s: field %s.%s of the JSON output, `%s`, is not in \"JSON output\"", cliDoc, typ.Name(), f.Name, name)
			}
		}
	}
}

var envName = regexp.MustCompile(`"(MIGRATE_[A-Z0-9_]+)"`)

// Every MIGRATE_ variable the tool's code reads is in cli.md's
// "Environment", and every one named there is read somewhere. The test and
// measurement packages (campaign, bench, and winetest for the tests under
// Wine) have their own, for developers.
func TestDocsNameEveryVariable(t *testing.T) {
	t.Parallel()
	var inCode []string
	err := filepath.WalkDir("../../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "campaign", "bench", "winetest":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range envName.FindAllStringSubmatch(string(src), -1) {
			inCode = append(inCode, m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(inCode) == 0 {
		t.Fatal("found no MIGRATE_ variable in the code; is the walk in the wrong place?")
	}
	var inDoc []string
	for _, m := range regexp.MustCompile("`(MIGRATE_[A-Z0-9_]+)`").FindAllStringSubmatch(userdocs.Section(t, cliDoc, "Environment"), -1) {
		inDoc = append(inDoc, m[1])
	}
	if got, want := userdocs.Set(inDoc), userdocs.Set(inCode); got != want {
		t.Errorf("%s, \"Environment\": documents [%s]; the code reads [%s]", cliDoc, got, want)
	}
}

// The rows of cli.md's "Exit codes by command" where the code departs
// from the general table, or says more than it: each case is one claim of
// that page.
func TestDocsExitCodesByCommand(t *testing.T) {
	t.Parallel()
	sb, err := sandbox.New(sandbox.Options{RefuseKey: func(entity, key string) string {
		if entity == "CUSTOMERS" && key == "C1002" {
			return "customer C1002 is blocked"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	target := srv.URL + sandbox.BasePath
	other := srv.URL + "/odata/Priority/tabula.ini/other" // another company on the same server

	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	broken := write("broken.yaml", "version: 1\nsteps: [\n")
	noSource := write("no-source.yaml", `version: 1
sources:
  s: {file: missing.csv}
steps:
  - {name: a, entity: CUSTOMERS, source: s, fields: {CUSTNAME: row.A, CUSTDES: row.B}}
`)
	existing := write("existing.yaml", "# a plan of the user's\n")
	quickstart, err := filepath.Abs("../../../examples/plans/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	customers, err := filepath.Abs("../../../examples/plans/data/customers.csv")
	if err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(dir, "q.journal")
	env := map[string]string{"MIGRATE_USER": "demo", "MIGRATE_PASSWORD": "demo", "HOME": dir, "XDG_CONFIG_HOME": dir}

	tests := []struct {
		name   string
		args   []string
		code   int
		output string
	}{
		{"validate: a readable plan with a syntax error", []string{"validate", broken, "--sandbox"}, ExitData, "broken.yaml:2:1"},
		{"validate: a source that cannot be opened", []string{"validate", noSource, "--sandbox"}, ExitData, "no-source.yaml:3:13"},
		{"plan: the same", []string{"plan", noSource, "--sandbox"}, ExitData, "nothing was sent"},
		{"apply: the same, nothing sent", []string{"apply", noSource, "--sandbox"}, ExitData, "nothing was sent"},
		{"info: a plan that cannot be decoded", []string{"info", broken, "--sandbox"}, ExitUsage, "run `migrate validate"},
		{"metadata show: an unknown entity", []string{"metadata", "show", "CUSTOMER", "--sandbox"}, ExitUsage, `did you mean "CUSTOMERS"?`},
		{"init: --out exists", []string{"init", "--entity", "CUSTOMERS", "--source", customers, "--sandbox", "--out", existing}, ExitUsage, "exists"},
		// The next two run in order: a run with a refused record, then its status.
		{"apply: a record the server refused", []string{"apply", quickstart, "--target", target, "--journal", journal}, ExitData, "customer C1002 is blocked"},
		{"status: failed records remain", []string{"status", journal}, ExitData, "not complete: failed records remain"},
		{"status --json: the same", []string{"status", journal, "--json"}, ExitData, `"complete": false`},
		{"undo: the journal of another target", []string{"undo", journal, "--yes", "--target", other}, ExitUsage, "not " + other + ": nothing was sent"},
		{"undo: its preview the same", []string{"undo", journal, "--target", other}, ExitUsage, "not " + other + ": nothing was sent"},
		{"apply --retry-failed: the same", []string{"apply", quickstart, "--target", other, "--journal", journal, "--retry-failed", "--allow-plan-change"}, ExitUsage, "not " + other + ": nothing was sent"},
	}
	for _, tt := range tests {
		code, out, errs := runMain(t, env, tt.args...)
		if code != tt.code || !strings.Contains(out+errs, tt.output) {
			t.Errorf("%s: exit %d, want %d with %q\nstdout: %s\nstderr: %s", tt.name, code, tt.code, tt.output, out, errs)
		}
	}
	if got, _ := os.ReadFile(existing); string(got) != "# a plan of the user's\n" {
		t.Errorf("init overwrote %s: %q", existing, got)
	}
}
