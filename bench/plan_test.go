package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

// version is the newest system version: batches of 100 (docs/service.md,
// Limits).
var version = odata.Version{Major: 25, Minor: 1, Raw: "25.1"}

// customerCols are the generated customer file's columns: ten mapped onto
// CUSTOMERS and its SHIPTO2 sub-form, two of them through lookups.
var customerCols = []string{"Code", "Name", "Phone", "Address", "City", "Zip", "Agent", "ShipName", "ShipPhone", "ShipCity"}

// customerCell generates the customer file: distinct codes, a handful of
// agents and cities that the lookups translate.
func customerCell(r, c int) string {
	switch c {
	case 0:
		return fmt.Sprintf("C%07d", r)
	case 1:
		return fmt.Sprintf("  Customer number %d Ltd  ", r)
	case 2:
		return fmt.Sprintf("+972-3-%07d", r%10000000)
	case 3:
		return fmt.Sprintf("%d Herzl Street", r%500+1)
	case 4:
		return fmt.Sprintf("city%d", r%20)
	case 5:
		return fmt.Sprintf("%05d", r%99999)
	case 6:
		return fmt.Sprintf("a%d", r%30)
	case 7:
		return fmt.Sprintf("Warehouse %d", r%7)
	case 8:
		return fmt.Sprintf("03-%07d", (r*7)%10000000)
	default:
		return fmt.Sprintf("city%d", (r+3)%20)
	}
}

// writeLookupSources writes the two lookup tables (agents, cities).
func writeLookupSources(dir string) error {
	if err := sourcetest.WriteCSV(filepath.Join(dir, "agents.csv"), 30, []string{"Old", "New"},
		func(r, c int) string {
			if c == 0 {
				return fmt.Sprintf("a%d", r)
			}
			return fmt.Sprintf("AG%03d", r)
		}); err != nil {
		return err
	}
	return sourcetest.WriteCSV(filepath.Join(dir, "cities.csv"), 20, []string{"Code", "Name"},
		func(r, c int) string {
			if c == 0 {
				return fmt.Sprintf("city%d", r)
			}
			return fmt.Sprintf("City Number %d", r)
		})
}

// planYAML is the benchmark plan: 10 mapped fields, 2 lookups, no group_by
// or link, so the dry run streams.
func planYAML(file, sheet string) string {
	src := "file: " + file
	if sheet != "" {
		src += ", sheet: " + sheet
	}
	return `version: 1
name: bench
target:
  url: http://127.0.0.1:1/odata/Priority/tabula.ini/demo
  auth: basic
sources:
  customers: {` + src + `}
  agents: {file: agents.csv}
  cities: {file: cities.csv}
lookups:
  agent: {source: agents, key: row.Old, value: row.New, missing: error}
  city: {source: cities, key: row.Code, value: row.Name, missing: error}
` + customersSteps + `      CUSTDES: trim(row.Name)
      PHONE: row.Phone
      ADDRESS: row.Address
      STATE: lookup("city", row.City)
      ZIP: row.Zip
      AGENTCODE: lookup("agent", row.Agent)
    subforms:
      - name: SHIPTO2_SUBFORM
        fields:
          NAME: row.ShipName
          PHONE: row.ShipPhone
          STATE: upper(row.ShipCity)
`
}

// writeDataset writes the customer file (CSV or XLSX) of rows rows, the
// lookup tables and the plan into dir, and returns the plan's path.
func writeDataset(dir, format string, rows int) (string, error) {
	if err := writeLookupSources(dir); err != nil {
		return "", err
	}
	var file, sheet string
	switch format {
	case "csv":
		file = "customers.csv"
		if err := sourcetest.WriteCSV(filepath.Join(dir, file), rows, customerCols, customerCell); err != nil {
			return "", err
		}
	case "xlsx":
		file, sheet = "customers.xlsx", "Sheet1"
		if err := sourcetest.WriteXLSX(filepath.Join(dir, file), rows, customerCols, customerCell); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("unknown format %q", format)
	}
	p := filepath.Join(dir, "plan.yaml")
	return p, os.WriteFile(p, []byte(planYAML(file, sheet)), 0o644)
}

// prepare loads, checks and prepares a plan the way `migrate plan` does
// (cmd/migrate/cli check + BuildLookups). Close the run when done.
func prepare(ctx context.Context, path string, md *odata.Metadata) (*executor.Prepared, error) {
	p, diags := plan.Load(path)
	if p == nil || diags.HasErrors() {
		return nil, fmt.Errorf("plan %s: %v", path, diags)
	}
	run, diags := executor.Prepare(ctx, executor.Setup{Plan: p, Metadata: md, Version: version, Getenv: func(string) string { return "" }})
	if diags.HasErrors() {
		run.Close()
		return nil, fmt.Errorf("plan %s: %v", path, diags)
	}
	if err := run.BuildLookups(ctx, nil); err != nil {
		run.Close()
		return nil, err
	}
	return run, nil
}

// dryRun is `migrate plan PATH`: the summary of executor.DryRun.
func dryRun(ctx context.Context, path string) (*executor.Summary, error) {
	run, err := prepare(ctx, path, sandbox.DemoMetadata())
	if err != nil {
		return nil, err
	}
	defer run.Close()
	return executor.DryRun(ctx, run, executor.Options{CallsPerMinute: 100})
}

// checkSummary says what is wrong with a dry run of rows customers.
func checkSummary(sum *executor.Summary, rows int) error {
	if len(sum.Steps) != 1 {
		return fmt.Errorf("%d steps, want 1", len(sum.Steps))
	}
	s := sum.Steps[0]
	if s.Records != rows || s.Errors != 0 || len(sum.Errors) != 0 {
		var msgs []string
		for i, e := range sum.Errors {
			if i == 3 {
				break
			}
			msgs = append(msgs, e.Location+": "+e.Message)
		}
		return fmt.Errorf("%d records, %d errors, want %d records and none: %s", s.Records, s.Errors, rows, strings.Join(msgs, "; "))
	}
	// Each customer is one deep insert with its ship-to (the default).
	if want := (rows+99)/100 + 1; sum.Requests != want { // and the form's warm-up before the first write
		return fmt.Errorf("%d calls, want %d", sum.Requests, want)
	}
	return nil
}
