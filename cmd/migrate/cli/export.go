package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/migrate-tool/migrate/export"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/plan"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// export writes the rows of an entity of the target or of a connection
// to a workbook a plan can read back; with --plan, the
// current state of every record the plan would touch (a before-image).
func (a *app) export(ctx context.Context, args []string) error {
	var cf connFlags
	fs := connFlagSet("export", &cf, true)
	out := fs.String("out", "", "the file to write: FILE.xlsx (a sheet per level) or FILE.csv (a file per level); required")
	connection := fs.String("connection", "", "read this connection (the plan's, with --plan; else MIGRATE_<NAME>_TARGET and its variables) instead of the target")
	planPath := fs.String("plan", "", "the plan whose connections --connection names; without ENTITY, export what the plan would touch, as it is now (a before-image)")
	sel := fs.String("select", "", "the fields to write, comma-separated (default: every field)")
	expand := fs.String("expand", "", "sub-forms to write, comma-separated, each on a sheet of its own keyed by the entity's key")
	filter := fs.String("filter", "", "a $filter of the rows to write (proven applied: every row is checked against it)")
	var mem memoryFlag
	mem.register(fs)
	pos, err := a.parse(fs, args, "[ENTITY]", 0, 1)
	if err != nil {
		return err
	}
	mem.apply()
	if err := connectionFlag(fs, *connection); err != nil {
		return err
	}
	if *out == "" {
		return usageErr("export needs --out FILE.xlsx or FILE.csv")
	}
	if ext := strings.ToLower(fileExt(*out)); ext != ".xlsx" && ext != ".csv" {
		return usageErr("--out %s: an export is written as .xlsx or .csv", *out)
	}
	var p *plan.Plan
	if *planPath != "" {
		if p, err = optionalPlan([]string{*planPath}); err != nil {
			return err
		}
	}
	if len(pos) == 0 {
		if p == nil {
			return usageErr("export needs an ENTITY, or --plan PLAN for the before-image of what the plan touches")
		}
		return a.exportBefore(ctx, cf, *planPath, *out)
	}
	cn, err := a.exportConn(ctx, cf, p, *connection)
	if err != nil {
		return err
	}
	defer cn.conn.Close()
	e, err := export.Open(ctx, export.Query{Client: cn.conn.client, Metadata: cn.md, Service: *connection,
		Entity: pos[0], Select: splitList(*sel), Expand: splitList(*expand), Filter: *filter, Memory: mem.bytes})
	if err != nil {
		return exportErr(err)
	}
	return a.writeExport(*out, e)
}

// exportConn connects to what export reads: a connection, or the target.
func (a *app) exportConn(ctx context.Context, cf connFlags, p *plan.Plan, name string) (*connected, error) {
	var cn *conn
	var err error
	if name != "" {
		pc := &plan.Connection{Name: name}
		if p != nil {
			if pc = p.Connection(name); pc == nil {
				return nil, usageErr("the plan has no connection %q (connections: %s)", name, strings.Join(connectionNames(p), ", "))
			}
		}
		cn, err = a.connectTo(cf, p, pc)
	} else {
		cn, err = a.connect(ctx, cf, p)
	}
	if err != nil {
		return nil, err
	}
	md, _, err := cn.client.Metadata(ctx)
	if err != nil {
		cn.Close()
		err = a.unreachable(cn, err)
		if name != "" {
			err = connFail(name, err)
		}
		return nil, err
	}
	return &connected{conn: cn, md: md}, nil
}

// exportErr gives an error of the engine's export its exit code: what
// the metadata refuses is the command line's (2), a service that cannot be
// read is 3.
func exportErr(err error) error {
	var qe *export.QueryError
	var se *export.StepRowsError
	switch {
	case errors.As(err, &qe):
		return withCode(ExitUsage, err)
	case errors.As(err, &se):
		return withCode(ExitData, err)
	}
	return withCode(ExitUnreachable, err)
}

// writeExport writes the exports with a progress bar on a terminal and
// says what it wrote.
func (a *app) writeExport(out string, es ...export.Export) error {
	var bar *progressbar.ProgressBar
	if f, ok := a.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription("export"),
			progressbar.OptionShowCount(), progressbar.OptionSetItsString("rows"), progressbar.OptionShowIts(),
			progressbar.OptionThrottle(100_000_000), progressbar.OptionClearOnFinish())
	}
	done := 0
	for i := range es {
		es[i].Row = func(int) {
			done++
			if bar != nil {
				_ = bar.Set(done)
			}
		}
	}
	written, err := export.Write(out, es...)
	err = a.workbookWritten(err)
	for _, e := range es {
		e.Rows.Close()
	}
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return withCode(exportCode(err), fmt.Errorf("export: %w", err))
	}
	for _, w := range written {
		fmt.Fprintf(a.stdout, "%s: %s to %s\n", w.Name, diag.Count(w.Rows, "row", "rows"), w.To)
	}
	return nil
}

// exportCode: a service that failed the reading is exit 3; a file that
// cannot be written, 2.
func exportCode(err error) int {
	if export.IsReadError(err) {
		return ExitUnreachable
	}
	return ExitUsage
}

// exportBefore writes the before-image of a plan: for each step, the
// records the plan would write whose key it knows, as the target holds
// them now, with the sub-forms the step writes. Records not on the target
// are not in it (there is nothing to keep of them).
func (a *app) exportBefore(ctx context.Context, cf connFlags, path, out string) error {
	c, err := a.check(ctx, path, checkFlags{conn: cf}, true)
	if err != nil {
		return err
	}
	defer c.Close()
	if c.plan == nil || c.diags.HasErrors() {
		for _, d := range c.diags {
			fmt.Fprintln(a.stderr, d)
		}
		return usageErr("the plan has problems; run `migrate validate %s`", path)
	}
	es, left, err := export.BeforeImage(ctx, c.run, c.conn.client)
	if err != nil {
		return exportErr(err)
	}
	if len(es) == 0 {
		return usageErr("the plan's steps name no record by its key: there is nothing on the target to keep")
	}
	if err := a.writeExport(out, es...); err != nil {
		return err
	}
	for _, s := range left {
		fmt.Fprintf(a.stdout, "not in it: step %s, which names none of its records by key (documents the server numbers): what it would write is not kept\n", s)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func fileExt(p string) string {
	if i := strings.LastIndexByte(p, '.'); i >= 0 && !strings.ContainsAny(p[i:], `/\`) {
		return p[i:]
	}
	return ""
}
