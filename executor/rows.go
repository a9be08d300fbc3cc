package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// setRows puts a failed record's source rows into its journal entry, as
// they were, for the report: one row as Row, a group's rows as Rows (the
// record carries them: nothing is looked up again, so a long run never
// outruns them).
func setRows(re *journal.RecordEntry, rows []source.Row) {
	switch len(rows) {
	case 0:
	case 1:
		re.Row = rowOf(rows[0])
	default:
		re.Row = nil
		re.Rows = make([]journal.Row, 0, len(rows))
		for _, r := range rows {
			if jr := rowOf(r); jr != nil {
				re.Rows = append(re.Rows, *jr)
			}
		}
	}
}

// rowOf is a source row as the report shows it: header and cells as text.
func rowOf(r source.Row) *journal.Row {
	if r.Header == nil {
		return nil
	}
	return &journal.Row{Header: append([]string(nil), r.Header.Names...), Cells: cellTexts(r.Cells), Loc: r.Loc.String()}
}

func cellTexts(cells []source.Cell) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = cellText(c)
	}
	return out
}

func cellText(c source.Cell) string {
	switch x := c.(type) {
	case nil:
		return ""
	case string:
		return x
	case source.Number:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02")
		}
		return x.Format("2006-01-02 15:04:05")
	case []any, map[string]any:
		// An expanded sub-form of an OData source: its lines as JSON, which
		// a report's reader can tell apart.
		if b, err := json.Marshal(x); err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(c)
}

// childRow finds the source row of the child at path ("0.2").
func childRow(rec *transform.Record, path string) *journal.Row {
	c := childOf(rec, path)
	if c == nil {
		return nil
	}
	return rowOf(c.Row)
}

// childOf finds the child at path ("0.2"), or nil.
func childOf(rec *transform.Record, path string) *transform.Child {
	kids := rec.Children
	var c *transform.Child
	for _, part := range strings.Split(path, ".") {
		i, err := strconv.Atoi(part)
		if err != nil || i < 0 || i >= len(kids) {
			return nil
		}
		c = kids[i]
		kids = c.Children
	}
	return c
}

// SourceHashes are the SHA-256 of the plan's source files, as a journal's
// header records them (file as the plan names it → hex).
func SourceHashes(p *plan.Plan) map[string]string { return sourceHashes(p) }

// sourceHashes hashes every source file of the plan, for the journal
// header: a resume against changed data is then noticed.
func sourceHashes(p *plan.Plan) map[string]string {
	out := map[string]string{}
	for _, s := range p.Sources {
		if s.File == "" {
			continue // reads a connection: no file to hash
		}
		f, err := os.Open(p.File(s.File))
		if err != nil {
			continue
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err == nil {
			out[s.File] = hex.EncodeToString(h.Sum(nil))
		}
	}
	return out
}

func sortStrings(s []string) { sort.Strings(s) }

// String is a record's error as a person reads it, as every diagnostic
// reads: orders.xlsx!Lines!D17 (plan.yaml:31:9 PRICE): message.
func (e RecordError) String() string { return e.Diagnostic().String() }

// RejectedID is the identity a record the plan's row errors reject is
// journaled under: its id when it could be worked out, else its location.
func RejectedID(res transform.Result) string {
	switch {
	case res.Record != nil && res.Record.ID != "":
		return res.Record.ID
	case res.ID != "":
		return res.ID
	}
	return res.Loc.String()
}
