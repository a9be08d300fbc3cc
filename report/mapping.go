package report

import (
	"strconv"

	"github.com/migrate-tool/migrate/executor"
)

// The mapping file migrate mapping writes: the values of a plan's file
// maps (executor.MapValues), each with its proposed target, for a person
// to confirm; transform reads it back as the map's file.

// WriteMapping writes rows to out, a .xlsx (one sheet) or a .csv, through
// a temporary file, mode 0600: it holds the customer's values.
func WriteMapping(out string, rows []executor.MappingRow) error {
	t := &table{name: "mapping", header: executor.MappingColumns}
	for _, r := range rows {
		confirmed, count := "", ""
		if r.Confirmed {
			confirmed = "yes"
		}
		if r.Count > 0 {
			count = strconv.Itoa(r.Count)
		}
		t.rows = append(t.rows, []string{r.Map, r.Source, count, r.Cells, r.Target, confirmed, r.Said()})
	}
	return writeTables(out, []*table{t}, nil)
}
