package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
)

type infoJSON struct {
	Target        string `json:"target"`
	User          string `json:"user"`
	SystemVersion string `json:"system_version"`
	// SystemVersionFrom is the function that reported it, or where it was
	// declared ("declared by --system-version"); "" when unknown.
	SystemVersionFrom string   `json:"system_version_from"`
	ODataVersion      string   `json:"odata_version"`
	BatchLimit        int      `json:"batch_limit"`
	BatchResponse     string   `json:"batch_response"`
	Allows            []string `json:"allows"`
	Lacks             []string `json:"lacks"`
	// MayLack: with the version unknown, what a server before 22.0 may or
	// may not have.
	MayLack []string `json:"may_lack,omitempty"`
}

// newestWithoutVersionFunction is the newest a server that cannot say its
// version may run (the function came with 22.0): what it lacks, an unknown
// version surely lacks.
var newestWithoutVersionFunction = odata.Version{Major: 21, Minor: 99}

func (a *app) info(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("info", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, true)
	asJSON := fs.Bool("json", false, "print one JSON document on stdout")
	pos, err := a.parse(fs, args, "[PLAN]", 0, 1)
	if err != nil {
		return err
	}
	view := a.infoView(*asJSON)
	p, err := optionalPlan(pos)
	if err != nil {
		return err
	}
	c, v, err := a.connectVersion(ctx, cf, p)
	if err != nil {
		return err
	}
	defer c.Close()
	user, err := c.client.LoginName(ctx)
	if err != nil {
		return a.unreachable(c, err)
	}
	ov, err := c.client.ODataVersion(ctx)
	if err != nil {
		return a.unreachable(c, err)
	}
	out := infoJSON{Target: c.url, User: user, SystemVersion: v.Raw, SystemVersionFrom: v.From, ODataVersion: ov,
		BatchLimit: v.BatchLimit(), BatchResponse: "multipart/mixed", Allows: []string{}, Lacks: []string{}}
	if !v.Known() {
		// Older than 22.0, but how much is unknown: what apply would do.
		out.SystemVersion, out.BatchLimit = "unknown, older than 22.0 (no version function; declare it with --system-version)", 100
	}
	if v.JSONBatchResponses() {
		out.BatchResponse = "JSON"
	}
	if v.Standard {
		// The features listed are the ERP's, gated on its versions; a
		// standard service has what the standard has, and refuses the
		// ERP's own (a language code, GetMetadataFor).
		out.Allows = []string{"what the OData 4.0 standard has: no system version gates it (dialect odata)"}
		return view.Info(out, c.method, v)
	}
	for _, f := range odata.Features() {
		switch {
		case v.Has(f):
			out.Allows = append(out.Allows, f.Name)
		case !v.Known() && !newestWithoutVersionFunction.Has(f):
			out.Lacks = append(out.Lacks, f.Name+" (needs "+f.Since()+")")
		case !v.Known():
			out.MayLack = append(out.MayLack, f.Name+" (needs "+f.Since()+")")
		default:
			out.Lacks = append(out.Lacks, f.Name+" (needs "+f.Since()+")")
		}
	}
	return view.Info(out, c.method, v)
}

// systemVersionLine is info's line: the version and which source it used.
func systemVersionLine(v odata.Version) string {
	switch {
	case v.Standard:
		return "none: " + v.From + ", every feature the standard has"
	case !v.Known():
		return "unknown, older than 22.0: the target has no version function and none was declared (--system-version, " + envSystemVersion + " or target.system_version)"
	case strings.HasPrefix(v.From, "declared"):
		return v.Raw + " (" + v.From + "; the target has no version function)"
	}
	return v.Raw + " (reported by " + v.From + ")"
}

func optionalPlan(pos []string) (*plan.Plan, error) {
	if len(pos) == 0 {
		return nil, nil
	}
	p, diags := plan.Load(pos[0])
	if p == nil || len(diags) > 0 {
		var b strings.Builder
		for _, d := range diags {
			b.WriteString("\n  " + d.String())
		}
		return nil, usageErr("the plan has problems; run `migrate validate %s`:%s", pos[0], b.String())
	}
	return p, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (a *app) metadata(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageErr("metadata: want `metadata pull [--out FILE] [--clear] [PLAN]`, `metadata list [WORD]` or `metadata show ENTITY`")
	}
	switch args[0] {
	case "pull":
		return a.metadataPull(ctx, args[1:])
	case "list":
		return a.metadataList(ctx, args[1:])
	case "show":
		return a.metadataShow(ctx, args[1:])
	}
	return usageErr("metadata: unknown subcommand %q; want pull, list or show", args[0])
}

func (a *app) metadataPull(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("metadata pull", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, true)
	out := fs.String("out", "", "file to write (default: the plan's target.metadata, else metadata.xml)")
	clear := fs.Bool("clear", false, "first rebuild the server's metadata of the plan's entities (ClearEntityMetadata, from 22.0)")
	pos, err := a.parse(fs, args, "[PLAN]", 0, 1)
	if err != nil {
		return err
	}
	p, err := optionalPlan(pos)
	if err != nil {
		return err
	}
	file := *out
	if file == "" && p != nil && p.Target.Metadata != "" {
		file = p.File(p.Target.Metadata)
	}
	if file == "" {
		file = "metadata.xml"
	}
	c, v, err := a.connectVersion(ctx, cf, p)
	if err != nil {
		return err
	}
	defer c.Close()
	var entities []string
	if p != nil {
		seen := map[string]bool{}
		for _, s := range p.Steps {
			if !seen[s.Entity] {
				seen[s.Entity] = true
				entities = append(entities, s.Entity)
			}
		}
	}
	if *clear {
		if v.Standard {
			return usageErr("--clear asks the ERP's ClearEntityMetadata; a target of dialect odata has none: leave it out")
		}
		if !v.ClearMetadata() {
			return withCode(ExitUsage, fmt.Errorf("--clear needs system version 22.0 (ClearEntityMetadata); the target runs %s", versionText(v)))
		}
		if len(entities) == 0 {
			entities = []string{""} // no body: every entity
		}
		for _, e := range entities {
			if err := c.client.ClearEntityMetadata(ctx, e); err != nil {
				return a.unreachable(c, err)
			}
		}
		if entities[0] == "" {
			entities = nil
		}
	}
	md, raw, err := c.client.Metadata(ctx)
	if err != nil {
		return a.unreachable(c, err)
	}
	annotated := 0
	if v.GetMetadataFor() && !v.Standard {
		for _, e := range entities {
			t, _, err := c.client.MetadataFor(ctx, e)
			if err != nil {
				return a.unreachable(c, err)
			}
			md.ReplaceType(t)
			annotated++
		}
	}
	if annotated > 0 {
		var b bytes.Buffer
		if err := md.WriteXML(&b); err != nil {
			return err
		}
		raw = b.Bytes()
	}
	if err := atomicfile.WriteFile(file, raw, 0o644); err != nil {
		return withCode(ExitUsage, err)
	}
	if v.Standard {
		fmt.Fprintf(a.stdout, "wrote %s: %s from $metadata (%s)\n", file, plural(len(md.Sets), "entity", "entities"), versionText(v))
		return nil
	}
	fmt.Fprintf(a.stdout, "wrote %s: %s, %s from GetMetadataFor (system version %s)\n", file,
		plural(len(md.Sets), "entity", "entities"), plural(annotated, "annotated entity", "annotated entities"), versionText(v))
	return nil
}

// metadataList lists the entities a plan can load, each with its
// description, those whose name or description holds WORD (any case) when
// one is given: how a consultant finds CUSTOMERS among a thousand forms.
func (a *app) metadataList(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("metadata list", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, true)
	mdFile := fs.String("metadata", "", "a saved $metadata file")
	asJSON := fs.Bool("json", false, "print one JSON document on stdout")
	pos, err := a.parse(fs, args, "[WORD]", 0, 1)
	if err != nil {
		return err
	}
	md, err := a.metadataOf(ctx, cf, *mdFile)
	if err != nil {
		return err
	}
	word := ""
	if len(pos) == 1 {
		word = strings.ToLower(pos[0])
	}
	type entityJSON struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	list := []entityJSON{}
	for _, name := range md.SetNames() {
		set := md.EntitySet(name)
		desc := ""
		if set != nil && set.Type != nil {
			desc = set.Type.Description
		}
		if word == "" || strings.Contains(strings.ToLower(name+" "+desc), word) {
			list = append(list, entityJSON{Name: name, Description: desc})
		}
	}
	if *asJSON {
		return writeJSON(a.stdout, map[string]any{"entities": list})
	}
	// The names and descriptions are the server's.
	tw := newTable(diag.PrintableWriter(a.stdout))
	for _, e := range list {
		fmt.Fprintf(tw, "%s\t%s\n", e.Name, e.Description)
	}
	tw.Flush()
	if len(list) == 0 {
		return withCode(ExitUsage, fmt.Errorf("no entity's name or description holds %q", pos[0]))
	}
	return nil
}

func (a *app) metadataShow(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("metadata show", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, true)
	mdFile := fs.String("metadata", "", "a saved $metadata file")
	pos, err := a.parse(fs, args, "ENTITY", 1, 1)
	if err != nil {
		return err
	}
	md, err := a.metadataOf(ctx, cf, *mdFile)
	if err != nil {
		return err
	}
	set := md.EntitySet(pos[0])
	if set == nil {
		return withCode(ExitUsage, errors.New(noEntity(md, pos[0])))
	}
	// The names and labels are the server's.
	showType(diag.PrintableWriter(a.stdout), md, set.Type, "", map[string]bool{})
	return nil
}

func showType(w io.Writer, md *odata.Metadata, t *odata.EntityType, indent string, seen map[string]bool) {
	if seen[t.Name] {
		return
	}
	seen[t.Name] = true
	defer delete(seen, t.Name)
	title := t.Name
	if t.Description != "" {
		title += "  " + t.Description
	}
	fmt.Fprintf(w, "%s%s  key (%s)\n", indent, title, strings.Join(t.Key, ", "))
	tw := newTable(w)
	for _, p := range t.Properties {
		typ := strings.TrimPrefix(string(p.Type), "Edm.")
		switch {
		case p.MaxLength > 0:
			typ += fmt.Sprintf("(%d)", p.MaxLength)
		case p.HasScale:
			typ += fmt.Sprintf("(%d,%d)", p.Precision, p.Scale)
		}
		var marks []string
		if t.IsKey(p.Name) {
			marks = append(marks, "key")
		}
		if p.Mandatory {
			marks = append(marks, "mandatory")
		}
		if !p.Writable() {
			marks = append(marks, "read-only")
		}
		if p.DateOnly {
			marks = append(marks, "date-only")
		}
		fmt.Fprintf(tw, "%s  %s\t%s\t%s\t%s\n", indent, p.Name, typ, strings.Join(marks, ","), p.Description)
	}
	tw.Flush()
	for _, n := range t.Navigations {
		kind := "single"
		if n.Collection {
			kind = "lines"
		}
		fmt.Fprintf(w, "%s  └ %s (%s)\n", indent, n.Name, kind)
		if sub := md.Type(n.Type); sub != nil {
			showType(w, md, sub, indent+"    ", seen)
		}
	}
}
