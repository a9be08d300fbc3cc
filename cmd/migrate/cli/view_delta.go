package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
)

// deltaJSON is apply's "delta": what changed in the sources of a complete
// journal since each record was loaded (docs/cli.md, Delta loads).
type deltaJSON struct {
	// Sent: apply --delta sent it (plan and diff: would send it); false:
	// listed only, nothing read.
	Sent    bool `json:"sent"`
	New     int  `json:"new"`
	Changed int  `json:"changed"`
	Gone    int  `json:"gone"`
	// Conflicts: left out of a listing, which reads nothing to find them.
	Conflicts *int `json:"conflicts,omitempty"`
	Unknown   int  `json:"unknown"`
	// Held: the changes the server held already, not sent.
	Held     int             `json:"held,omitempty"`
	Steps    []deltaStepJSON `json:"steps"`
	headline string          // Delta.Headline
	command  string          // Delta.Command
}

type deltaStepJSON struct {
	Name    string            `json:"name"`
	Entity  string            `json:"entity"`
	New     []deltaRecordJSON `json:"new"`
	Changed []deltaRecordJSON `json:"changed"`
	Gone    []deltaRecordJSON `json:"gone"`
	// Conflicts: left out of a listing, which reads nothing to find them.
	Conflicts *[]deltaConflictJSON `json:"conflicts,omitempty"`
	Unknown   int                  `json:"unknown"`
	Held      int                  `json:"held,omitempty"`
}

// conflicts are the step's conflicts; none in a listing.
func (s deltaStepJSON) conflicts() []deltaConflictJSON {
	if s.Conflicts == nil {
		return nil
	}
	return *s.Conflicts
}

type deltaRecordJSON struct {
	ID       string           `json:"id"`
	Location string           `json:"location,omitempty"`
	Key      string           `json:"key,omitempty"`
	Fields   []deltaFieldJSON `json:"fields,omitempty"`
	Lines    []deltaLineJSON  `json:"lines,omitempty"`
	Unsent   string           `json:"not_sent,omitempty"`
	Error    string           `json:"error,omitempty"`
	// Held: the changes of a changed record the server held already
	// (FIELD, NAV(KEY)/FIELD, NAV/TEXT), not sent.
	Held []string `json:"held,omitempty"`
}

type deltaFieldJSON struct {
	Field string          `json:"field"`
	Was   json.RawMessage `json:"was"`
	Now   json.RawMessage `json:"now"`
}

// deltaLineJSON is a line of a changed record: changed (fields), new or
// gone from the sources.
type deltaLineJSON struct {
	Subform string `json:"subform"`
	// Line: the line (NAV(KEY)) a line's own sub-form (its text) is of.
	Line string `json:"line,omitempty"`
	// Single: a single-object sub-form (a ship-to address, a text), no key.
	Single bool `json:"single,omitempty"`
	// Text: a text sub-form, its one field TEXT.
	Text     bool             `json:"text,omitempty"`
	Key      string           `json:"key,omitempty"`
	Location string           `json:"location,omitempty"`
	New      bool             `json:"new,omitempty"`
	Gone     bool             `json:"gone,omitempty"`
	Fields   []deltaFieldJSON `json:"fields,omitempty"`
}

type deltaConflictJSON struct {
	journal.Conflict
	Overwritten bool `json:"overwritten"`
}

// conflicted reports whether the delta left a conflict unsent (apply
// --delta exits 1 for it, and plan --delta, which predicts it, too).
func (d *deltaJSON) conflicted() bool {
	return d != nil && d.Conflicts != nil && *d.Conflicts > 0
}

func deltaOf(d *executor.Delta) *deltaJSON {
	if d == nil {
		return nil
	}
	out := &deltaJSON{Sent: d.Sent, Steps: []deltaStepJSON{}, headline: d.Headline(), command: d.Command()}
	var conflicts int
	out.New, out.Changed, out.Gone, conflicts, out.Unknown = d.Counts()
	out.Held = d.HeldCount()
	if d.Sent {
		out.Conflicts = &conflicts
	}
	records := func(rs []executor.DeltaRecord, held map[string][]string) []deltaRecordJSON {
		l := []deltaRecordJSON{}
		for _, r := range rs {
			j := deltaRecordJSON{ID: r.ID, Location: r.Loc, Key: r.Key, Unsent: r.Unsent, Error: r.Error, Held: held[r.ID]}
			j.Fields = fieldsJSON(r.Fields)
			for _, dl := range r.Lines {
				j.Lines = append(j.Lines, deltaLineJSON{Subform: dl.Nav, Line: dl.Parent, Single: dl.Single, Text: dl.Text, Key: dl.Key, Location: dl.Loc, New: dl.New, Gone: dl.Gone, Fields: fieldsJSON(dl.Fields)})
			}
			l = append(l, j)
		}
		return l
	}
	for _, s := range d.Steps {
		js := deltaStepJSON{Name: s.Name, Entity: s.Entity, New: records(s.New, nil), Changed: records(s.Changed, s.Held), Gone: records(s.Gone, nil), Unknown: s.Unknown, Held: s.HeldCount()}
		if d.Sent {
			cs := []deltaConflictJSON{}
			for _, c := range s.Conflicts {
				cs = append(cs, conflictJSON(c.Conflict, c.Overwritten))
			}
			js.Conflicts = &cs
		}
		out.Steps = append(out.Steps, js)
	}
	return out
}

func conflictJSON(c journal.Conflict, overwritten bool) deltaConflictJSON {
	return deltaConflictJSON{c, overwritten}
}

func fieldsJSON(fs []executor.DeltaField) []deltaFieldJSON {
	var out []deltaFieldJSON
	for _, f := range fs {
		out = append(out, deltaFieldJSON{Field: f.Field, Was: f.Was, Now: f.Now})
	}
	return out
}

// printDelta says what a delta listed or sent, a line per record.
func printDelta(w io.Writer, d *deltaJSON) {
	if d == nil {
		return
	}
	fmt.Fprintf(w, "\n%s\n", d.headline)
	for _, s := range d.Steps {
		for _, r := range s.New {
			if r.ID == r.Location { // a record known by its row: said once
				fmt.Fprintf(w, "  %s: new %s", s.Name, r.ID)
			} else {
				fmt.Fprintf(w, "  %s: new %s (%s)", s.Name, r.ID, r.Location)
			}
			if r.Error != "" {
				fmt.Fprintf(w, ": %s", r.Error)
			}
			fmt.Fprintln(w)
		}
		for _, r := range s.Changed {
			fmt.Fprintf(w, "  %s: changed %s %s(%s)", s.Name, r.ID, s.Entity, r.Key)
			var fs []string
			for _, f := range r.Fields {
				fs = append(fs, fmt.Sprintf("%s %s -> %s", f.Field, f.Was, f.Now))
			}
			for _, l := range r.Lines {
				fs = append(fs, lineChange(l))
			}
			if len(fs) > 0 {
				fmt.Fprintf(w, ": %s", strings.Join(fs, ", "))
			}
			if r.Unsent != "" {
				fmt.Fprintf(w, "; not sent: %s", r.Unsent)
			}
			if len(r.Held) > 0 {
				fmt.Fprintf(w, "; the server holds it already, not sent: %s", strings.Join(r.Held, ", "))
			}
			fmt.Fprintln(w)
		}
		for _, r := range s.Gone {
			fmt.Fprintf(w, "  %s: gone %s %s(%s): no longer in the sources; never deleted, decide what becomes of it\n", s.Name, r.ID, s.Entity, r.Key)
		}
		for _, c := range s.conflicts() {
			fmt.Fprintln(w, conflictLine(s.Name, s.Entity, c))
		}
		if s.Unknown > 0 {
			fmt.Fprintf(w, "  %s: %s loaded by an older version keep nothing to compare with: taken as unchanged\n", s.Name, diag.Count(s.Unknown, "record", "records"))
		}
	}
}

// lineChange is a line of a changed record as printDelta says it:
// "line NAV(KEY) FIELD was -> now", "new line NAV (file:row) FIELD now ...",
// "line NAV(KEY) gone from the sources (never deleted)"; a single object
// (a ship-to address) likewise as "sub-form NAV FIELD was -> now", "new
// sub-form NAV (file:row) FIELD now ...".
func lineChange(l deltaLineJSON) string {
	if l.Text {
		return textChange(l)
	}
	what, name := "line", l.Subform
	if l.Single {
		what = "sub-form"
	}
	if l.Key != "" {
		name += "(" + l.Key + ")"
	}
	if l.Line != "" {
		name = l.Line + "/" + name // a line's own sub-form
	}
	switch {
	case l.New:
		var fs []string
		for _, f := range l.Fields {
			fs = append(fs, fmt.Sprintf("%s %s", f.Field, f.Now))
		}
		return fmt.Sprintf("new %s %s (%s) %s", what, name, l.Location, strings.Join(fs, " "))
	case l.Gone:
		return what + " " + name + " gone from the sources (never deleted)"
	}
	var fs []string
	for _, f := range l.Fields {
		fs = append(fs, fmt.Sprintf("%s %s -> %s", f.Field, f.Was, f.Now))
	}
	return what + " " + name + " " + strings.Join(fs, ", ")
}

// textChange is a text of a changed record as printDelta says it: "text
// NAV was -> now", "new text NAV (file:row) now", "text NAV gone from the
// sources (never deleted)".
func textChange(l deltaLineJSON) string {
	name := l.Subform
	if l.Line != "" {
		name = l.Line + "/" + name // a line's text
	}
	switch {
	case l.Gone:
		return "text " + name + " gone from the sources (never deleted)"
	case len(l.Fields) == 0:
		return "text " + name
	case l.New:
		return fmt.Sprintf("new text %s (%s) %s", name, l.Location, l.Fields[0].Now)
	}
	return fmt.Sprintf("text %s %s -> %s", name, l.Fields[0].Was, l.Fields[0].Now)
}

// deltaFlags are --delta and --overwrite, of apply and of its predictions
// (plan, diff).
type deltaFlags struct{ delta, overwrite bool }

func (d *deltaFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&d.delta, "delta", false, "over a journal whose last run loaded everything: create the records new in the sources and patch the changed fields of the changed ones (gone ones are listed, never deleted)")
	fs.BoolVar(&d.overwrite, "overwrite", false, "with --delta: patch a changed field someone changed on the server since the journal wrote it too")
}

// check refuses --overwrite without --delta, and --delta with a trial or
// a choice of steps.
func (d deltaFlags) check(limit, steps bool) error {
	switch {
	case d.overwrite && !d.delta:
		return usageErr("--overwrite goes with --delta: it lets a delta patch fields changed on the server since the load")
	case d.delta && (limit || steps):
		return usageErr("--delta loads every step's changes: it does not go with --limit or --steps")
	}
	return nil
}

// conflictLine says a conflict of step (its entity entity) in a line: what
// each side holds, and whether it was sent.
func conflictLine(step, entity string, c deltaConflictJSON) string {
	end := "not sent (apply --delta --overwrite sends it anyway)"
	if c.Overwritten {
		end = "overwritten (--overwrite)"
	}
	return fmt.Sprintf("  %s: conflict %s %s(%s): %s changed on the server since the load: we wrote %s, it holds %s, the source now gives %s; %s",
		step, c.ID, entity, c.Key, c.What(), c.Ours, c.Theirs, c.Now, end)
}
