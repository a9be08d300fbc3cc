package cli

import "fmt"

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
	return statusHuman{humanView{a}}
}

type statusHuman struct{ humanView }

func (v statusHuman) One(st *statusResult) error {
	st.print(v.a.stdout)
	return nil
}

func (v statusHuman) Each(i int, st *statusResult) {
	if i > 0 {
		fmt.Fprintln(v.a.stdout)
	}
	fmt.Fprintf(v.a.stdout, "== %s ==\n", st.title())
	st.print(v.a.stdout)
}

func (statusHuman) Done() error { return nil }

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
