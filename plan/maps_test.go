package plan

import (
	"reflect"
	"testing"
)

// A map's keys and values are text as written: numbers keep their text, so
// 2.50 is not 2.5, and every entry keeps its place for messages.
func TestDecodeMaps(t *testing.T) {
	t.Parallel()
	p, ds := Decode("plan.yaml", []byte(`version: 1
sources:
  s: {file: s.csv}
maps:
  units:
    "יח'": EA
    kg: KG
    2.50: HALF
    12: 12
    none: ""
  confirmed: {file: mapping.xlsx}
steps:
  - name: s
    entity: LOGPART
    source: s
    fields:
      PARTNAME: row.A
      UNITNAME: map("units", row.U)
      PARTDES: 'map("units", row.A) + join(map(group, #.A), "") + map("confirmed", row.A)'
`))
	want := []string{`plan.yaml:19:48: field "PARTDES" of step "s" reads "group", which exists only on a step with group_by`}
	assertDiags(t, ds, want)
	at := func(line, col int) Pos { return Pos{File: "plan.yaml", Line: line, Col: col} }
	wantMaps := []*ValueMap{{Name: "units", Pos: at(5, 3), Entries: []MapEntry{
		{Source: "יח'", Target: "EA", Pos: at(6, 5)},
		{Source: "kg", Target: "KG", Pos: at(7, 5)},
		{Source: "2.50", Target: "HALF", Pos: at(8, 5)},
		{Source: "12", Target: "12", Pos: at(9, 5)},
		{Source: "none", Target: "", Pos: at(10, 5)},
	}}, {Name: "confirmed", Pos: at(11, 3), File: "mapping.xlsx", FilePos: at(11, 21)}}
	if !reflect.DeepEqual(p.Maps, wantMaps) {
		t.Errorf("maps = %+v %+v\nwant %+v %+v", *p.Maps[0], *p.Maps[1], *wantMaps[0], *wantMaps[1])
	}
	if p.Map("units") != p.Maps[0] || p.Map("unit") != nil {
		t.Errorf("Map finds by exact name")
	}
}
