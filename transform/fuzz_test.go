package transform

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// FuzzConvert sends arbitrary text through every Edm conversion with both
// decimal separators, as a text cell and as a number cell: it never panics,
// and every error is a RowError naming the field and the value.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{"12", "12,5", "12.5", "-0.0", "+", ".", ",", "1e9", "2024-02-29", "2024-12-31T23:59:59+02:00",
		"Y", "n", "שלום", "", " ", "\x00", "99999999999999999999", "45657", "\xff\xfe"} {
		f.Add(s)
	}
	types := []odata.EdmType{odata.EdmString, odata.EdmInt64, odata.EdmDecimal, odata.EdmDateTimeOffset, odata.EdmBoolean, "Edm.Guid"}
	var steps []*plan.Step
	var fs []*plan.Field
	for _, typ := range types {
		fs = append(fs, &plan.Field{Name: strings.TrimPrefix(string(typ), "Edm."), Expr: x("row.V")})
	}
	props := make([]*odata.Property, len(types))
	for i, typ := range types {
		props[i] = &odata.Property{Name: fs[i].Name, Type: typ, MaxLength: 10}
	}
	et := &odata.EntityType{Name: "T", Properties: props}
	md := &odata.Metadata{Types: []*odata.EntityType{et}, Sets: []*odata.EntitySet{{Name: "T", Type: et}}}
	md.Reindex()
	progs := map[string]*Program{}
	for _, sep := range []string{".", ","} {
		steps = []*plan.Step{{Name: "s", Entity: "T", Source: "s", Fields: fs}}
		p := &plan.Plan{Dir: f.TempDir(), Target: plan.Target{DecimalSeparator: sep, Timezone: "Asia/Jerusalem"},
			Sources: []*plan.Source{{Name: "s", File: "s.csv"}}, Steps: steps}
		progs[sep] = mustCompile(f, p, md, Options{Now: time.Now})
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, cell := range []source.Cell{s, source.Number(s)} {
			for sep, prog := range progs {
				ms := &memSources{make: map[string]func() *memReader{"s": func() *memReader {
					return newMem("s.csv", []string{"V"}, []source.Cell{cell})
				}}}
				res := collect(t, prog, "s", ms, nil)
				if len(res) != 1 {
					t.Fatalf("%d results", len(res))
				}
				for _, e := range res[0].Errors {
					var re *RowError
					if !errors.As(error(e), &re) || e.Field == "" || e.Value != s || !strings.Contains(e.Message, strings.TrimSuffix(quote(s), "…")[:1]) && !strings.Contains(e.Message, s) {
						t.Fatalf("sep %s, %T %q: error does not name field and value: %+v", sep, cell, s, e)
					}
					if !strings.Contains(e.Error(), e.Field) || e.Cell != "s.csv:2" {
						t.Fatalf("error %q does not say where", e.Error())
					}
				}
				if r := res[0].Record; r != nil {
					for k, v := range r.Fields {
						if _, ok := asText(v); !ok && v != nil {
							t.Fatalf("%s = %#v is no value", k, v)
						}
					}
				}
			}
		}
	})
}

// FuzzDate reads arbitrary text with date() and datetime(), with the
// default layouts and with a given one: never a panic, and an error always
// names the function.
func FuzzDate(f *testing.F) {
	for _, s := range [][2]string{{"31/12/2024", "02/01/2006"}, {"2024-12-31", ""}, {"45657", ""}, {"45657.5", "2006"}, {"1e308", ""},
		{"2024-12-31T10:00:00+02:00", ""}, {"NaN", ""}, {"-1", ""}, {"", "Jan _2"}, {"שלום", "2006-01-02"}} {
		f.Add(s[0], s[1])
	}
	jlm, err := time.LoadLocation("Asia/Jerusalem")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text, layout string) {
		var layouts []string
		if layout != "" {
			layouts = []string{layout}
		}
		for _, fn := range []string{"date", "datetime"} {
			v, err := toTime(fn, text, layouts, jlm, fn == "date")
			if err != nil {
				if !strings.HasPrefix(err.Error(), fn+": ") {
					t.Fatalf("%s(%q, %q): error %q does not name the function", fn, text, layout, err)
				}
				continue
			}
			if v == nil {
				if strings.TrimSpace(text) != "" {
					t.Fatalf("%s(%q, %q) = nil for a non-empty text", fn, text, layout)
				}
				continue
			}
			tm := v.(time.Time)
			if tm.Location() != jlm {
				t.Fatalf("%s(%q, %q) = %v, not in the plan's timezone", fn, text, layout, tm)
			}
		}
	})
}
