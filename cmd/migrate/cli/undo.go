package cli

import (
	"context"
	"errors"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/undo"
)

// undoJSON is docs/cli.md's output of undo --json.
type undoJSON struct {
	Target   string           `json:"target"`
	Actions  []undoActionJSON `json:"actions"`
	Done     int              `json:"done"`
	Failed   int              `json:"failed"`
	Skipped  []string         `json:"skipped"`
	Warnings []string         `json:"warnings"`
	InDoubt  []string         `json:"in_doubt"`
	// WithDocuments: the records (STEP/ID) whose writes go with a
	// document the run created, which undo deletes.
	WithDocuments []string `json:"with_documents"`
}

type undoActionJSON struct {
	Step   string `json:"step"`
	Record string `json:"record"`
	Method string `json:"method"`
	URL    string `json:"url"`
	What   string `json:"what"`
	Done   bool   `json:"done"`
	Error  string `json:"error,omitempty"`
}

// undoDoc is the engine's undo summary as docs/cli.md documents it: its own
// names, and lists that are [] when empty, as the other commands' JSON.
func undoDoc(sum *undo.Summary) undoJSON {
	v := undoJSON{Target: sum.Target, Actions: []undoActionJSON{}, Done: sum.Done, Failed: sum.Failed,
		Skipped: append([]string{}, sum.Skipped...), Warnings: append([]string{}, sum.Warnings...), InDoubt: append([]string{}, sum.InDoubt...),
		WithDocuments: append([]string{}, sum.WithDocuments...)}
	for _, a := range sum.Actions {
		v.Actions = append(v.Actions, undoActionJSON{Step: a.Step, Record: a.Record, Method: a.Method, URL: a.URL, What: a.What, Done: a.Done, Error: a.Error})
	}
	return v
}

func (a *app) undo(ctx context.Context, args []string) error {
	var cf connFlags
	fs := connFlagSet("undo", &cf, false)
	yes := fs.Bool("yes", false, "do it; without --yes undo only shows what it would do")
	force := fs.Bool("force", false, "undo records changed since the run too (without it they are left alone)")
	asJSON := jsonFlag(fs)
	pos, err := a.parse(fs, args, "JOURNAL", 1, 1)
	if err != nil {
		return err
	}
	v := a.undoView(*asJSON)
	if err = a.journalTarget(pos[0], &cf); err != nil {
		return err
	}
	// The preview reads as --yes does (what changed since the run, what is
	// in doubt): both list one plan of actions. It connects when it first
	// reads: a journal that cannot be read is refused without it.
	lc := &lazyConn{a: a, cf: cf}
	defer lc.close()
	metadata := func(ctx context.Context) (*odata.Metadata, error) {
		cn, err := lc.get(ctx)
		if err != nil {
			return nil, err
		}
		md, _, err := cn.client.Metadata(ctx)
		return md, err
	}
	sum, err := undo.Undo(ctx, pos[0], lc, undo.Options{Yes: *yes, Force: *force, Target: cf.target, Metadata: metadata})
	if lc.err != nil {
		return lc.err // the target cannot be reached or refuses the credentials
	}
	if err != nil && sum == nil {
		if jerr := journalErr(err); jerr != nil {
			return jerr
		}
		var te *executor.TargetError
		if errors.As(err, &te) {
			return withCode(ExitUsage, err)
		}
		if errors.Is(err, executor.ErrInDoubt) || errors.Is(err, executor.ErrInterrupted) || errors.Is(err, context.Canceled) {
			return withCode(ExitInterrupted, err)
		}
		if lc.cn == nil {
			return withCode(ExitUsage, err) // nothing was read: a file of this machine
		}
		return a.unreachable(lc.cn, err)
	}
	if werr := v.Undo(sum, *yes); werr != nil {
		return werr
	}
	switch {
	case err != nil && (errors.Is(err, executor.ErrInDoubt) || errors.Is(err, executor.ErrInterrupted) || errors.Is(err, context.Canceled)):
		return withCode(ExitInterrupted, err)
	case journalErr(err) != nil:
		return journalErr(err)
	case sum.Failed > 0:
		return withCode(ExitData, err)
	case err != nil:
		return a.unreachable(nil, err)
	case *yes && len(sum.Skipped) > 0:
		// Records left alone are data a person has to look at (the
		// preview lists them too, and exits 0: nothing was left yet).
		return silent(ExitData)
	}
	return nil
}

// lazyConn is a connection made when it is first used (undo's reads).
type lazyConn struct {
	a   *app
	cf  connFlags
	cn  *conn
	err error
}

func (l *lazyConn) get(ctx context.Context) (*conn, error) {
	if l.cn == nil && l.err == nil {
		l.cn, _, l.err = l.a.connectVersion(ctx, l.cf, nil)
	}
	return l.cn, l.err
}

func (l *lazyConn) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	cn, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return cn.client.Batch(ctx, reqs, opts)
}

func (l *lazyConn) close() {
	if l.cn != nil {
		l.cn.Close()
	}
}

// journalTarget sets the target of a command on a journal (undo, verify):
// as for any command (flag, environment), else the journal's own; one that
// is not the journal's is refused. The dialect, where neither --dialect nor
// the environment gives it, is the journal's too.
func (a *app) journalTarget(jpath string, cf *connFlags) error {
	hdr, err := journal.ReadHeader(jpath)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	target, _ := a.targetURL(cf.target, nil)
	if target == "" {
		target = hdr.Target
	}
	cf.target = target
	cf.journalDialect = hdr.Dialect
	return a.refuseOtherTarget(jpath, target, "")
}
