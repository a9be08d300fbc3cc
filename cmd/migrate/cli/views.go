package cli

import (
	"fmt"
	"io"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/plan"
)

// Every command's output goes through a view of its own (Terraform's
// views): an interface with a human implementation and a JSON one, chosen
// once from --json. Commands compute results and hand them over; views
// render them on stdout, the human text or one JSON document. Warnings,
// notes and progress go to stderr whatever the view: the progress hook a
// view hands out is quiet but for warnings under --json.
//
// The views are in view_COMMAND.go; the JSON documents they write, and the
// human tables they share, in view.go.

// humanView is what every human view shares. Its app's stdout shows
// control characters escaped (diag.PrintableWriter): a login name, a
// server's message or a cell can hold escape sequences and carriage
// returns that would clear the screen or forge a line.
type humanView struct{ a *app }

// human is the humanView of a.
func (a *app) human() humanView {
	h := *a
	h.stdout = diag.PrintableWriter(a.stdout)
	return humanView{&h}
}

func (v humanView) Hook() *progressHook { return v.a.newHook(false) }

// wrote says where a file the command wrote is, format holding its name's
// one %s; it says nothing when file is "" (not asked for).
func (v humanView) wrote(format, file string) {
	if file != "" {
		fmt.Fprintf(v.a.stdout, format, file)
	}
}

// Problems: a person read the problems on stderr already.
func (humanView) Problems(*plan.Plan, plan.Diagnostics) error { return nil }

// jsonView is what every JSON view shares.
type jsonView struct{ a *app }

func (v jsonView) Hook() *progressHook { return v.a.newHook(true) }

// Problems is validate's document: with --json, stdout still gets its one
// document when the plan's problems stop the command.
func (v jsonView) Problems(p *plan.Plan, ds plan.Diagnostics) error {
	return writeJSON(v.a.stdout, validateJSON{OK: false, Problems: problemsJSON(p, ds)})
}

// runView is what the views of the commands that run a plan (plan, diff,
// apply) share: the problems that stop the command before anything is
// read or sent, and the progress of the run.
type runView interface {
	Problems(p *plan.Plan, ds plan.Diagnostics) error
	Hook() *progressHook
}

// docView is the view of a command whose output is one document and the
// files it wrote beside it (diff, verify): a person reads the document as
// print shows it, then where each file is, a sentence a file as
// humanView.wrote says it; --json writes the document alone.
type docView[T any] interface {
	show(doc T, files ...string) error
}

// newDocView is the docView of --json or of a person: print shows the
// document, says[i] is the sentence of the command's i-th file.
func newDocView[T any](a *app, asJSON bool, print func(io.Writer, T), says ...string) docView[T] {
	if asJSON {
		return docJSONView[T]{jsonView{a}}
	}
	return docHuman[T]{a.human(), print, says}
}

type docHuman[T any] struct {
	humanView
	print func(io.Writer, T)
	says  []string
}

func (v docHuman[T]) show(doc T, files ...string) error {
	v.print(v.a.stdout, doc)
	for i, f := range files {
		v.wrote(v.says[i], f)
	}
	return nil
}

type docJSONView[T any] struct{ jsonView }

func (v docJSONView[T]) show(doc T, _ ...string) error { return writeJSON(v.a.stdout, doc) }
