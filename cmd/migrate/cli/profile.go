package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/profile"
)

// profileJSON is docs/cli.md's document of profile --json.
type profileJSON struct {
	Profiled    string `json:"profiled"`
	Target      string `json:"target,omitempty"`
	Metadata    string `json:"metadata,omitempty"`
	Cells       int    `json:"cells"`
	MaxDistinct int    `json:"max_distinct"`
	Findings    int    `json:"findings"`
	Blocking    int    `json:"blocking"`
	// Unchecked: what a plan's profile did not look at, for want of a
	// target or metadata (left out when it looked at all).
	Unchecked []string            `json:"unchecked,omitempty"`
	Sources   []profileSourceJSON `json:"sources"`
}

type profileSourceJSON struct {
	Name    string              `json:"name"`
	File    string              `json:"file"`
	Rows    int                 `json:"rows"`
	Skipped string              `json:"skipped,omitempty"`
	Errors  []string            `json:"errors,omitempty"`
	Columns []profileColumnJSON `json:"columns"`
}

type profileColumnJSON struct {
	Name                string               `json:"name"`
	Rows                int                  `json:"rows"`
	Blank               int                  `json:"blank"`
	Distinct            int                  `json:"distinct"`
	DistinctApproximate bool                 `json:"distinct_approximate,omitempty"`
	Top                 []profileCountJSON   `json:"top"`
	MinLength           int                  `json:"min_length"`
	MaxLength           int                  `json:"max_length"`
	Shortest            *profileSampleJSON   `json:"shortest,omitempty"`
	Longest             *profileSampleJSON   `json:"longest,omitempty"`
	Kinds               profileKindsJSON     `json:"kinds"`
	Field               *profileFieldJSON    `json:"field,omitempty"`
	Fields              []profileFieldJSON   `json:"fields,omitempty"`
	MaxAllowed          int                  `json:"max_allowed,omitempty"`
	TooLong             profileFindingJSON   `json:"too_long"`
	BlankMandatory      profileFindingJSON   `json:"blank_mandatory"`
	NumberColumn        bool                 `json:"number_column"`
	NumbersAsText       profileFindingJSON   `json:"numbers_as_text"`
	TextInNumbers       profileFindingJSON   `json:"text_in_numbers"`
	DateLayouts         []profileLayoutJSON  `json:"date_layouts"`
	Spaces              profileFindingJSON   `json:"spaces"`
	Key                 bool                 `json:"key"`
	Group               bool                 `json:"group"`
	Duplicates          []profileGroupJSON   `json:"duplicates"`
	CaseDuplicates      []profileGroupJSON   `json:"case_duplicates"`
	CaseCollides        bool                 `json:"case_collides,omitempty"`
	Missing             []profileMissingJSON `json:"missing"`
	MissingApproximate  bool                 `json:"missing_approximate,omitempty"`
}

type profileCountJSON struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

type profileSampleJSON struct {
	Value string `json:"value"`
	Cell  string `json:"cell"`
}

type profileKindsJSON struct {
	Text   int `json:"text"`
	Number int `json:"number"`
	Date   int `json:"date"`
	Bool   int `json:"bool"`
}

type profileFieldJSON struct {
	Step         string `json:"step"`
	Form         string `json:"form"`
	Name         string `json:"name"`
	Type         string `json:"type,omitempty"`
	MaxLength    int    `json:"max_length,omitempty"`
	Direct       bool   `json:"direct"`
	Expression   string `json:"expression,omitempty"`
	PlanLocation string `json:"plan_location,omitempty"`
	Key          bool   `json:"key"`
	Group        bool   `json:"group"`
	Mandatory    bool   `json:"mandatory,omitempty"`
	When         string `json:"when,omitempty"`
}

type profileFindingJSON struct {
	Count int      `json:"count"`
	Cells []string `json:"cells"`
	More  int      `json:"more"`
}

type profileLayoutJSON struct {
	Layout string `json:"layout"`
	profileFindingJSON
}

type profileGroupJSON struct {
	Value  string   `json:"value"`
	Values []string `json:"values,omitempty"`
	profileFindingJSON
}

type profileMissingJSON struct {
	Value string `json:"value"`
	In    string `json:"in"`
	Why   string `json:"why"`
	Near  string `json:"near,omitempty"`
	profileFindingJSON
}

func (a *app) profile(ctx context.Context, args []string) error {
	var cf connFlags
	fs := connFlagSet("profile", &cf, true)
	readsTargetOnlyWhenGiven(fs)
	metadata := fs.String("metadata", "", "a saved $metadata file: the fields' types and MaxLength (default: the plan's target.metadata, else the target's)")
	asJSON := jsonFlag(fs)
	html := fs.String("html", "", "FILE.html: also write the profile as a self-contained page, in the run report's style")
	sheet := fs.String("sheet", "", "FILE only: the workbook's sheet to read (default: the first)")
	delimiter := fs.String("delimiter", "", "FILE only: the CSV delimiter (default \",\"; \\t for tab)")
	var keys stepsFlag // a list as --steps takes one: comma-separated or repeated
	fs.Var(&keys, "key", "FILE only: a `COLUMN` whose values must be unique (repeatable)")
	pos, err := a.parse(fs, args, "PLAN|FILE", 1, 1)
	if err != nil {
		return err
	}
	if err := checkExt("--html", *html, ".html", ".htm"); err != nil {
		return err
	}
	v := a.profileView(*asJSON)
	path := pos[0]
	var opts profile.Options
	info := profile.PageInfo{Title: path, ToolVersion: Version}
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".yaml" || ext == ".yml" {
		if *sheet != "" || *delimiter != "" || len(keys) > 0 {
			return usageErr("--sheet, --delimiter and --key are for a file given alone; a plan says them itself")
		}
		pr, cn, mdFrom, err := a.profilePlan(ctx, path, cf, *metadata)
		if err != nil {
			return err
		}
		defer pr.Close()
		if cn != nil {
			defer cn.Close()
			info.Target = cn.url
			opts = profile.FromPlan(pr)
			opts.Target = profile.TargetKeys(cn.client, pr.Metadata)
		} else {
			opts = profile.FromPlan(pr)
		}
		info.Metadata = mdFrom
		info.Unchecked = profile.Unchecked(cn != nil, pr.Metadata != nil)
		if pr.Plan.Name != "" {
			info.Title = pr.Plan.Name + " (" + path + ")"
		}
		res, err := profile.Run(ctx, opts)
		if err != nil {
			var te *profile.TargetError
			if errors.As(err, &te) {
				return a.unreachable(cn, err)
			}
			return readErr(err)
		}
		return a.profileDone(v, res, info, *html)
	}
	if cf.target != "" || cf.sandbox || *metadata != "" {
		return usageErr("--target, --sandbox and --metadata need a plan: a file given alone writes no field")
	}
	fo := profile.FileOptions{Sheet: *sheet, Keys: keys}
	if d := []rune(*delimiter); len(d) == 1 {
		fo.Delimiter = d[0]
	} else if *delimiter == `\t` {
		fo.Delimiter = '\t'
	} else if *delimiter != "" {
		return usageErr("--delimiter must be one character, not %q", *delimiter)
	}
	res, err := profile.Run(ctx, profile.FromFile(path, fo))
	if err != nil {
		return readErr(err)
	}
	for _, k := range keys {
		if !hasColumn(res, k) {
			return usageErr("--key %s: %s has no such column", k, path)
		}
	}
	return a.profileDone(v, res, info, *html)
}

// profilePlan loads and prepares a plan for profiling: the metadata from
// --metadata, the plan's target.metadata, or the target when one is given
// (--target, --sandbox), which is then also read for the references to
// it. Without any, the lengths are not checked, and a note says so. A
// plan's problems are shown on stderr and do not stop the profile: its
// sources are what it is about.
func (a *app) profilePlan(ctx context.Context, path string, cf connFlags, mdFile string) (*executor.Prepared, *conn, string, error) {
	p, diags := a.loadPlan(path)
	if p == nil || p.Hash == "" {
		for _, d := range diags {
			fmt.Fprintln(a.stderr, d.String())
		}
		return nil, nil, "", silent(ExitUsage)
	}
	md, mdFrom, err := loadMetadataFile(mdFile, p)
	if err != nil {
		return nil, nil, "", err
	}
	var cn *conn
	if cf.target != "" || cf.sandbox {
		if cn, err = a.connect(ctx, cf, p); err != nil {
			return nil, nil, "", err
		}
		if md == nil {
			if md, _, err = cn.client.Metadata(ctx); err != nil {
				cn.Close()
				return nil, nil, "", a.unreachable(cn, err)
			}
			mdFrom = "the target's metadata"
		}
	}
	pr, ds := executor.Prepare(ctx, executor.Setup{Plan: p, Diagnostics: diags, Metadata: md, Version: newest, Getenv: a.getenv})
	for _, d := range ds {
		fmt.Fprintln(a.stderr, d.String())
	}
	return pr, cn, mdFrom, nil
}

// readErr is a source that cannot be read (exit 2), or Ctrl-C (exit 4).
func readErr(err error) error {
	if errors.Is(err, context.Canceled) {
		return withCode(ExitInterrupted, err)
	}
	return withCode(ExitUsage, err)
}

func hasColumn(res *profile.Result, name string) bool {
	for _, s := range res.Sources {
		for _, c := range s.Columns {
			if c.Name == name {
				return true
			}
		}
	}
	return false
}

// profileDone writes the page, shows the profile, and exits 1 when a
// finding would make a load fail: a value too long, text in a number
// column, a key twice (also in another case), a reference missing.
func (a *app) profileDone(v profileView, res *profile.Result, info profile.PageInfo, html string) error {
	if html != "" {
		if err := profile.WriteHTMLFile(html, res, info); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	doc := profileDoc(res, info)
	if err := v.Profile(res, doc, html); err != nil {
		return err
	}
	if res.Blocking() > 0 {
		return silent(ExitData)
	}
	return nil
}

func findingJSON(f profile.Finding) profileFindingJSON {
	cells := f.Cells
	if cells == nil {
		cells = []string{}
	}
	return profileFindingJSON{Count: f.Count, Cells: cells, More: f.More()}
}

func profileDoc(res *profile.Result, info profile.PageInfo) profileJSON {
	doc := profileJSON{Profiled: info.Title, Target: info.Target, Metadata: info.Metadata, Unchecked: info.Unchecked, Cells: res.Cells,
		MaxDistinct: res.MaxDistinct, Blocking: res.Blocking(), Sources: []profileSourceJSON{}}
	for _, s := range res.Sources {
		sj := profileSourceJSON{Name: s.Name, File: s.File, Rows: s.Rows, Skipped: s.Skipped, Errors: s.Errors, Columns: []profileColumnJSON{}}
		for _, c := range s.Columns {
			doc.Findings += c.Findings()
			cj := profileColumnJSON{Name: c.Name, Rows: c.Rows, Blank: c.Blank, Distinct: c.Distinct, DistinctApproximate: c.Approximate,
				Top: []profileCountJSON{}, MinLength: c.MinLength, MaxLength: c.MaxLength, Kinds: profileKindsJSON(c.Kinds),
				MaxAllowed: c.MaxAllowed, TooLong: findingJSON(c.TooLong), BlankMandatory: findingJSON(c.BlankMandatory), NumberColumn: c.Numeric,
				NumbersAsText: findingJSON(c.NumbersAsText), TextInNumbers: findingJSON(c.TextInNumbers),
				DateLayouts: []profileLayoutJSON{}, Spaces: findingJSON(c.Spaces), Key: c.Key, Group: c.Group,
				Duplicates: []profileGroupJSON{}, CaseDuplicates: []profileGroupJSON{}, Missing: []profileMissingJSON{},
				MissingApproximate: c.MissingApprox, CaseCollides: c.CaseCollides()}
			for _, t := range c.Top {
				cj.Top = append(cj.Top, profileCountJSON(t))
			}
			if c.Shortest != nil {
				cj.Shortest = &profileSampleJSON{Value: c.Shortest.Value, Cell: c.Shortest.Cell}
				cj.Longest = &profileSampleJSON{Value: c.Longest.Value, Cell: c.Longest.Cell}
			}
			for _, u := range c.Fields {
				cj.Fields = append(cj.Fields, profileFieldJSON{Step: u.Step, Form: u.Form, Name: u.Field, Type: u.Type, MaxLength: u.MaxLength,
					Direct: u.Direct, Expression: u.Expr, PlanLocation: u.Plan, Key: u.Key, Group: u.Group, Mandatory: u.Mandatory, When: u.When})
			}
			if len(cj.Fields) > 0 {
				// field: the one the column is written to as it is, else the first.
				f := cj.Fields[0]
				for _, u := range cj.Fields {
					if u.Direct {
						f = u
						break
					}
				}
				cj.Field = &f
				if len(cj.Fields) == 1 {
					cj.Fields = nil
				}
			}
			for _, l := range c.DateLayouts {
				cj.DateLayouts = append(cj.DateLayouts, profileLayoutJSON{Layout: l.Layout, profileFindingJSON: findingJSON(l.Finding)})
			}
			for _, g := range c.Duplicates {
				cj.Duplicates = append(cj.Duplicates, profileGroupJSON{Value: g.Value, profileFindingJSON: findingJSON(g.Finding)})
			}
			for _, g := range c.CaseDuplicates {
				cj.CaseDuplicates = append(cj.CaseDuplicates, profileGroupJSON{Value: g.Value, Values: g.Values, profileFindingJSON: findingJSON(g.Finding)})
			}
			for _, m := range c.Missing {
				cj.Missing = append(cj.Missing, profileMissingJSON{Value: m.Value, In: m.In, Why: m.Why, Near: m.Near, profileFindingJSON: findingJSON(m.Finding)})
			}
			sj.Columns = append(sj.Columns, cj)
		}
		doc.Sources = append(doc.Sources, sj)
	}
	return doc
}

// printProfile shows each source's columns as a table, then each
// column's findings with their cells.
func printProfile(w io.Writer, res *profile.Result, doc profileJSON) {
	if doc.Target != "" {
		fmt.Fprintf(w, "target: %s\n", doc.Target)
	}
	for i, s := range res.Sources {
		if i > 0 {
			fmt.Fprintln(w)
		}
		name := s.Name
		if s.File != s.Name {
			name += " (" + s.File + ")"
		}
		if s.Skipped != "" {
			fmt.Fprintf(w, "%s: not profiled: %s\n", name, s.Skipped)
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", name, diag.Count(s.Rows, "row", "rows"))
		for _, e := range s.Errors {
			fmt.Fprintf(w, "  %s\n", e)
		}
		tw := newTable(w)
		fmt.Fprintln(tw, "column\tblank\tdistinct\tlength\tfield\tmost frequent")
		for _, c := range s.Columns {
			distinct := strconv.Itoa(c.Distinct)
			if c.Approximate {
				distinct = "≈" + distinct
			}
			field := ""
			for j, u := range c.Fields {
				if j > 0 {
					field += ", "
				}
				field += u.Label()
				if u.MaxLength > 0 {
					field += fmt.Sprintf("(%d)", u.MaxLength)
				}
				if u.Computed() {
					field += " computed"
				}
			}
			var top []string
			for _, t := range c.Top {
				top = append(top, fmt.Sprintf("%q×%d", t.Value, t.Count))
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d–%d\t%s\t%s\n", c.Name, c.Blank, distinct, c.MinLength, c.MaxLength, field, strings.Join(top, " "))
		}
		tw.Flush()
		for _, c := range s.Columns {
			for _, it := range c.Items() {
				cells := strings.Join(it.Cells, ", ")
				if it.More > 0 {
					cells += fmt.Sprintf(" and %d more", it.More)
				}
				fmt.Fprintf(w, "  %s: %s: %s\n", c.Name, it.What, cells)
			}
		}
	}
	fmt.Fprintf(w, "\n%s, %d would make a load fail\n", diag.Count(doc.Findings, "finding", "findings"), doc.Blocking)
	if len(doc.Unchecked) > 0 {
		fmt.Fprintln(w, "as far as the profile looked:")
		for _, u := range doc.Unchecked {
			fmt.Fprintf(w, "  %s\n", u)
		}
	}
}
