package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/odata"
)

// printProblems shows validate's findings on stderr; errors stop the
// command before anything is read or sent, warnings do not. With --json,
// stdout still gets its one document: validate's.
func (a *app) printProblems(c *checked, v runView) error {
	for _, d := range c.diags {
		fmt.Fprintln(a.stderr, d.String())
	}
	if c.plan != nil && !c.diags.HasErrors() {
		return nil
	}
	if err := v.Problems(c.plan, c.diags); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "%s; nothing was sent (run `migrate validate` for the same list)\n", diag.Count(len(c.diags.Errors()), "problem", "problems"))
	if c.plan == nil {
		return silent(ExitUsage)
	}
	return silent(ExitData)
}

// checkToRun is how plan, apply and diff begin: the plan checked (check)
// and its problems shown (printProblems), which stop the command. The
// caller closes what it returns.
func (a *app) checkToRun(ctx context.Context, path string, f checkFlags, needConn bool, v runView) (*checked, error) {
	c, err := a.check(ctx, path, f, needConn)
	if err != nil {
		return nil, err
	}
	if err := a.printProblems(c, v); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// readyToRun is what plan, apply and diff do between checking the plan
// and running it, in this order: the lookup tables built (buildLookups),
// the values of file maps that no mapping file confirms refused when
// apply's view is given (refuseMapValues), and the exists: checks run against c's target,
// else the earlier steps only (checkReferences).
func (a *app) readyToRun(ctx context.Context, c *checked, confirm applyView) (*executor.References, error) {
	if err := a.buildLookups(ctx, c); err != nil {
		return nil, err
	}
	if confirm != nil {
		if err := a.refuseMapValues(ctx, c, confirm); err != nil {
			return nil, err
		}
	}
	var target executor.Client
	if c.conn != nil {
		target = c.conn.client
	}
	return a.checkReferences(ctx, c, target)
}

// checkReferences runs the plan's exists: checks before anything is sent:
// against target when there is one, else against the earlier steps only
// (the dry run's count then says what it holds only as far as:
// Summary.ExistsUnread). It returns what it found: the unresolved values,
// errors of the run, and the records that give them.
func (a *app) checkReferences(ctx context.Context, c *checked, target executor.Client) (*executor.References, error) {
	refs, err := executor.CheckReferences(ctx, c.run, target)
	if err != nil {
		if errors.Is(err, executor.ErrTargetRead) {
			return nil, a.unreachable(c.conn, err)
		}
		return nil, withCode(ExitData, err)
	}
	return refs, nil
}

// foreseeStart records in sum, the dry run's or diff's, why apply would
// not start, as apply finds it before it sends anything: refs' unresolved
// exists: values (unless --allow-missing-references), the values of file
// maps that no mapping file confirms, a load over the pool's transactions
// left.
func (a *app) foreseeStart(ctx context.Context, c *checked, r runFlags, refs *executor.References, sum *executor.Summary) error {
	unconfirmed, err := executor.CheckMaps(ctx, c.run)
	if err != nil {
		return withCode(ExitData, err)
	}
	left, err := r.budget(c)
	if err != nil {
		return err
	}
	sum.RefuseStart(len(refs.Unresolved), len(unconfirmed), r.allowMissing, left)
	return nil
}

// refuseUnresolved is apply's answer to unresolved references: the list,
// and nothing sent (exit 1).
func (a *app) refuseUnresolved(unresolved []executor.RecordError, v applyView) error {
	if err := v.Unresolved(errorsOf(unresolved)); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "unresolved references: %s of exists: fields, on neither the target nor an earlier step; nothing was sent (create them first, correct the source, or give --allow-missing-references)\n",
		diag.Count(len(unresolved), "value", "values"))
	return silent(ExitData)
}

// refuseMapValues is apply's answer to values of file maps that their
// mapping files do not confirm: the list, each value once at
// its first cell, and nothing sent (exit 1).
func (a *app) refuseMapValues(ctx context.Context, c *checked, v applyView) error {
	refused, err := executor.CheckMaps(ctx, c.run)
	if err != nil {
		return withCode(ExitData, err)
	}
	if len(refused) == 0 {
		return nil
	}
	if err := v.Unresolved(errorsOf(refused)); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "unconfirmed map values: %s that a mapping file does not confirm; nothing was sent (confirm them in the file, or run `migrate mapping` to list them)\n",
		diag.Count(len(refused), "value", "values"))
	return silent(ExitData)
}

// buildLookups builds the plan's lookup tables once: a source's from its
// rows, a target lookup's (lookups: NAME: {entity: ...}) by reading the
// target when there is one.
func (a *app) buildLookups(ctx context.Context, c *checked) error {
	var target *odata.Client
	if c.conn != nil {
		target = c.conn.client
	}
	if err := c.run.BuildLookups(ctx, target); err != nil {
		return withCode(ExitData, err)
	}
	return nil
}
