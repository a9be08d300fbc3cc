package executor

import (
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// ExpectedRecords counts, for the progress bars' ETA, the records of each
// step that can be known cheaply before the load (source.CountRows: a CSV's
// lines, a worksheet's dimension) for a file step without group_by, where
// a row is a record. Grouped steps and companies read as sources get no
// total: counting them costs a read of their own. A count a little high
// only makes the ETA a little pessimistic.
func ExpectedRecords(p *plan.Plan) map[string]int {
	totals := map[string]int{}
	for _, st := range p.Steps {
		src := p.Source(st.Source)
		if st.GroupBy != nil || src == nil || src.File == "" {
			continue
		}
		if n, ok := source.CountRows(source.Options{Path: p.File(src.File), Sheet: src.Sheet, HeaderRow: src.HeaderRow}); ok && n > 0 {
			totals[st.Name] = n
		}
	}
	return totals
}
