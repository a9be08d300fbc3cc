package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/cmd/migrate/cli"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

// The shapes users have: grouped steps over sorted and unsorted
// rows, a linked sub-form, a lookup of a million entries, and workbooks
// with Excel's shared strings. Each runs the real command (cli.Run, as the
// binary does) in a child process, so the figure is the whole process's
// peak resident set, and checks what the command printed.

// planHead is the head of a benchmark's plan: its name and a target that
// a dry run never reaches.
// customersSteps begins the steps of a plan with the step most shapes
// load: customers from customers.csv, CUSTNAME from its Code column. The
// plan goes on with the step's other fields.
const customersSteps = `steps:
  - name: customers
    entity: CUSTOMERS
    source: customers
    fields:
      CUSTNAME: row.Code
`

func planHead(name string) string {
	return planHeadAt(name, "http://127.0.0.1:1/odata/Priority/tabula.ini/demo")
}

// planHeadAt is the head of a benchmark's plan against target.
func planHeadAt(name, target string) string {
	return "version: 1\nname: " + name + "\ntarget:\n  url: " + target + "\n  auth: basic\n"
}

// shape is one generated dataset: its plan and what `plan` must report.
type shape struct {
	name string
	// write writes the sources and the plan for rows rows into dir and
	// returns the records and children the dry run must build.
	write func(dir string, rows int) (records, children int, err error)
	// args is the command; "PLAN" stands for the plan's path.
	args []string
}

var planArgs = []string{"plan", "--sandbox", "--json", "--calls-per-minute", "100", "PLAN"}

// noteRow is row r of a file of notes, two a customer: sorted puts a
// customer's two rows together, unsorted half a file apart.
func noteRow(rows, r int, sorted bool) int {
	if sorted {
		return r / 2
	}
	return r % (rows / 2)
}

func groupShape(sorted bool) shape {
	name := "group-unsorted"
	if sorted {
		name = "group-sorted"
	}
	return shape{name: name, args: planArgs, write: func(dir string, rows int) (int, int, error) {
		err := sourcetest.WriteCSV(filepath.Join(dir, "notes.csv"), rows, []string{"Code", "Name", "Subject"},
			func(r, c int) string {
				n := noteRow(rows, r, sorted)
				switch c {
				case 0:
					return fmt.Sprintf("N%07d", n)
				case 1:
					return fmt.Sprintf("Customer number %d", n)
				}
				return fmt.Sprintf("note of row %d", r)
			})
		if err != nil {
			return 0, 0, err
		}
		return rows / 2, rows, writePlan(dir, `sources:
  notes: {file: notes.csv}
steps:
  - name: customers
    entity: CUSTOMERS
    source: notes
    group_by: row.Code
    fields:
      CUSTNAME: row.Code
      CUSTDES: row.Name
    subforms:
      - name: GENCUSTNOTES_SUBFORM
        source: group
        fields:
          SUBJECT: row.Subject
`)
	}}
}

var linkShape = shape{name: "link", args: planArgs, write: func(dir string, rows int) (int, int, error) {
	custs := rows / 2
	if err := writePairs(filepath.Join(dir, "customers.csv"), custs, "Code", "N%07d", "Name", "Customer number %d", 1); err != nil {
		return 0, 0, err
	}
	// Two notes a customer, half a file apart.
	if err := writePairs(filepath.Join(dir, "notes.csv"), rows, "Cust", "N%07d", "Subject", "note of row %d", custs); err != nil {
		return 0, 0, err
	}
	return custs, rows, writePlan(dir, `sources:
  customers: {file: customers.csv}
  notes: {file: notes.csv}
`+customersSteps+`      CUSTDES: row.Name
    subforms:
      - name: GENCUSTNOTES_SUBFORM
        source: notes
        link: {parent: row.Code, child: row.Cust}
        fields:
          SUBJECT: row.Subject
`)
}}

var lookupShape = shape{name: "lookup", args: planArgs, write: func(dir string, rows int) (int, int, error) {
	// Each customer's old code is another's: the lookup is read all over.
	if err := sourcetest.WriteCSV(filepath.Join(dir, "customers.csv"), rows, []string{"Code", "Old"},
		func(r, c int) string {
			if c == 0 {
				return fmt.Sprintf("N%07d", r)
			}
			return fmt.Sprintf("OLD-%07d", (r*7)%rows)
		}); err != nil {
		return 0, 0, err
	}
	if err := writePairs(filepath.Join(dir, "names.csv"), rows, "Old", "OLD-%07d", "Name", "Customer formerly known as %d", 1); err != nil {
		return 0, 0, err
	}
	return rows, 0, writePlan(dir, `sources:
  customers: {file: customers.csv}
  names: {file: names.csv}
lookups:
  name: {source: names, key: row.Old, value: row.Name, missing: error}
`+customersSteps+`      CUSTDES: lookup("name", row.Old)
`)
}}

// sharedShape is BenchmarkPlan's customer file as Excel saves it: every
// text in the shared strings, four distinct texts a row.
func sharedShape(name string, args []string) shape {
	return shape{name: name, args: args, write: func(dir string, rows int) (int, int, error) {
		path, err := writeDataset(dir, "csv", 0) // the lookups and the plan
		if err != nil {
			return 0, 0, err
		}
		if err := sourcetest.WriteXLSXShared(filepath.Join(dir, "customers.xlsx"), rows, customerCols, customerCell); err != nil {
			return 0, 0, err
		}
		return rows, rows, os.WriteFile(path, []byte(planYAML("customers.xlsx", "Sheet1")), 0o644)
	}}
}

// copyPlan writes the plan testdata/name to path.
func copyPlan(name, path string) error {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func writePlan(dir, rest string) error {
	return os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(planHead("bench-shape")+rest), 0o644)
}

// writePairs writes a CSV file of two columns: row r holds the first
// format applied to r%mod (mod 1: to r) and the second to r.
func writePairs(path string, rows int, col1, format1, col2, format2 string, mod int) error {
	return sourcetest.WriteCSV(path, rows, []string{col1, col2}, func(r, c int) string {
		if c == 0 {
			if mod > 1 {
				r %= mod
			}
			return fmt.Sprintf(format1, r)
		}
		return fmt.Sprintf(format2, r)
	})
}

var shapes = []shape{
	groupShape(true), groupShape(false), linkShape, lookupShape,
	sharedShape("xlsx-shared", planArgs),
	sharedShape("xlsx-shared-validate", []string{"validate", "--sandbox", "PLAN"}),
}

// TestShapesSmall checks each shape's harness on 2,000 rows: the command
// succeeds and builds every record and child.
func TestShapesSmall(t *testing.T) {
	t.Parallel()
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			recs, kids, err := sh.write(dir, 2000)
			if err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			code := cli.Run(context.Background(), shapeArgs(sh, dir), nil, &out, &errOut)
			if err := checkShape(sh, code, out.Bytes(), recs, kids); err != nil {
				t.Fatalf("%v\n%s", err, errOut.String())
			}
		})
	}
}

// BenchmarkShapes reports each shape's peak memory (peak-MB) and the
// command's own time (s) and CPU time (cpu-s) at 100k and 1M rows.
func BenchmarkShapes(b *testing.B) {
	for _, sh := range shapes {
		for _, rows := range []int{100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/%dk", sh.name, rows/1000), func(b *testing.B) {
				if testing.Short() && rows > 100_000 {
					b.Skip("-short: 1M rows skipped")
				}
				benchShape(b, sh, rows)
			})
		}
	}
}

// benchShape writes sh's files for rows rows and reports the command's
// peak memory (peak-MB), time (s) and CPU time (cpu-s), each run a child
// process (shapePeak).
func benchShape(b *testing.B, sh shape, rows int) {
	dir, err := os.MkdirTemp("", "migrate-shape-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	recs, kids, err := sh.write(dir, rows)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var peak int64
	var secs, cpu float64
	for i := 0; i < b.N; i++ {
		hwm, s, c, err := shapePeak(sh, dir, recs, kids)
		if err != nil {
			b.Fatal(err)
		}
		peak, secs, cpu = max(peak, hwm), secs+s, cpu+c
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
	b.ReportMetric(secs/float64(b.N), "s")
	b.ReportMetric(cpu/float64(b.N), "cpu-s")
}

func shapeArgs(sh shape, dir string) []string {
	args := append([]string(nil), sh.args...)
	for i, a := range args {
		if a == "PLAN" {
			args[i] = filepath.Join(dir, "plan.yaml")
		}
	}
	return args
}

// checkShape says what is wrong with a command's exit code and output.
func checkShape(sh shape, code int, out []byte, recs, kids int) error {
	if code != 0 {
		return fmt.Errorf("%s: exit %d\n%s", sh.name, code, out)
	}
	if sh.args[0] != "plan" {
		return nil
	}
	var sum struct {
		Steps []struct {
			Records, Children, Errors int
		}
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		return fmt.Errorf("%s: %v\n%s", sh.name, err, out)
	}
	if len(sum.Steps) != 1 || sum.Steps[0].Records != recs || sum.Steps[0].Children != kids || sum.Steps[0].Errors != 0 {
		return fmt.Errorf("%s: %+v, want %d records and %d children without errors", sh.name, sum.Steps, recs, kids)
	}
	return nil
}

// cliChildEnv holds the command a child process runs (TestCLIChild), its
// arguments separated by newlines.
const cliChildEnv = "BENCH_CLI_CHILD"

// TestCLIChild is the child of shapePeak: it runs the command, then prints
// its output, "CHILD exit-code HWM-bytes seconds cpu-seconds" on the last
// line.
func TestCLIChild(t *testing.T) {
	args := os.Getenv(cliChildEnv)
	if args == "" {
		t.Skip("only run as the child of BenchmarkShapes")
	}
	start, cpu := time.Now(), cpuTime()
	code := cli.Run(context.Background(), strings.Split(args, "\n"), nil, os.Stdout, io.Discard)
	secs, cpuSecs := time.Since(start).Seconds(), (cpuTime() - cpu).Seconds()
	hwm, err := vmHWM()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("\nCHILD %d %d %f %f\n", code, hwm, secs, cpuSecs)
}

// shapePeak runs the shape's command in a child process and returns its
// peak resident set, and the seconds and CPU seconds the command took.
func shapePeak(sh shape, dir string, recs, kids int) (int64, float64, float64, error) {
	r, err := runChild(shapeArgs(sh, dir), nil)
	if err != nil {
		return 0, 0, 0, err
	}
	return r.hwm, r.secs, r.cpu, checkShape(sh, r.code, r.out, recs, kids)
}
