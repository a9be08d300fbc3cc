package read_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/sandbox"
)

// sandboxCompany is a sandbox whose answers hold at most rowCap rows,
// holding families F00..F(n-1), and a client of it.
func sandboxCompany(t *testing.T, n, rowCap int) *odata.Client {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{RowCap: rowCap})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); sb.Close() })
	cl := client(t, srv.URL+sandbox.BasePath)
	for i := range n {
		post(t, cl, fmt.Sprintf("F%02d", i))
	}
	return cl
}

func client(t *testing.T, base string) *odata.Client {
	t.Helper()
	cl, err := odata.NewClient(odata.Config{BaseURL: base, Auth: odata.BasicAuth{User: "demo", Password: "demo"}, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func post(t *testing.T, cl *odata.Client, name string) {
	t.Helper()
	body := fmt.Sprintf(`{"FAMILYNAME":%q,"FAMILYDESC":"Family %s"}`, name, name)
	if err := cl.Post(context.Background(), "FAMILY_LOG", []byte(body), nil); err != nil {
		t.Fatal(err)
	}
}

func families() *odata.EntityType { return sandbox.DemoMetadata().EntitySet("FAMILY_LOG").Type }

// names reads every page of FAMILY_LOG; between pages, it calls between
// with the number of the page just read.
func names(t *testing.T, cl *odata.Client, q read.Query, between func(page int)) ([]string, int, error) {
	t.Helper()
	q.Set, q.Type = "FAMILY_LOG", families()
	p, err := read.Pages(cl, q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for page := 1; ; page++ {
		rows, err := p.Next(context.Background())
		if err != nil || rows == nil {
			return out, page - 1, err
		}
		for _, r := range rows {
			out = append(out, r["FAMILYNAME"].(string))
		}
		if between != nil {
			between(page)
		}
		if page > 100 {
			t.Fatal("more than 100 pages: the read loops")
		}
	}
}

func want(n int) string {
	var s []string
	for i := range n {
		s = append(s, fmt.Sprintf("F%02d", i))
	}
	return strings.Join(s, ",")
}

// A server that caps its answers below $top (MAXAPILINES lowered) answers
// short pages: none of them is the end.
func TestShortPageIsNotTheEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		n, cap, size int
		filter       string
		want         string
		pagesAtLeast int
		pagesAtMost  int
	}{
		{name: "cap below $top", n: 12, cap: 5, want: want(12), pagesAtLeast: 3, pagesAtMost: 3},
		{name: "cap a divisor of the rows", n: 10, cap: 5, want: want(10), pagesAtLeast: 2, pagesAtMost: 2},
		{name: "page smaller than the cap", n: 7, cap: 2000, size: 3, want: want(7), pagesAtLeast: 3, pagesAtMost: 3},
		{name: "filtered under a cap", n: 12, cap: 2, filter: "FAMILYNAME ge 'F03' and FAMILYNAME le 'F08'", want: "F03,F04,F05,F06,F07,F08", pagesAtLeast: 3, pagesAtMost: 3},
		{name: "empty", n: 0, cap: 5, want: "", pagesAtMost: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl := sandboxCompany(t, tc.n, tc.cap)
			got, pages, err := names(t, cl, read.Query{Filter: tc.filter, PageSize: tc.size}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("read %s\nwant %s", strings.Join(got, ","), tc.want)
			}
			if pages < tc.pagesAtLeast || pages > tc.pagesAtMost {
				t.Errorf("%d pages, want %d to %d", pages, tc.pagesAtLeast, tc.pagesAtMost)
			}
		})
	}
}

// Rows deleted or added while a set is read move no other row: every row
// that stayed is read once, whatever changed before or after it.
func TestPagingUnderAChangingSource(t *testing.T) {
	t.Parallel()
	cl := sandboxCompany(t, 12, 4)
	ctx := context.Background()
	got, _, err := names(t, cl, read.Query{}, func(page int) {
		if page != 1 {
			return
		}
		// After F00..F03: one row read is deleted, one row not yet read
		// is deleted, and rows are added before and after the point
		// reached.
		for _, k := range []string{"F01", "F06"} {
			if err := cl.Delete(ctx, "FAMILY_LOG('"+k+"')"); err != nil {
				t.Fatal(err)
			}
		}
		post(t, cl, "F02A")
		post(t, cl, "F05A")
	})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := strings.Join(got, ","), "F00,F01,F02,F03,F04,F05,F05A,F07,F08,F09,F10,F11"; g != w {
		t.Errorf("read %s\nwant %s (each row once; F02A was added behind the read, F06 deleted ahead of it)", g, w)
	}
}

// hostile is a server that answers a collection read with rows it chooses:
// page(q) gives the rows and the next link for the request's query.
func hostile(t *testing.T, page func(q map[string]string) ([]map[string]any, string)) (*odata.Client, *int) {
	t.Helper()
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls > 50 {
			http.Error(w, "too many calls", http.StatusTeapot)
			return
		}
		q := map[string]string{}
		for k, v := range r.URL.Query() {
			q[k] = v[0]
		}
		rows, next := page(q)
		out := map[string]any{"value": rows}
		if next != "" {
			out["@odata.nextLink"] = next
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return client(t, srv.URL+sandbox.BasePath), &calls
}

func rowsFrom(from, to int) []map[string]any {
	var out []map[string]any
	for i := from; i < to; i++ {
		out = append(out, map[string]any{"FAMILYNAME": fmt.Sprintf("F%02d", i), "FAMILYDESC": "x", "DEBITFLAG": "Y"})
	}
	return out
}

// A server that ignores $skip, $filter or its own next link answers the
// same rows again: the read stops at once with a *read.Error, and uses no
// row of the repeated page.
func TestRepeatedPagesStop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		filter string
		page   func(q map[string]string) ([]map[string]any, string)
		want   string
	}{
		{name: "filter and skip ignored", page: func(map[string]string) ([]map[string]any, string) { return rowsFrom(0, 3), "" },
			want: "the server answered the row FAMILY_LOG('F00') again"},
		{name: "a page repeats a row of the page before", page: func(q map[string]string) ([]map[string]any, string) {
			if q["$filter"] == "" {
				return rowsFrom(0, 3), ""
			}
			return rowsFrom(2, 5), ""
		}, want: "the server answered the row FAMILY_LOG('F02') again"},
		{name: "a row twice in a page", page: func(map[string]string) ([]map[string]any, string) {
			return append(rowsFrom(0, 2), rowsFrom(1, 2)...), ""
		}, want: "the server answered the row FAMILY_LOG('F01') again"},
		{name: "next link loops", page: func(q map[string]string) ([]map[string]any, string) {
			n, _ := strconv.Atoi(q["$skiptoken"])
			return rowsFrom(n, n+2), "FAMILY_LOG?$skiptoken=2"
		}, want: `the server gave the next link "FAMILY_LOG?$skiptoken=2" a second time`},
		{name: "next link elsewhere", page: func(map[string]string) ([]map[string]any, string) {
			return rowsFrom(0, 2), "http://elsewhere.invalid/odata/FAMILY_LOG?$skiptoken=2"
		}, want: "leads outside the service root"},
		{name: "filter ignored", filter: "DEBITFLAG eq 'N'", page: func(map[string]string) ([]map[string]any, string) { return rowsFrom(0, 3), "" },
			want: `the server did not apply the filter "DEBITFLAG eq 'N'": it answered FAMILY_LOG('F00') with DEBITFLAG "Y"`},
		{name: "key hidden", page: func(map[string]string) ([]map[string]any, string) {
			return []map[string]any{{"FAMILYDESC": "x"}}, ""
		}, want: "came without its key field FAMILYNAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl, calls := hostile(t, tc.page)
			got, _, err := names(t, cl, read.Query{Filter: tc.filter}, nil)
			var re *read.Error
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v\nwant a read.Error with %q", err, tc.want)
			}
			if *calls > 3 {
				t.Errorf("%d calls before stopping", *calls)
			}
			seen := map[string]bool{}
			for _, n := range got {
				if seen[n] {
					t.Errorf("%s given twice", n)
				}
				seen[n] = true
			}
		})
	}
}

// A standard OData service pages by @odata.nextLink, at its own size
// whatever $top asked: the read follows the links, and ends with the
// first page that has none.
func TestNextLinks(t *testing.T) {
	t.Parallel()
	var asked []string
	cl, calls := hostile(t, func(q map[string]string) ([]map[string]any, string) {
		asked = append(asked, q["$skiptoken"]+"|"+q["$top"])
		n, _ := strconv.Atoi(q["$skiptoken"])
		if n+4 >= 10 {
			return rowsFrom(n, 10), ""
		}
		return rowsFrom(n, n+4), "FAMILY_LOG?$skiptoken=" + strconv.Itoa(n+4)
	})
	got, _, err := names(t, cl, read.Query{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != want(10) || *calls != 3 {
		t.Errorf("read %v in %d calls", got, *calls)
	}
	if g := strings.Join(asked, " "); g != "|2000 4| 8|" {
		t.Errorf("asked %s", g)
	}
}

// After is the condition of the rows past a key, for one key field and
// for several.
func TestAfter(t *testing.T) {
	t.Parallel()
	one := &odata.EntityType{Name: "T", Key: []string{"K"}, Properties: []*odata.Property{{Name: "K", Type: odata.EdmString}}}
	two := &odata.EntityType{Name: "T", Key: []string{"A", "B"}, Properties: []*odata.Property{{Name: "A", Type: odata.EdmString}, {Name: "B", Type: odata.EdmInt64}}}
	for _, tc := range []struct {
		t    *odata.EntityType
		row  map[string]any
		want string
	}{
		{one, map[string]any{"K": "O'Neil"}, "K gt 'O''Neil'"},
		{two, map[string]any{"A": "SO1", "B": json.Number("2")}, "(A gt 'SO1') or ((A eq 'SO1') and (B gt 2))"},
		{two, map[string]any{"A": "SO1", "B": "12"}, "(A gt 'SO1') or ((A eq 'SO1') and (B gt 12))"},
	} {
		got, err := read.After(tc.t, tc.row)
		if err != nil || got != tc.want {
			t.Errorf("After(%v) = %q, %v; want %q", tc.row, got, err, tc.want)
		}
		if _, err := odata.ParseFilter(tc.t, got); err != nil {
			t.Errorf("%q does not parse: %v", got, err)
		}
	}
}

// A page's answer stays near PageBytes: rows of 100 KB are read a few at
// a time, whatever the page size, and the first page of rows the
// metadata cannot bound asks for a few rows only.
func TestPagesWithinTheirBytes(t *testing.T) {
	t.Parallel()
	typ := families()
	big := strings.Repeat("x", 100_000)
	var tops []string
	cl, _ := hostile(t, func(q map[string]string) ([]map[string]any, string) {
		tops = append(tops, q["$top"])
		top, _ := strconv.Atoi(q["$top"])
		f, _ := odata.ParseFilter(typ, q["$filter"])
		var out []map[string]any
		for i := 0; i < 100 && len(out) < top; i++ {
			row := map[string]any{"FAMILYNAME": fmt.Sprintf("F%02d", i), "FAMILYDESC": big}
			if f == nil || f.Match(row) {
				out = append(out, row)
			}
		}
		return out, ""
	})
	got, _, err := names(t, cl, read.Query{Expand: []string{"FAMILYMALF_SUBFORM"}, PageBytes: 1 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != want(100) {
		t.Errorf("read %v", got)
	}
	// A sub-form has no bound: the first page asks for 50 rows; they come
	// at 100 KB each, and the next pages ask for 1 MB of them, 10 rows.
	if len(tops) != 7 || tops[0] != "50" || tops[1] != "10" || tops[5] != "10" {
		t.Errorf("$top asked: %v", tops)
	}
	// Bounded by the metadata (MaxLength of every field read), rows of a
	// few bytes fill whole pages.
	tops = nil
	if _, _, err := names(t, cl, read.Query{Select: []string{"FAMILYNAME"}, PageBytes: 1 << 20}, nil); err != nil || tops[0] != "2000" {
		t.Errorf("a bounded read asked %v, %v", tops, err)
	}
}
