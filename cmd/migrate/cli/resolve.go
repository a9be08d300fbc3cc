package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/report"
	"github.com/migrate-tool/migrate/resolve"
)

// resolveJSON is `resolve --json` listing what is in doubt.
type resolveJSON struct {
	Records []inDoubtJSON `json:"records"`
}

type inDoubtJSON struct {
	Step       string          `json:"step"`
	Record     string          `json:"record"`
	Entity     string          `json:"entity"`
	Location   string          `json:"location,omitempty"`
	Sent       json.RawMessage `json:"sent,omitempty"`
	Lines      int             `json:"lines"`
	Create     bool            `json:"create"`
	Candidates []candidateJSON `json:"candidates"`
	Note       string          `json:"note,omitempty"`
}

type candidateJSON struct {
	Key    string         `json:"key"`
	Fields map[string]any `json:"fields"`
	// Differs: the field a near candidate holds with another value than
	// the record sent.
	Differs []string `json:"differs,omitempty"`
}

// waivedJSON is `resolve --waive ... --json`: the records closed.
type waivedJSON struct {
	Waived []waivedRecordJSON `json:"waived"`
}

// waivedRecordJSON is a waived record, in resolve --waive and status --json.
type waivedRecordJSON struct {
	Step     string `json:"step"`
	Record   string `json:"record"`
	Location string `json:"location,omitempty"`
	Reason   string `json:"reason"`
}

func waivedRecordsJSON(recs []executor.WaivedRecord) []waivedRecordJSON {
	out := make([]waivedRecordJSON, 0, len(recs))
	for _, r := range recs {
		out = append(out, waivedRecordJSON{Step: r.Step, Record: r.Record, Location: r.Location, Reason: r.Reason})
	}
	return out
}

// decisionJSON is `resolve --record ... --json`: what was recorded.
type decisionJSON struct {
	Step       string `json:"step"`
	Record     string `json:"record"`
	Key        string `json:"key,omitempty"`
	NotCreated bool   `json:"not_created"`
	Message    string `json:"message"`
}

func (a *app) resolve(ctx context.Context, args []string) error {
	var cf connFlags
	fs := connFlagSet("resolve", &cf, false)
	asJSON := jsonFlag(fs)
	record := fs.String("record", "", "STEP/ID: the record in doubt to decide, as the list names it")
	key := fs.String("key", "", "with --record: the key of the document that is the record's (one of its candidates)")
	notCreated := fs.Bool("not-created", false, "with --record: its document was not created; the next apply sends it again")
	var waive listFlag
	fs.Var(&waive, "waive", "STEP/ID, repeatable: close this failed record, which will never load (a total line, a dropped duplicate); needs --reason")
	reason := fs.String("reason", "", "with --waive: why the records will never load (status and the report show it)")
	yes := fs.Bool("yes", false, "record the decision without asking (required when stdin is not a terminal)")
	pos, err := a.parse(fs, args, "JOURNAL", 1, 1)
	if err != nil {
		return err
	}
	v := a.resolveView(*asJSON)
	if len(waive) > 0 || *reason != "" {
		return a.waive(pos[0], cf, waive, *reason, *record != "" || *key != "" || *notCreated, *yes, v)
	}
	var d resolve.Decision
	switch {
	case *record == "" && (*key != "" || *notCreated || *yes):
		return usageErr("--key, --not-created and --yes decide one record: give it with --record STEP/ID")
	case *record != "" && (*key == "") == !*notCreated:
		return usageErr("--record %s: say what became of it, with --key KEY (its document) or --not-created", *record)
	case *record != "":
		ref, err := recordRef("--record", *record, pos[0])
		if err != nil {
			return err
		}
		d = resolve.Decision{Step: ref.Step, Record: ref.Record, Key: *key, NotCreated: *notCreated}
	}
	st, err := journal.Load(pos[0])
	if err != nil {
		return withCode(ExitUsage, err)
	}
	// Candidates from another company would be no candidates at all.
	if given, _ := a.targetURL(cf.target, nil); given != "" {
		if err := executor.CheckTarget(pos[0], st.Header, given); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	if cf.target == "" && a.getenv("MIGRATE_TARGET") == "" {
		cf.target = st.Header.Target
	}
	cf.journalDialect = st.Header.Dialect
	if d.Step != "" && !*yes {
		if err := a.confirm(d, pos[0]); err != nil {
			return err
		}
	}
	cn, md, err := a.connectMetadata(ctx, cf, nil)
	if err != nil {
		return err
	}
	defer cn.Close()
	opts := resolve.Options{Client: cn.client, Metadata: md, Hook: v.Hook()}
	if d.Step != "" {
		what, err := resolve.Decide(ctx, pos[0], d, opts)
		var de *resolve.DecisionError
		var corrupt *journal.CorruptError
		switch {
		case errors.As(err, &de), errors.As(err, &corrupt):
			return withCode(ExitUsage, err)
		case errors.Is(err, executor.ErrInDoubt):
			return withCode(ExitInterrupted, err)
		case err != nil:
			return a.unreachable(cn, err)
		}
		return v.Decision(d, what)
	}
	recs, err := resolve.InDoubt(ctx, pos[0], opts)
	if err != nil {
		if errors.Is(err, executor.ErrInDoubt) {
			return withCode(ExitInterrupted, err)
		}
		return a.unreachable(cn, err)
	}
	return v.InDoubt(recs, pos[0])
}

// recordRef is a STEP/ID flag's value.
func recordRef(flagName, v, journalPath string) (executor.RecordRef, error) {
	step, id, ok := strings.Cut(v, "/")
	if !ok || step == "" || id == "" {
		return executor.RecordRef{}, usageErr("%s %q: want STEP/ID, as `migrate resolve %s` or `migrate status` lists it (e.g. orders/orders.csv:7)", flagName, v, journalPath)
	}
	return executor.RecordRef{Step: step, Record: id}, nil
}

// waive closes failed records that will never load. It
// writes only to the journal: nothing connects.
func (a *app) waive(journalPath string, cf connFlags, recs []string, reason string, decides, yes bool, v resolveView) error {
	switch {
	case decides:
		return usageErr("--waive closes failed records; --record, --key and --not-created decide a record in doubt: give one or the other")
	case len(recs) == 0:
		return usageErr("--reason goes with --waive STEP/ID: the failed records to close")
	case strings.TrimSpace(reason) == "":
		return usageErr("--waive needs --reason TEXT: why the records will never load (status and the report show it)")
	}
	refs := make([]executor.RecordRef, 0, len(recs))
	for _, r := range recs {
		ref, err := recordRef("--waive", r, journalPath)
		if err != nil {
			return err
		}
		refs = append(refs, ref)
	}
	hdr, err := journal.ReadHeader(journalPath)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if given, _ := a.targetURL(cf.target, nil); given != "" {
		if err := executor.CheckTarget(journalPath, hdr, given); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	if !yes {
		what := fmt.Sprintf("%s will never load (%s), and close it", strings.Join(recs, ", "), reason)
		if err := a.confirmRecord(journalPath, what); err != nil {
			return err
		}
	}
	done, err := resolve.Waive(journalPath, refs, reason)
	var de *resolve.DecisionError
	switch {
	case errors.As(err, &de):
		return withCode(ExitUsage, err)
	case journalErr(err) != nil:
		return journalErr(err)
	case err != nil:
		return err
	}
	return v.Waived(done, journalPath)
}

// confirm asks on a terminal before a decision is recorded; without one
// it refuses, naming --yes.
func (a *app) confirm(d resolve.Decision, journalPath string) error {
	what := "its document is " + d.Key
	if d.NotCreated {
		what = "it was not created (the next apply sends it again)"
	}
	return a.confirmRecord(journalPath, fmt.Sprintf("%s/%s: %s", d.Step, d.Record, what))
}

// confirmRecord asks on a terminal whether to record what in the journal;
// without a terminal it refuses, naming --yes.
func (a *app) confirmRecord(journalPath, what string) error {
	yes, asked := a.askTerminal(fmt.Sprintf("Record in %s that %s? [y/N] ", journalPath, what))
	switch {
	case !asked:
		return usageErr("recording a decision needs a confirmation and stdin is not a terminal: run again with --yes to record it")
	case !yes:
		return withCode(ExitUsage, errors.New("nothing recorded"))
	}
	return nil
}

// fieldsText is a candidate's fields as NAME=value, in name order.
func fieldsText(m map[string]any) string { return report.FieldsText(m, " ") }
