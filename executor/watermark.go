package executor

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/reconcile"
)

// A document whose create went in doubt is found again by its fields
// above the step's watermark (reconcile.Reader.MarkField): the highest
// value the run read before the step's first create whose key the server
// assigns, journaled here.

// markOnce takes a step's watermark at most once per Apply.
type markOnce struct {
	once sync.Once
	err  error
}

// takeWatermark journals the step's watermark before the first batch that
// creates one of its entities with a server-assigned key.
func (sr *stepRun) takeWatermark(batch []*op) error {
	need := false
	for _, o := range batch {
		if o.parent == nil && o.kind == journal.OpCreate && o.key == "" {
			need = true
			break
		}
	}
	if !need {
		return nil
	}
	sr.mark.once.Do(func() { sr.mark.err = sr.r.journalWatermark(sr.step.Name, sr.entity) })
	return sr.mark.err
}

// isWatermarkRead reports whether a read's URL is watermarkQuery's.
func isWatermarkRead(u string) bool {
	_, q, ok := strings.Cut(u, "?")
	if !ok {
		return false
	}
	v, err := url.ParseQuery(q)
	return err == nil && v.Get("$top") == "2" && strings.HasSuffix(v.Get("$orderby"), " desc") && v.Get("$select") != "" && len(v) == 3
}

// watermarkQuery is the read of entity's watermark, of its field F
// (reconcile.Reader.MarkField): ENTITY?$select=F&$orderby=F desc&$top=2;
// "" when it has no such field to read.
func (r *runner) watermarkQuery(entity string) (query, field string) {
	set := r.md.EntitySet(entity)
	if set == nil {
		return "", ""
	}
	field = r.rd.MarkField(set.Type)
	if field == "" {
		return "", ""
	}
	q := url.Values{"$select": {field}, "$orderby": {field + " desc"}, "$top": {"2"}}
	return entity + "?" + strings.ReplaceAll(q.Encode(), "+", "%20"), field
}

// journalWatermark reads ENTITY?$select=F&$orderby=F desc&$top=2 and
// journals the highest F. A server that cannot answer it (no $orderby, a
// field hidden) gets a warning and no watermark: reconciliation then
// matches as journals without one do, and says so.
func (r *runner) journalWatermark(step, entity string) error {
	query, field := r.watermarkQuery(entity)
	if query == "" {
		return nil
	}
	var calls odata.CallStats // for the run report: this read is a call too
	resp, err := r.rd.ReadCtx(odata.WithCallStats(r.ctx, &calls), query)
	if err != nil {
		return err
	}
	if !r.jr.reconciles() {
		// The dry run leaves nothing in doubt, but apply's read of the
		// watermark is a call (which warms the form): it is made, to the
		// simulated service, and counted; its value bounds nothing.
		return nil
	}
	value, why := highest(resp, field)
	if why != "" {
		r.warn(fmt.Sprintf("step %s: cannot read the highest %s of %s (%s); a create of this step that goes in doubt may be matched to a document made before the run", step, field, entity, why))
		return nil
	}
	wm := journal.Watermark{Step: step, Field: field, Value: value}
	if err := r.appendWith(StampCalls(journal.Entry{Kind: journal.KindWatermark, Mark: &wm}, r.opts.now().UTC(), &calls)); err != nil {
		return err
	}
	// A failed deep insert is looked up during the run (deep.go), above
	// this mark, which the state replayed at the start does not hold.
	r.rd.SetWatermark(wm)
	return nil
}

// highest reads the answer of the watermark query: the first value, after
// checking that the rows came in descending order (a server that ignored
// $orderby would give the lowest instead).
func highest(resp odata.BatchResponse, field string) (value, why string) {
	if resp.Status != 200 {
		return "", fmt.Sprintf("status %d", resp.Status)
	}
	var body struct {
		Value []map[string]json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		return "", "the answer is not a list of rows"
	}
	var vals []string
	for _, row := range body.Value {
		raw, ok := row[field]
		if !ok {
			return "", "the rows lack " + field
		}
		v := strings.Trim(string(raw), `"`) // IEEE754Compatible answers quote Int64
		if _, ok := reconcile.MarkCompare(v, v); !ok {
			return "", fmt.Sprintf("%s %s is neither a number nor a time", field, v)
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return "", ""
	}
	if c, _ := reconcile.MarkCompare(vals[0], vals[len(vals)-1]); c < 0 {
		return "", "the server ignored $orderby"
	}
	return vals[0], ""
}
