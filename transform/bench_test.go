package transform

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// genReader serves n generated rows from memory, reusing one cell buffer.
type genReader struct {
	h    *source.Header
	n, i int
	buf  []source.Cell
	text [][]string
}

func (g *genReader) Header() *source.Header { return g.h }
func (g *genReader) Close() error           { return nil }
func (g *genReader) Next() (source.Row, error) {
	if g.i >= g.n {
		return source.Row{}, io.EOF
	}
	r := g.text[g.i%len(g.text)]
	for j := range g.buf {
		g.buf[j] = r[j]
	}
	g.i++
	return source.Row{Loc: source.Location{File: "parts.csv", Line: g.i + 1}, Header: g.h, Cells: g.buf}, nil
}

// BenchmarkRecords maps 100,000 rows of 12 columns to 10 fields, 2 of them
// through lookups. The target is at least 100,000 rows/s.
func BenchmarkRecords(b *testing.B) {
	const rows = 100_000
	cols := []string{"Code", "Name", "Family", "Unit", "Price", "Qty", "Since", "Active", "Agent", "Vendor", "Note", "Extra"}
	var text [][]string
	for i := 0; i < 1000; i++ {
		text = append(text, []string{fmt.Sprintf("P%05d", i), fmt.Sprintf(" Part number %d ", i), "FAM" + fmt.Sprint(i%7), "EA",
			fmt.Sprintf("%d.%02d", i, i%100), fmt.Sprint(i % 50), "2024-01-15", "Y", fmt.Sprintf("A%d", i%20), fmt.Sprintf("V%d", i%30), "", "x"})
	}
	props := []*odata.Property{
		{Name: "PARTNAME", Type: odata.EdmString, MaxLength: 22}, {Name: "PARTDES", Type: odata.EdmString, MaxLength: 48},
		{Name: "FAMILYNAME", Type: odata.EdmString, MaxLength: 8}, {Name: "UNITNAME", Type: odata.EdmString, MaxLength: 3},
		{Name: "PRICE", Type: odata.EdmDecimal}, {Name: "QTY", Type: odata.EdmInt64}, {Name: "SINCE", Type: odata.EdmDateTimeOffset},
		{Name: "ACTIVE", Type: odata.EdmBoolean}, {Name: "AGENT", Type: odata.EdmString, MaxLength: 8}, {Name: "VENDOR", Type: odata.EdmString, MaxLength: 8},
	}
	et := &odata.EntityType{Name: "LOGPART", Key: []string{"PARTNAME"}, Properties: props}
	md := &odata.Metadata{Types: []*odata.EntityType{et}, Sets: []*odata.EntitySet{{Name: "LOGPART", Type: et}}}
	md.Reindex()
	p := &plan.Plan{Dir: b.TempDir(), Target: plan.Target{Timezone: "Asia/Jerusalem"},
		Sources: []*plan.Source{{Name: "parts", File: "parts.csv"}, {Name: "agents", File: "agents.csv"}, {Name: "vendors", File: "vendors.csv"}},
		Lookups: []*plan.Lookup{
			{Name: "agent", Source: "agents", Key: x("row.Old"), Value: x("row.New")},
			{Name: "vendor", Source: "vendors", Key: x("row.Old"), Value: x("row.New")},
		},
		Steps: []*plan.Step{{Name: "parts", Entity: "LOGPART", Source: "parts", When: xp(`row.Code != ""`),
			Fields: fields("PARTNAME", "upper(trim(row.Code))", "PARTDES", "trim(row.Name)", "FAMILYNAME", "row.Family",
				"UNITNAME", "row.Unit", "PRICE", "row.Price", "QTY", "row.Qty", "SINCE", "row.Since", "ACTIVE", "row.Active",
				"AGENT", `lookup("agent", row.Agent)`, "VENDOR", `lookup("vendor", row.Vendor)`)}}}
	prog := mustCompile(b, p, md, testOptions())
	table := func(prefix string, n int) *genReader {
		g := &genReader{h: source.NewHeader([]string{"Old", "New"}), n: n, buf: make([]source.Cell, 2)}
		for i := 0; i < n; i++ {
			g.text = append(g.text, []string{fmt.Sprintf("%s%d", prefix, i), fmt.Sprintf("NEW%s%d", prefix, i)})
		}
		return g
	}
	open := func(src *plan.Source) (source.Reader, error) {
		switch src.Name {
		case "agents":
			return table("A", 20), nil
		case "vendors":
			return table("V", 30), nil
		}
		return &genReader{h: source.NewHeader(cols), n: rows, buf: make([]source.Cell, len(cols)), text: text}, nil
	}
	if err := prog.BuildLookups(context.Background(), open); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var total, good int
	for i := 0; i < b.N; i++ {
		err := prog.Records(context.Background(), "parts", open, nil, func(r Result) error {
			total++
			if r.Record != nil {
				good++
			} else if len(r.Errors) > 0 {
				b.Fatalf("row error: %v", r.Errors[0])
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if good != rows*b.N {
		b.Fatalf("%d records of %d rows", good, total)
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total), "ns/row")
}

// BenchmarkSeenKeys measures the duplicate-key check's memory per key; a
// million keys should stay in tens of megabytes (see seenKeys).
func BenchmarkSeenKeys(b *testing.B) {
	b.ReportAllocs()
	const n = 1_000_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("CUST-%07d", i)
	}
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := newSeenKeys(0)
		for i, k := range keys {
			if _, dup, _ := s.first(k, i+2); dup {
				b.Fatalf("%s reported twice", k)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "live-bytes/key")
		runtime.KeepAlive(s)
	}
}
