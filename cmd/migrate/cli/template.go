package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/intake"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
)

// template writes the intake workbook of an entity: the workbook a
// customer fills in, which migrate init --source then writes the plan of.
func (a *app) template(ctx context.Context, args []string) error {
	var cf connFlags
	fs := connFlagSet("template", &cf, true)
	out := fs.String("out", "", "the workbook to write, FILE.xlsx (required; refuses to overwrite)")
	mdFile := fs.String("metadata", "", "a saved $metadata file: no target is read, so the workbook has no value lists unless --target is given too")
	var expand listFlag
	fs.Var(&expand, "expand", "a sub-form to give a sheet (or, single-object, columns on its parent's sheet): NAV, or NAV/NAV for a line's own single-object sub-form; repeat for more")
	pos, err := a.parse(fs, args, "ENTITY", 1, 1)
	if err != nil {
		return err
	}
	if *out == "" {
		return usageErr("--out is needed: the workbook to write, FILE.xlsx")
	}
	if err := checkExt("--out", *out, ".xlsx"); err != nil {
		return err
	}
	// The metadata, and the target's codes for the value lists: from a
	// saved file no target is read unless one is named; otherwise from the
	// target (or the sandbox), through one connection.
	var md *odata.Metadata
	var cn *conn
	if *mdFile != "" {
		if md, _, err = loadMetadataFile(*mdFile, nil); err != nil {
			return err
		}
	}
	if md == nil || cf.targetGiven || cf.sandbox {
		if cn, err = a.connect(ctx, cf, nil); err != nil {
			return err
		}
		defer cn.Close()
		if md == nil {
			if md, _, err = cn.client.Metadata(ctx); err != nil {
				return a.unreachable(cn, err)
			}
		}
	}
	l, err := intake.New(md, pos[0], expand)
	if err != nil {
		return usageErr("%v", err)
	}
	codes := map[string][]string{}
	if cn != nil {
		read := executor.TargetLookups(cn.client, md)
		for _, set := range l.Refers() {
			key := md.EntitySet(set).Type.Key[0]
			lk := &plan.Lookup{Name: set, Entity: set, KeyField: key, ValueField: key}
			err := read(ctx, lk, func(k, _ any) error {
				if s, ok := k.(string); ok && s != "" {
					codes[set] = append(codes[set], s)
				}
				return nil
			})
			if err != nil {
				return a.unreachable(cn, fmt.Errorf("reading the value list of %s: %w", set, err))
			}
		}
	} else if len(l.Refers()) > 0 {
		fmt.Fprintf(a.stderr, "note: --metadata reads no target: the columns of %s keys get no value list (add --target to read them)\n", strings.Join(l.Refers(), ", "))
	}
	if err := intake.Write(*out, l, codes); err != nil {
		return withCode(ExitUsage, err)
	}
	var sheets, lists []string
	for _, s := range l.Sheets() {
		sheets = append(sheets, fmt.Sprintf("%s (%d columns)", s, len(l.SheetColumns(s))))
	}
	for _, set := range l.Refers() {
		if n := len(codes[set]); n > 0 {
			lists = append(lists, fmt.Sprintf("%s (%d)", set, n))
		}
	}
	fmt.Fprintf(a.stdout, "wrote %s: sheets %s\n", *out, strings.Join(sheets, ", "))
	if len(lists) > 0 {
		fmt.Fprintf(a.stdout, "value lists: %s\n", strings.Join(lists, ", "))
	}
	fmt.Fprintf(a.stdout, "mandatory columns are marked * (a note on each column's name says what it takes); next: fill it in, then migrate init --source %s --out PLAN.yaml\n", *out)
	return nil
}
