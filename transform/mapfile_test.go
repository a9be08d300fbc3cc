package transform

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

func TestConfirmed(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"yes": true, "YES": true, " y ": true, "true": true, "x": true, "X": true, "1": true,
		"": false, "no": false, "0": false, "false": false, "maybe": false, "yes!": false, "new": false,
	} {
		if got := Confirmed(s); got != want {
			t.Errorf("Confirmed(%q) = %v, want %v", s, got, want)
		}
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadMapFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeFile(t, dir, "m.csv", "confirmed,target,source,map,note\nyes,EA,יח',units,\n,KG,kgs,units,\n\n,,, ,\nx,KG,12,other,\n")
	rows, err := ReadMapFile(path, "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	at := func(line int) source.Location { return source.Location{File: "m.csv", Line: line} }
	want := []MapRow{
		{Map: "units", Source: "יח'", Target: "EA", Confirmed: true, Loc: at(2)},
		{Map: "units", Source: "kgs", Target: "KG", Loc: at(3)},
		{Map: "other", Source: "12", Target: "KG", Confirmed: true, Loc: at(6)},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows = %+v\nwant %+v", rows, want)
	}

	bad := writeFile(t, dir, "bad.csv", "map,source,target\nunits,kg,KG\n")
	if _, err := ReadMapFile(bad, "bad.csv"); err == nil || !strings.Contains(err.Error(), "bad.csv is no mapping file: it has no column confirmed") {
		t.Errorf("a file without confirmed: %v", err)
	}
}

// A file map gives only what its file confirms; the rest is each row's
// error, saying what is wrong with the value's row of the file.
func TestFileMaps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "mapping.csv", "map,source,count,cells,target,confirmed\n"+
		"units,kg,1,,KG,yes\nunits,kgs,2,,KG,\nunits,box,,,,x\nunits,kg,1,,KG,yes\nother,ea,,,EA,yes\n")
	p := &plan.Plan{Dir: dir, Maps: []*plan.ValueMap{{Name: "units", File: "mapping.csv", FilePos: plan.Pos{File: "plan.yaml", Line: 5, Col: 17}}},
		Sources: []*plan.Source{{Name: "p", File: "p.csv"}},
		Steps:   []*plan.Step{{Name: "p", Entity: "ANY", Source: "p", Fields: fields("CODE", "row.Code", "U", `map("units", row.Unit)`)}}}
	prog := mustCompile(t, p, nil, testOptions())
	ds := prog.LoadMapFiles()
	if got := ds.Error(); got != `plan.yaml:5:17: map "units": mapping.csv gives the value "kg" twice, at mapping.csv:2 and mapping.csv:5; keep one row` {
		t.Errorf("diagnostics: %s", got)
	}
	ms := &memSources{make: map[string]func() *memReader{"p": func() *memReader {
		return newMem("p.csv", []string{"Code", "Unit"}, cells("P1", "kg"), cells("P2", "kgs"), cells("P3", "box"), cells("P4", "ea"), cells("P5", ""))
	}}}
	res := collect(t, prog, "p", ms, nil)
	if r := res[0].Record; r == nil || r.Fields["U"] != "KG" {
		t.Errorf("kg: %+v", res[0])
	}
	for i, want := range []string{
		`map "units": "kgs" → "KG" is not confirmed in mapping.csv (mapping.csv:3)`,
		`map "units": "box" has no target in mapping.csv (mapping.csv:4)`,
		`map "units": "ea" is not in mapping.csv; run migrate mapping to add it`,
	} {
		if e := res[i+1].Errors; len(e) != 1 || e[0].Message != want || e[0].Column != "Unit" {
			t.Errorf("row %d: %+v, want %q", i+2, e, want)
		}
		if got := prog.MapRefusal("units", []string{"kgs", "box", "ea"}[i]); got != want {
			t.Errorf("MapRefusal = %q, want %q", got, want)
		}
	}
	if r := res[4].Record; r == nil || r.Fields["U"] != nil {
		t.Errorf("an empty cell stays empty: %+v", res[4])
	}
	if prog.MapRefusal("units", "kg") != "" || prog.MapRefusal("units", "") != "" {
		t.Errorf("a confirmed value and an empty one are given")
	}
}

func FuzzReadMapFile(f *testing.F) {
	f.Add("map,source,count,cells,target,confirmed\nunits,kg,1,a.csv:2,KG,yes\n")
	f.Add("confirmed,map,source,target\nx,u,\"a,b\",C\n")
	f.Add("map,source\n")
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(t.TempDir(), "m.csv")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		rows, err := ReadMapFile(path, "m.csv")
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.Map == "" && r.Source == "" && r.Target == "" {
				t.Errorf("a blank row was kept: %+v", r)
			}
		}
	})
}
