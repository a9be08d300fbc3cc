package cli

import (
	"fmt"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/undo"
)

// undoView shows what undo would do, or did (yes).
type undoView interface {
	Undo(sum *undo.Summary, yes bool) error
}

func (a *app) undoView(asJSON bool) undoView {
	if asJSON {
		return undoJSONView{jsonView{a}}
	}
	return undoHuman{a.human()}
}

type undoHuman struct{ humanView }

func (v undoHuman) Undo(sum *undo.Summary, yes bool) error {
	w := v.a.stdout
	target := sum.Target
	if target == "" {
		target = "not known (the journal names none; give --target)"
	}
	fmt.Fprintf(w, "target: %s\n", target)
	for _, act := range sum.Actions {
		state := "would"
		switch {
		case act.Error != "":
			state = "FAILED"
		case act.Done:
			state = "done"
		}
		line := fmt.Sprintf("%-6s %s %s  (%s %s: %s)", state, act.Method, act.URL, act.Step, act.Record, act.What)
		if act.Error != "" {
			line += ": " + act.Error
		}
		fmt.Fprintln(w, line)
	}
	for _, s := range sum.Skipped {
		if yes {
			fmt.Fprintln(w, "skipped", s)
		} else {
			fmt.Fprintln(w, "would skip", s) // --yes leaves it alone, as read now
		}
	}
	for _, n := range sum.Warnings {
		fmt.Fprintln(w, "note:", n)
	}
	for _, r := range sum.InDoubt {
		fmt.Fprintln(w, "left in doubt:", r)
	}
	for _, r := range sum.WithDocuments {
		// What it wrote is in a document the run created, which goes.
		fmt.Fprintln(w, "goes with the document the run created:", r)
	}
	switch {
	case !yes && len(sum.Actions) == 0:
		fmt.Fprintf(w, "nothing to undo on %s\n", target)
	case !yes:
		fmt.Fprintf(w, "%s on %s; run again with --yes to do it\n", diag.Count(len(sum.Actions), "action", "actions"), target)
	default:
		fmt.Fprintf(w, "%d done, %d failed, %d skipped\n", sum.Done, sum.Failed, len(sum.Skipped))
	}
	return nil
}

type undoJSONView struct{ jsonView }

func (v undoJSONView) Undo(sum *undo.Summary, _ bool) error {
	return writeJSON(v.a.stdout, undoDoc(sum))
}
