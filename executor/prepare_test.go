package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
)

// TestPrepare: the diagnostics Prepare gives for what users get wrong,
// each once at its plan position, and a plan without problems that the
// dry run then reads through the prepared run (its delimiter honoured).
func TestPrepare(t *testing.T) {
	t.Parallel()
	const customers = "Code;Name\nC1;Acme Ltd\nC2;Globex\n"
	tests := []struct {
		name   string
		fields string   // the step's fields, each line indented by 6
		file   string   // the source's file name; customers.csv is written
		want   []string // relative to the plan's folder, DIR
	}{
		{name: "ok", fields: "CUSTNAME: row.Code\n      CUSTDES: row.Name", file: "customers.csv"},
		{name: "unknown column", fields: "CUSTNAME: row.Code\n      CUSTDES: row.Nme", file: "customers.csv",
			want: []string{`plan.yaml:11:20: source customers has no column "Nme"; did you mean "Name"?`}},
		{name: "missing file", fields: "CUSTNAME: row.Code", file: "customer.csv",
			want: []string{`plan.yaml:4:21: source "customers": customer.csv: cannot open: the file does not exist (looked for DIR/customer.csv); check the file name in the plan, relative to the plan's folder`}},
		{name: "an unparsable expression once", fields: "CUSTNAME: row.Code +", file: "customers.csv",
			want: []string{`plan.yaml:10:26: field "CUSTNAME" of step "customers" is not a valid expression: it ends too early`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			yaml := "version: 1\nname: prep\nsources:\n  customers: {file: " + tt.file + ", delimiter: \";\"}\nsteps:\n  - name: customers\n    entity: CUSTOMERS\n    source: customers\n    fields:\n      " + tt.fields + "\n"
			write(t, dir, "plan.yaml", yaml)
			write(t, dir, "customers.csv", customers)
			p, ds := plan.Load(filepath.Join(dir, "plan.yaml"))
			run, ds := Prepare(context.Background(), Setup{Plan: p, Diagnostics: ds, Metadata: sandbox.DemoMetadata()})
			defer run.Close()
			if len(ds) != len(tt.want) {
				t.Fatalf("diagnostics %q, want %d: %q", ds, len(tt.want), tt.want)
			}
			for i, d := range ds {
				// The paths in it are the system's: DIR\plan.yaml on Windows.
				want := filepath.FromSlash("DIR/" + tt.want[i])
				if got := strings.ReplaceAll(d.String(), dir, "DIR"); got != want {
					t.Errorf("diagnostic %q, want %q", got, want)
				}
			}
			if len(tt.want) > 0 {
				return
			}
			sum, err := DryRun(context.Background(), run, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := stepOf(sum, "customers"); got.Records != 2 || got.Errors != 0 {
				t.Errorf("dry run: %+v, want 2 records and no errors", got)
			}
		})
	}
}

// TestColumns: the header migrate init maps, read as a plan would read
// the file (its delimiter, its sheet).
func TestColumns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "a.csv", "Code;Name\nC1;Acme\n")
	got, err := Columns(&plan.Source{File: filepath.Join(dir, "a.csv"), Delimiter: ";"})
	if err != nil || strings.Join(got, "|") != "Code|Name" {
		t.Errorf("Columns = %q, %v; want Code, Name", got, err)
	}
	if _, err := Columns(&plan.Source{File: filepath.Join(dir, "none.csv")}); err == nil || !strings.Contains(err.Error(), "none.csv") {
		t.Errorf("a missing file: %v, want an error naming it", err)
	}
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
