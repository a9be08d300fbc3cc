package cli

import (
	"context"
	"fmt"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/plan"
)

// test runs the plan's tests: each step's real program over
// the rows a test gives, against the plan's metadata, reading no file and
// sending nothing. Exit 0 when all pass, 1 when one fails, 2 for a plan
// (or its tests) with problems.
func (a *app) test(ctx context.Context, args []string) error {
	var f checkFlags
	fs := checkFlagSet("test", &f)
	pos, err := a.parse(fs, args, "PLAN", 1, 1)
	if err != nil {
		return err
	}
	v := a.testView(f.json)
	p, diags := a.loadPlan(pos[0])
	if p.Hash == "" {
		for _, d := range diags {
			fmt.Fprintln(a.stderr, d.String())
		}
		if err := v.Problems(nil, diags); err != nil {
			return err
		}
		return silent(ExitUsage)
	}
	more, fdiags := plan.LoadTests(p.Path)
	tests := append(append([]*plan.Test(nil), p.Tests...), more...)
	diags = append(append(diags, fdiags...), p.CheckTests(tests)...)
	if p.ConnectionsRefused() {
		// Nothing connects with a connection the plan refuses (validate).
		for _, d := range diags {
			fmt.Fprintln(a.stderr, d.String())
		}
		if err := v.Problems(p, diags); err != nil {
			return err
		}
		return silent(ExitUsage)
	}
	m, err := a.metadataFor(ctx, f, p, false)
	if err != nil {
		return err
	}
	defer m.conn.Close()
	if m.unknownVersion {
		diags = append(diags, unknownVersion(p))
	}
	results, diags := executor.RunTests(ctx, executor.Setup{Plan: p, Diagnostics: diags, Metadata: m.md, Version: m.version, Getenv: a.getenv}, tests)
	for _, d := range diags {
		fmt.Fprintln(a.stderr, d.String())
	}
	if diags.HasErrors() {
		fmt.Fprintf(a.stderr, "%s; no test was run\n", diag.Count(len(diags.Errors()), "problem", "problems"))
		if err := v.Problems(p, diags); err != nil {
			return err
		}
		return silent(ExitUsage)
	}
	if len(tests) == 0 {
		fmt.Fprintf(a.stderr, "%s has no tests: write them under tests: in the plan, or in %s\n", p.Path, plan.TestsFile(p.Path))
		if err := v.Problems(p, nil); err != nil {
			return err
		}
		return silent(ExitUsage)
	}
	if err := v.Results(results); err != nil {
		return err
	}
	if _, failed := executor.TestTally(results); failed > 0 {
		return silent(ExitData)
	}
	return nil
}
