package cli

import (
	"fmt"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/resolve"
)

// resolveView shows what is in doubt in a journal with its candidates, or
// the decision recorded about one record.
type resolveView interface {
	Hook() *progressHook
	Decision(d resolve.Decision, what string) error
	InDoubt(recs []resolve.Record, journalPath string) error
	Waived(recs []executor.WaivedRecord, journalPath string) error
}

func (a *app) resolveView(asJSON bool) resolveView {
	if asJSON {
		return resolveJSONView{jsonView{a}}
	}
	return resolveHuman{a.human()}
}

type resolveHuman struct{ humanView }

func (v resolveHuman) Decision(d resolve.Decision, what string) error {
	fmt.Fprintf(v.a.stdout, "recorded: %s/%s %s\n", d.Step, d.Record, what)
	return nil
}

func (v resolveHuman) InDoubt(recs []resolve.Record, journalPath string) error {
	w := v.a.stdout
	if len(recs) == 0 {
		fmt.Fprintln(w, "nothing is in doubt")
		return nil
	}
	for _, r := range recs {
		where := ""
		if r.Location != "" && r.Location != r.Record {
			where = " at " + r.Location
		}
		fmt.Fprintf(w, "%s/%s%s (%s): in doubt", r.Step, r.Record, where, r.Entity)
		if len(r.Sent) > 0 {
			fmt.Fprintf(w, "; sent %s", r.Sent)
		}
		if r.Lines > 0 {
			fmt.Fprintf(w, " with %s", diag.Count(r.Lines, "line", "lines"))
		}
		fmt.Fprintln(w)
		for _, c := range r.Candidates {
			differs := ""
			if len(c.Differs) > 0 {
				differs = " (differs in " + strings.Join(c.Differs, ", ") + ")"
			}
			fmt.Fprintf(w, "  candidate %s: %s%s\n", c.Key, fieldsText(c.Fields), differs)
		}
		if r.Note != "" {
			fmt.Fprintf(w, "  %s\n", r.Note)
		}
		if r.Create {
			fmt.Fprintf(w, "  decide: migrate resolve %s --record %s/%s --key KEY (or --not-created)\n", journalPath, r.Step, r.Record)
		}
	}
	fmt.Fprintf(w, "%s in doubt\n", diag.Count(len(recs), "record", "records"))
	return nil
}

func (v resolveHuman) Waived(recs []executor.WaivedRecord, journalPath string) error {
	for _, r := range recs {
		fmt.Fprintf(v.a.stdout, "waived: %s/%s (%s)\n", r.Step, r.Record, r.Reason)
	}
	them := "them"
	if len(recs) == 1 {
		them = "it"
	}
	fmt.Fprintf(v.a.stdout, "%s closed: apply never sends %s; `migrate status %s` counts %s as waived\n",
		diag.Count(len(recs), "record", "records"), them, journalPath, them)
	return nil
}

type resolveJSONView struct{ jsonView }

func (v resolveJSONView) Waived(recs []executor.WaivedRecord, _ string) error {
	return writeJSON(v.a.stdout, waivedJSON{Waived: waivedRecordsJSON(recs)})
}

func (v resolveJSONView) Decision(d resolve.Decision, what string) error {
	return writeJSON(v.a.stdout, decisionJSON{Step: d.Step, Record: d.Record, Key: d.Key, NotCreated: d.NotCreated, Message: what})
}

func (v resolveJSONView) InDoubt(recs []resolve.Record, _ string) error {
	out := resolveJSON{Records: []inDoubtJSON{}}
	for _, r := range recs {
		j := inDoubtJSON{Step: r.Step, Record: r.Record, Entity: r.Entity, Location: r.Location, Sent: r.Sent,
			Lines: r.Lines, Create: r.Create, Candidates: []candidateJSON{}, Note: r.Note}
		for _, c := range r.Candidates {
			j.Candidates = append(j.Candidates, candidateJSON{Key: c.Key, Fields: c.Fields, Differs: c.Differs})
		}
		out.Records = append(out.Records, j)
	}
	return writeJSON(v.a.stdout, out)
}
