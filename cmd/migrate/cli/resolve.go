package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/journal"
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
	fs := flag.NewFlagSet("resolve", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, false)
	asJSON := fs.Bool("json", false, "print one JSON document on stdout")
	record := fs.String("record", "", "STEP/ID: the record in doubt to decide, as the list names it")
	key := fs.String("key", "", "with --record: the key of the document that is the record's (one of its candidates)")
	notCreated := fs.Bool("not-created", false, "with --record: its document was not created; the next apply sends it again")
	yes := fs.Bool("yes", false, "record the decision without asking (required when stdin is not a terminal)")
	pos, err := a.parse(fs, args, "JOURNAL", 1, 1)
	if err != nil {
		return err
	}
	v := a.resolveView(*asJSON)
	var d executor.Decision
	switch {
	case *record == "" && (*key != "" || *notCreated || *yes):
		return usageErr("--key, --not-created and --yes decide one record: give it with --record STEP/ID")
	case *record != "" && (*key == "") == !*notCreated:
		return usageErr("--record %s: say what became of it, with --key KEY (its document) or --not-created", *record)
	case *record != "":
		step, id, ok := strings.Cut(*record, "/")
		if !ok || step == "" || id == "" {
			return usageErr("--record %q: want STEP/ID, as `migrate resolve %s` lists it (e.g. orders/orders.csv:7)", *record, pos[0])
		}
		d = executor.Decision{Step: step, Record: id, Key: *key, NotCreated: *notCreated}
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
	if d.Step != "" && !*yes {
		if err := a.confirm(d, pos[0]); err != nil {
			return err
		}
	}
	cn, err := a.connect(ctx, cf, nil)
	if err != nil {
		return err
	}
	defer cn.Close()
	md, _, err := cn.client.Metadata(ctx)
	if err != nil {
		return a.unreachable(cn, err)
	}
	opts := executor.ResolveOptions{Client: cn.client, Metadata: md, Hook: v.Hook()}
	if d.Step != "" {
		what, err := executor.Resolve(ctx, pos[0], d, opts)
		var de *executor.DecisionError
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
	recs, err := executor.InDoubt(ctx, pos[0], opts)
	if err != nil {
		if errors.Is(err, executor.ErrInDoubt) {
			return withCode(ExitInterrupted, err)
		}
		return a.unreachable(cn, err)
	}
	return v.InDoubt(recs, pos[0])
}

// confirm asks on a terminal before a decision is recorded; without one
// it refuses, naming --yes.
func (a *app) confirm(d executor.Decision, journalPath string) error {
	what := "its document is " + d.Key
	if d.NotCreated {
		what = "it was not created (the next apply sends it again)"
	}
	yes, asked := a.askTerminal(fmt.Sprintf("Record in %s that %s/%s: %s? [y/N] ", journalPath, d.Step, d.Record, what))
	switch {
	case !asked:
		return usageErr("recording a decision needs a confirmation and stdin is not a terminal: run again with --yes to record it")
	case !yes:
		return withCode(ExitUsage, errors.New("nothing recorded"))
	}
	return nil
}

// fieldsText is a candidate's fields as NAME=value, in name order.
func fieldsText(m map[string]any) string { return executor.FieldsText(m, " ") }
