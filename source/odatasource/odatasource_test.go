package odatasource_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/odatasource"
)

// company is a sandbox holding families F00..F(n-1), each with n%3
// malfunction lines, behind handler wrap (nil: as it is).
func company(t *testing.T, n, rowCap int, wrap func(http.Handler) http.Handler) *odata.Client {
	t.Helper()
	env := fixture.NewBehind(t, sandbox.Options{RowCap: rowCap}, func(sb *sandbox.Server) http.Handler {
		if wrap != nil {
			return wrap(sb)
		}
		return sb
	})
	cl := fixture.ODataClient(t, env.Srv, odata.Config{})
	ctx := context.Background()
	for i := range n {
		var lines []string
		for j := range i % 3 {
			lines = append(lines, fmt.Sprintf(`{"MALFCODE":"M%d","MALFDES":"fault %d of %d"}`, j, j, i))
		}
		body := fmt.Sprintf(`{"FAMILYNAME":"F%02d","FAMILYDESC":"Family %d","DEBITFLAG":%q,"FAMILYMALF_SUBFORM":[%s]}`,
			i, i, []string{"Y", "N"}[i%2], strings.Join(lines, ","))
		if err := cl.Post(ctx, "FAMILY_LOG", []byte(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	return cl
}

func readAll(t *testing.T, r source.Reader) ([]source.Row, error) {
	t.Helper()
	var rows []source.Row
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
}

func TestPagesUnderTheCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		n, cap, page   int
		filter         string
		want           int
		firstLoc, last string
	}{
		{name: "one page", n: 5, cap: 2000, want: 5, firstLoc: "template:FAMILY_LOG('F00')", last: "template:FAMILY_LOG('F04')"},
		{name: "pages of the cap", n: 7, cap: 3, page: 3, want: 7, firstLoc: "template:FAMILY_LOG('F00')", last: "template:FAMILY_LOG('F06')"},
		{name: "exact multiple of the cap", n: 6, cap: 3, page: 3, want: 6, firstLoc: "template:FAMILY_LOG('F00')", last: "template:FAMILY_LOG('F05')"},
		{name: "filtered", n: 7, cap: 2, page: 2, filter: "DEBITFLAG eq 'N'", want: 3, firstLoc: "template:FAMILY_LOG('F01')", last: "template:FAMILY_LOG('F05')"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl := company(t, tc.n, tc.cap, nil)
			r, err := odatasource.Open(context.Background(), odatasource.Options{
				Client: cl, Metadata: sandbox.DemoMetadata(), Connection: "template", Entity: "FAMILY_LOG",
				Select: []string{"FAMILYNAME", "FAMILYDESC"}, Expand: []string{"FAMILYMALF_SUBFORM"},
				Filter: tc.filter, PageSize: tc.page,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := strings.Join(r.Header().Names, ","); got != "FAMILYNAME,FAMILYDESC,FAMILYMALF_SUBFORM" {
				t.Errorf("header %s", got)
			}
			rows, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != tc.want {
				t.Fatalf("%d rows, want %d", len(rows), tc.want)
			}
			if rows[0].Loc.String() != tc.firstLoc || rows[len(rows)-1].Loc.String() != tc.last {
				t.Errorf("rows from %s to %s", rows[0].Loc, rows[len(rows)-1].Loc)
			}
			seen := map[string]bool{}
			for _, row := range rows {
				name := row.Get("FAMILYNAME").(string)
				if seen[name] {
					t.Errorf("%s read twice", name)
				}
				seen[name] = true
				var i int
				fmt.Sscanf(name, "F%d", &i)
				lines, ok := row.Get("FAMILYMALF_SUBFORM").([]any)
				if !ok || len(lines) != i%3 {
					t.Fatalf("%s: sub-form %#v, want %d lines", name, row.Get("FAMILYMALF_SUBFORM"), i%3)
				}
				for j, l := range lines {
					m := l.(map[string]any)
					if m["MALFDES"] != fmt.Sprintf("fault %d of %d", j, i) {
						t.Errorf("%s line %d: %v", name, j, m)
					}
					if _, ok := m["KLINE"].(source.Number); !ok {
						t.Errorf("%s line %d: KLINE is %T, want a Number", name, j, m["KLINE"])
					}
				}
			}
		})
	}
}

// A server that cannot apply a filter ignores it (docs/servers.md, Reading):
// the first row outside it stops the reading, named, instead of a copy of
// rows nobody chose.
func TestFilterIgnoredIsFound(t *testing.T) {
	t.Parallel()
	cl := company(t, 4, 2000, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			q.Del("$filter")
			r.URL.RawQuery = q.Encode()
			h.ServeHTTP(w, r)
		})
	})
	_, err := odatasource.Open(context.Background(), odatasource.Options{
		Client: cl, Metadata: sandbox.DemoMetadata(), Connection: "template", Entity: "FAMILY_LOG",
		Select: []string{"FAMILYNAME"}, Filter: "DEBITFLAG eq 'N'",
	})
	var se *source.Error
	var re *read.Error
	if !errors.As(err, &se) || !errors.As(err, &re) {
		t.Fatalf("err %v, want a source.Error of a read.Error", err)
	}
	want := `template:FAMILY_LOG: the server did not apply the filter "DEBITFLAG eq 'N'": it answered FAMILY_LOG('F00') with DEBITFLAG "Y"`
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error\n%s\nwant it to start\n%s", err, want)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	md := sandbox.DemoMetadata()
	for _, tc := range []struct {
		entity, filter string
		sel, expand    []string
		want           string
	}{
		{entity: "FAMILY_LOG", sel: []string{"FAMILYNAME"}, expand: []string{"FAMILYMALF_SUBFORM"}, filter: "DEBITFLAG eq 'Y'"},
		{entity: "FAMILY_LOGS", want: `entity: unknown entity "FAMILY_LOGS"; did you mean "FAMILY_LOG"?`},
		{entity: "FAMILY_LOG", sel: []string{"FAMILYDES"}, want: `select: unknown field "FAMILYDES" in FAMILY_LOG; did you mean "FAMILYDESC"?`},
		{entity: "FAMILY_LOG", expand: []string{"FAMILYMALF"}, want: `expand: FAMILY_LOG has no sub-form "FAMILYMALF"; did you mean "FAMILYMALF_SUBFORM"?`},
		{entity: "FAMILY_LOG", filter: "NOPE eq 1", want: `filter: $filter: NOPE is not a field of FAMILY_LOG`},
	} {
		var msgs []string
		for _, p := range odatasource.Check(md, tc.entity, tc.sel, tc.expand, tc.filter) {
			msgs = append(msgs, p.Key+": "+p.Message)
		}
		got := strings.Join(msgs, "; ")
		if got != tc.want {
			t.Errorf("%s %v %v %q:\n got %s\nwant %s", tc.entity, tc.sel, tc.expand, tc.filter, got, tc.want)
		}
	}
}

// A company whose forms are cold (docs/servers.md, Reading: 404 on the first
// GET of a form not used since the server started) is read all the same, and
// through the real installations' metadata.
func TestColdFormsAndRealMetadata(t *testing.T) {
	t.Parallel()
	q, err := sandbox.ParseQuirks("cold-forms,real-metadata")
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Options{Quirks: q})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); sb.Close() })
	cl, err := odata.NewClient(odata.Config{BaseURL: srv.URL + sandbox.BasePath, Auth: odata.BasicAuth{User: "demo", Password: "demo"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	md, _, err := cl.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// CURRENCIES is seeded and nothing has read it: a cold form.
	r, err := odatasource.Open(ctx, odatasource.Options{Client: cl, Metadata: md, Connection: "prod", Entity: "CURRENCIES"})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readAll(t, r)
	if err != nil || len(rows) != 3 || rows[0].Loc.String() != "prod:CURRENCIES('EUR')" {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
}
