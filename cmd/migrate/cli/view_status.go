package cli

import (
	"fmt"
	"io"
	"strconv"

	"github.com/migrate-tool/migrate/executor"
)

// statusView shows what journals say: the one asked for, or each of
// several (a company each) in turn.
type statusView interface {
	One(st *statusResult) error
	// Each is journal i of the journals asked for (a journal that could not
	// be read has its number too); Done ends them.
	Each(i int, st *statusResult)
	Done() error
}

func (a *app) statusView(asJSON bool) statusView {
	if asJSON {
		return &statusJSONView{jsonView: jsonView{a}}
	}
	return statusHuman{a.human()}
}

type statusHuman struct{ humanView }

func (v statusHuman) One(st *statusResult) error {
	v.journal(st)
	return nil
}

func (v statusHuman) Each(i int, st *statusResult) {
	if i > 0 {
		fmt.Fprintln(v.a.stdout)
	}
	fmt.Fprintf(v.a.stdout, "== %s ==\n", st.title())
	v.journal(st)
}

func (statusHuman) Done() error { return nil }

// journal shows one journal's counts and what to do next.
func (v statusHuman) journal(st *statusResult) {
	w := v.a.stdout
	doc := summaryJSON(st.sum)
	printSteps(w, doc, true)
	printPartly(w, st.sum.Errors)
	printWaived(w, doc.Waived)
	// Complete, though a delta's conflicts (exit 1) may stand.
	complete := st.code == ExitOK || len(st.sum.Unsent) > 0 && st.sum.Complete && !st.busy
	switch {
	case st.busy:
		fmt.Fprintln(w, "\nnot complete: a run is loading now")
	case complete && len(doc.Waived) > 0:
		fmt.Fprintf(w, "\ncomplete: every record is committed or skipped, %s waived\n", strconv.Itoa(len(doc.Waived)))
	case complete:
		fmt.Fprintln(w, "\ncomplete: every record is committed or skipped")
	default:
		fmt.Fprintln(w, "\nnot complete: "+st.sum.Next())
		if st.code == ExitData {
			v.waiveAdvice(st)
		}
	}
	if t := st.sum.UnsentText(); t != "" {
		printUnsent(w, t, st.sum.Unsent, complete)
	}
}

// printUnsent says (text, Summary.UnsentText) and lists the changes the
// last delta did not send, for each side changed the field since the
// load: after "complete:", or after what keeps the run from complete.
func printUnsent(w io.Writer, text string, unsent []executor.UnsentChange, complete bool) {
	lead := "and"
	if complete {
		lead = "but"
	}
	fmt.Fprintf(w, "%s %s:\n", lead, text)
	for _, u := range unsent {
		fmt.Fprintln(w, conflictLine(u.Step, u.Entity, conflictJSON(u.Conflict, false)))
	}
	fmt.Fprintln(w, "apply --delta --overwrite sends them; or make the sources give what the server holds, and apply --delta records it")
}

// waiveAdvice names resolve --waive for the failed records that will
// never load: without it they keep the run from complete
// for ever.
func (v statusHuman) waiveAdvice(st *statusResult) {
	if printGone(v.a.stdout, summaryJSON(st.sum).Gone, st.path) {
		return
	}
	fmt.Fprintf(v.a.stdout, "a failed record that will never load (a total line, a dropped duplicate) is closed with `migrate resolve %s --waive STEP/ID --reason TEXT`\n", st.path)
}

type statusJSONView struct {
	jsonView
	journals []journalStatus
}

func (v *statusJSONView) One(st *statusResult) error { return writeJSON(v.a.stdout, st.view) }

func (v *statusJSONView) Each(_ int, st *statusResult) {
	st.view.Journal, st.view.Company = st.path, st.company
	v.journals = append(v.journals, st.view)
}

func (v *statusJSONView) Done() error {
	return writeJSON(v.a.stdout, statusesJSON{Journals: v.journals})
}
