package executor

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata"
)

// TestMarshalBodyIsOdatas: the fast path writes exactly what
// odata.MarshalBody writes, and hands over what it does not handle.
func TestMarshalBodyIsOdatas(t *testing.T) {
	t.Parallel()
	tests := []map[string]any{
		{},
		{"CUSTNAME": "C1", "CUSTDES": "Acme Ltd", "PHONE": nil},
		{"A": `quote " and back\slash`, "B": "tab\there\nnew line", "C": "<html> & 'x'"},
		{"HEB": "לקוח", "LS": "line\u2028sep", "BAD": "\xff\xfe", "NUL": "\x00\x1f\x7f"},
		{"PRICE": json.Number("12.50"), "N": int64(3), "OK": true},
		{"DATE": time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
		{"ORDERITEMS_SUBFORM": []map[string]any{{"PARTNAME": "P1"}}, "CUSTNAME": "C1"},
		{"BAD": make(chan int)},
	}
	for i, fields := range tests {
		want, werr := odata.MarshalBody(fields)
		got, gerr := marshalBody(fields)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("case %d: error %v, odata's %v", i, gerr, werr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// FuzzMarshalBody: for any text values, the fast path and odata agree.
func FuzzMarshalBody(f *testing.F) {
	f.Add("CUSTNAME", "C1", "CUSTDES", "Acme \"Ltd\"")
	f.Add("A", "\u2028\xff<>&", "B", "")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		fields := map[string]any{k1: v1, k2: v2, "NULL": nil}
		want, werr := odata.MarshalBody(fields)
		got, gerr := marshalBody(fields)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("got %q (%v), odata's %q (%v)", got, gerr, want, werr)
		}
	})
}

// BenchmarkMarshalBody: the dry run's body of ten text fields.
func BenchmarkMarshalBody(b *testing.B) {
	fields := map[string]any{"CUSTNAME": "C0000001", "CUSTDES": "Customer number 1 Ltd", "PHONE": "+972-3-0000001",
		"ADDRESS": "1 Herzl Street", "STATE": "City Number 1", "ZIP": "00001", "AGENTCODE": "AG001"}
	for _, tc := range []struct {
		name string
		fn   func(map[string]any) ([]byte, error)
	}{{"odata", odata.MarshalBody}, {"fast", marshalBody}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := tc.fn(fields); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
