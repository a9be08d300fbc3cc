package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
)

func (a *app) status(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	asJSON := jsonFlag(fs)
	pos, err := a.parse(fs, args, "JOURNAL... | PLAN", 1, 1<<20)
	if err != nil {
		return err
	}
	paths, err := statusJournals(pos)
	if err != nil {
		return err
	}
	v := a.statusView(*asJSON)
	if len(paths) == 1 {
		st, err := a.statusOf(paths[0])
		if err != nil {
			return err
		}
		if err := v.One(st); err != nil {
			return err
		}
		return silent(st.code)
	}
	// Several journals (one a company): each in turn, the exit code the
	// worst of them.
	code := ExitOK
	for i, p := range paths {
		st, err := a.statusOf(p)
		if err != nil {
			code = worseCode(code, codeOf(err))
			fmt.Fprintf(a.stderr, "migrate status: %s\n", diag.Printable(err.Error()))
			continue
		}
		code = worseCode(code, st.code)
		v.Each(i, st)
	}
	if err := v.Done(); err != nil {
		return err
	}
	return silent(code)
}

// statusJournals are the journals status reads: those given, or for a plan
// its journals beside it: PLAN.journal and one PLAN.COMPANY.journal per
// company apply loaded.
func statusJournals(args []string) ([]string, error) {
	if len(args) != 1 {
		return args, nil
	}
	ext := strings.ToLower(filepath.Ext(args[0]))
	if ext != ".yaml" && ext != ".yml" {
		return args, nil
	}
	out := journalsBeside(args[0])
	if len(out) == 0 {
		return nil, usageErr("%s: no journal beside the plan (%s, or %s for a load of another company); give the journal's path", args[0], journalFile(args[0], ""), journalFile(args[0], "COMPANY"))
	}
	return out, nil
}

// globEscape quotes the characters filepath.Match reads as a pattern.
func globEscape(s string) string {
	return strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]").Replace(s)
}

// journalStatus is status --json of one journal.
type journalStatus struct {
	Journal    string       `json:"journal,omitempty"`
	Company    string       `json:"company,omitempty"`
	Complete   bool         `json:"complete"`
	Trial      int          `json:"trial,omitempty"`
	Unfinished []string     `json:"unfinished,omitempty"`
	Steps      []stepStatus `json:"steps"`
	// Waived are the failed records closed by resolve --waive, with their
	// reasons.
	Waived []waivedRecordJSON `json:"waived,omitempty"`
	// Gone: as the run document's.
	Gone []string `json:"gone,omitempty"`
}

type stepStatus struct {
	Name      string `json:"name"`
	Entity    string `json:"entity,omitempty"`
	Records   int    `json:"records"`
	Children  int    `json:"children"`
	Errors    int    `json:"errors"`
	Committed int    `json:"committed"`
	Failed    int    `json:"failed"`
	Skipped   int    `json:"skipped"`
	Pending   int    `json:"pending"`
	InDoubt   int    `json:"in_doubt"`
	Partly    int    `json:"partly_loaded,omitempty"`
	Waived    int    `json:"waived,omitempty"`
	Undone    int    `json:"undone,omitempty"`
	// Conflicts are the changes the last delta did not send, as
	// apply's delta lists them.
	Conflicts []deltaConflictJSON `json:"conflicts,omitempty"`
}

// statusesJSON is status --json of several journals.
type statusesJSON struct {
	Journals []journalStatus `json:"journals"`
}

// statusResult is what status found of one journal.
type statusResult struct {
	path    string
	company string // of the journal's target, "" when it names none
	sum     *executor.Summary
	busy    bool
	code    int
	view    journalStatus
}

func (a *app) statusOf(path string) (*statusResult, error) {
	sum, err := executor.Status(path)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	h, busy := journal.InUse(path)
	if busy {
		// status never waits for the lock: it reads what is on disk.
		fmt.Fprintf(a.stderr, "note: a run is writing %s now (%s); these are its counts so far\n", path, h)
	}
	st := &statusResult{path: path, sum: sum, busy: busy, code: statusCode(sum)}
	if busy {
		// Whatever the counts so far, the run is not over.
		st.code = ExitInterrupted
	}
	st.view = journalStatus{Complete: sum.Complete, Trial: sum.Trial, Unfinished: sum.Unfinished, Steps: []stepStatus{}}
	if hdr, err := journal.ReadHeader(path); err == nil && hdr.Target != "" {
		st.company = odata.CompanyOf(hdr.Target)
	}
	for _, s := range sum.Steps {
		ss := stepStatus{s.Name, s.Entity, s.Records, s.Children, s.Errors, s.Committed, s.Failed, s.Skipped, s.Pending, s.InDoubt, s.Partly, s.Waived, s.Undone, nil}
		for _, u := range sum.Unsent {
			if u.Step == s.Name {
				ss.Conflicts = append(ss.Conflicts, conflictJSON(u.Conflict, false))
			}
		}
		st.view.Steps = append(st.view.Steps, ss)
	}
	if len(sum.Waived) > 0 {
		st.view.Waived = waivedRecordsJSON(sum.Waived)
	}
	st.view.Gone = summaryJSON(sum).Gone
	return st, nil
}

// title names a journal among several: its company and its path.
func (st *statusResult) title() string {
	if st.company != "" {
		return "company " + st.company + ": " + st.path
	}
	return st.path
}

// failedIn reports whether records failed.
func failedIn(sum *executor.Summary) bool {
	for _, s := range sum.Steps {
		if s.Failed > 0 {
			return true
		}
	}
	return false
}

// pendingIn reports whether records are pending or in doubt.
func pendingIn(sum *executor.Summary) bool {
	for _, s := range sum.Steps {
		if s.Pending+s.InDoubt > 0 {
			return true
		}
	}
	return false
}

// statusCode is docs/cli.md's exit code for what a journal says: 4 while
// records are pending or in doubt or the last apply stopped before it ran
// every step, or was a trial or ran some steps (run apply again), 1 when only
// failed ones keep the run from complete or the last delta left a change
// unsent for a conflict, 0 when it is complete.
func statusCode(sum *executor.Summary) int {
	switch {
	case sum.Interrupted || pendingIn(sum):
		return ExitInterrupted
	case failedIn(sum):
		return ExitData
	case sum.Trial > 0 || len(sum.Unfinished) > 0:
		// A trial or some steps: the rest is to load, by apply.
		return ExitInterrupted
	case !sum.Complete, len(sum.Unsent) > 0:
		return ExitData
	}
	return ExitOK
}
