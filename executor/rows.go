package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// rowCache remembers the most recent source rows by location, so that a
// row error (which carries a location but no row) can still put the row as
// it was into the journal for the report.
type rowCache struct {
	mu   sync.Mutex
	rows map[source.Location]source.Row
	ring []source.Location
	next int
}

const rowCacheSize = 4096

func newRowCache() *rowCache {
	return &rowCache{rows: map[source.Location]source.Row{}, ring: make([]source.Location, rowCacheSize)}
}

func (c *rowCache) put(r source.Row) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.ring[c.next]; old != (source.Location{}) {
		delete(c.rows, old)
	}
	c.ring[c.next] = r.Loc
	c.next = (c.next + 1) % len(c.ring)
	c.rows[r.Loc] = r
}

func (c *rowCache) get(loc source.Location) *journal.Row {
	c.mu.Lock()
	r, ok := c.rows[loc]
	c.mu.Unlock()
	if !ok {
		return nil
	}
	return rowOf(r)
}

// wrap returns an opener whose readers remember each row they return.
func (c *rowCache) wrap(open transform.Opener) transform.Opener {
	if open == nil {
		return nil
	}
	return func(src *plan.Source) (source.Reader, error) {
		rd, err := open(src)
		if err != nil {
			return nil, err
		}
		return &cachingReader{Reader: rd, c: c}, nil
	}
}

type cachingReader struct {
	source.Reader
	c *rowCache
}

func (r *cachingReader) Next() (source.Row, error) {
	row, err := r.Reader.Next()
	if err == nil {
		r.c.put(row)
	}
	return row, err
}

// rowOf is a source row as the report shows it: header and cells as text.
func rowOf(r source.Row) *journal.Row {
	if r.Header == nil {
		return nil
	}
	out := &journal.Row{Header: append([]string(nil), r.Header.Names...), Cells: make([]string, len(r.Cells))}
	for i, c := range r.Cells {
		out.Cells[i] = cellText(c)
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

// sourceHashes hashes every source file of the plan, for the journal
// header: a resume against changed data is then noticed.
func sourceHashes(p *plan.Plan) map[string]string {
	out := map[string]string{}
	for _, s := range p.Sources {
		path := s.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.Dir, path)
		}
		f, err := os.Open(path)
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
