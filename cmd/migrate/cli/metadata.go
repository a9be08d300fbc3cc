package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/odata"
)

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
	var cf connFlags
	fs := connFlagSet("metadata pull", &cf, true)
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
		fmt.Fprintf(a.stdout, "wrote %s: %s from $metadata (%s)\n", file, diag.Count(len(md.Sets), "entity", "entities"), versionText(v))
		return nil
	}
	fmt.Fprintf(a.stdout, "wrote %s: %s, %s from GetMetadataFor (system version %s)\n", file,
		diag.Count(len(md.Sets), "entity", "entities"), diag.Count(annotated, "annotated entity", "annotated entities"), versionText(v))
	return nil
}

// metadataList lists the entities a plan can load, each with its
// description, those whose name or description holds WORD (any case) when
// one is given: how a consultant finds CUSTOMERS among a thousand forms.
func (a *app) metadataList(ctx context.Context, args []string) error {
	var cf connFlags
	fs := connFlagSet("metadata list", &cf, true)
	mdFile := fs.String("metadata", "", "a saved $metadata file")
	asJSON := jsonFlag(fs)
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
	var cf connFlags
	fs := connFlagSet("metadata show", &cf, true)
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
		return withCode(ExitUsage, errors.New(md.NoEntity(pos[0])))
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
