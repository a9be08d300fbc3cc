package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/report"
)

// mapping writes the mapping file of the plan's value maps:
// every distinct value each map("NAME", row.X) is given, with its count,
// first cells and a proposed target, for a person to confirm. Written
// again, it keeps what was confirmed and notes what is new.
func (a *app) mapping(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("mapping", flag.ContinueOnError)
	out := fset.String("out", "", "FILE.xlsx or FILE.csv: the mapping file to write (written again, it keeps what it confirmed)")
	asJSON := fset.Bool("json", false, "print one JSON document on stdout: the counts per map and every row written")
	var cf connFlags
	cf.register(fset, true)
	readsTargetOnlyWhenGiven(fset)
	pos, err := a.parse(fset, args, "PLAN", 1, 1)
	if err != nil {
		return err
	}
	if *out == "" {
		return usageErr("--out is needed: the mapping file to write, .xlsx or .csv")
	}
	if err := checkExt("--out", *out, ".xlsx", ".csv"); err != nil {
		return err
	}
	p, diags := a.loadPlan(pos[0])
	if p == nil || p.Hash == "" {
		for _, d := range diags {
			fmt.Fprintln(a.stderr, d.String())
		}
		return silent(ExitUsage)
	}
	if len(p.Maps) == 0 {
		return usageErr("%s has no maps: nothing to list (docs/plan-format.md, Value maps)", pos[0])
	}
	old, before, err := executor.ReadMapping(*out)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	// The sources are read as the plan reads them; no field is written,
	// so no metadata is needed. The plan's problems are shown and do not
	// stop it (its sources are what it is about), except those of the
	// mapping files: one that does not exist yet, or leaves values
	// unconfirmed, is what this command is for.
	pr, ds := executor.Prepare(ctx, executor.Setup{Plan: p, Diagnostics: diags, Version: newest, Getenv: a.getenv})
	defer pr.Close()
	files := map[plan.Pos]bool{}
	for _, m := range p.Maps {
		if m.File != "" {
			files[m.FilePos] = true
		}
	}
	for _, d := range ds {
		if !files[d.Pos] {
			fmt.Fprintln(a.stderr, d.String())
		}
	}
	if pr.Program() == nil {
		return silent(ExitUsage)
	}
	values, err := executor.MapValues(ctx, pr)
	if err != nil {
		return readErr(err)
	}
	codes, err := a.mappingCodes(ctx, cf, p)
	if err != nil {
		return err
	}
	rows := executor.Mapping(p, values, old, before, codes)
	if err := report.WriteMapping(*out, rows); err != nil {
		return withCode(ExitUsage, err)
	}
	return a.mappingView(*asJSON).Mapping(mappingDoc(*out, p, values, rows))
}

// mappingCodes reads the target's codes that the maps' target: names,
// when a target is given (--target, --sandbox): new values are proposed
// the nearest of them.
func (a *app) mappingCodes(ctx context.Context, cf connFlags, p *plan.Plan) (map[string][]string, error) {
	named := false
	for _, m := range p.Maps {
		named = named || m.TargetEntity != ""
	}
	if cf.target == "" && !cf.sandbox {
		return nil, nil // each row proposed in capitals says so (MappingRow.Unbacked)
	}
	if !named {
		return nil, nil
	}
	cn, md, err := a.connectMetadata(ctx, cf, p)
	if err != nil {
		return nil, err
	}
	defer cn.Close()
	codes, err := executor.TargetCodes(ctx, cn.client, md, p)
	if err != nil {
		return nil, a.unreachable(cn, err)
	}
	return codes, nil
}

// mappingJSON is what migrate mapping wrote, as both views show it: per
// map its values, how many are confirmed, to confirm and new, counted
// once here; with --json also every row of the file.
type mappingJSON struct {
	Out  string           `json:"out"`
	Maps []mapCountsJSON  `json:"maps"`
	Rows []mappingRowJSON `json:"rows"`
}

type mapCountsJSON struct {
	Map       string `json:"map"`
	Values    int    `json:"values"`
	Confirmed int    `json:"confirmed"`
	ToConfirm int    `json:"to_confirm"`
	New       int    `json:"new"`
	// Unread: no map("NAME", row.COLUMN) reads a column of a source, so
	// none of its values is listed.
	Unread bool `json:"unread,omitempty"`
}

// mappingRowJSON is a row of the mapping file, in its columns.
type mappingRowJSON struct {
	Map       string `json:"map"`
	Source    string `json:"source"`
	Count     int    `json:"count"`
	Cells     string `json:"cells,omitempty"`
	Target    string `json:"target"`
	Confirmed bool   `json:"confirmed"`
	Note      string `json:"note,omitempty"`
}

// mappingDoc counts, per map of the plan, the rows written: a value no
// source gives now is kept in the file and not counted; a value is
// confirmed when it is confirmed with a target.
func mappingDoc(out string, p *plan.Plan, values []executor.MapValue, rows []executor.MappingRow) mappingJSON {
	doc := mappingJSON{Out: out, Maps: []mapCountsJSON{}, Rows: make([]mappingRowJSON, 0, len(rows))}
	listed := map[string]bool{}
	for _, mv := range values {
		listed[mv.Map] = true
	}
	for _, m := range p.Maps {
		c := mapCountsJSON{Map: m.Name}
		for _, row := range rows {
			if row.Map != m.Name || row.Note == executor.NoteGone {
				continue
			}
			c.Values++
			if row.Confirmed && row.Target != "" {
				c.Confirmed++
			} else {
				c.ToConfirm++
			}
			if row.Note == executor.NoteNew {
				c.New++
			}
		}
		c.Unread = !listed[m.Name]
		doc.Maps = append(doc.Maps, c)
	}
	for _, r := range rows {
		doc.Rows = append(doc.Rows, mappingRowJSON{Map: r.Map, Source: r.Source, Count: r.Count, Cells: r.Cells,
			Target: r.Target, Confirmed: r.Confirmed, Note: r.Said()})
	}
	return doc
}

// mappingView shows what migrate mapping wrote.
type mappingView interface {
	Mapping(doc mappingJSON) error
}

func (a *app) mappingView(asJSON bool) mappingView {
	if asJSON {
		return mappingJSONView{jsonView{a}}
	}
	return mappingHuman{a.human()}
}

// noteUnread says on w which maps have no values listed, and why.
func noteUnread(w io.Writer, doc mappingJSON) {
	for _, m := range doc.Maps {
		if m.Unread {
			fmt.Fprintf(w, "note: map %q: no map(%q, row.COLUMN) reads a column of a source, so none of its values is listed\n", m.Map, m.Map)
		}
	}
}

type mappingJSONView struct{ jsonView }

func (v mappingJSONView) Mapping(doc mappingJSON) error {
	noteUnread(v.a.stderr, doc)
	return writeJSON(v.a.stdout, doc)
}

type mappingHuman struct{ humanView }

func (v mappingHuman) Mapping(doc mappingJSON) error {
	w := v.a.stdout
	tw := newTable(w)
	fmt.Fprintln(tw, "map\tvalues\tconfirmed\tto confirm\tnew")
	for _, c := range doc.Maps {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", c.Map, c.Values, c.Confirmed, c.ToConfirm, c.New)
	}
	tw.Flush()
	noteUnread(v.a.stderr, doc)
	fmt.Fprintf(w, "\nwritten: %s; confirm each row (confirmed: yes) once its target is right\n", doc.Out)
	return nil
}
