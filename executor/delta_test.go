package executor

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// deltaOf compares a committed record with its rows now: by the hash of
// its rows first, then field by field (by the field's type: 1.50 is 1.5),
// its key and its lines by what the journal kept of them; a record the
// journal kept nothing of is unknown.
func TestDeltaOf(t *testing.T) {
	typ := &odata.EntityType{Name: "CUSTOMERS", Key: []string{"CUSTNAME"}, Properties: []*odata.Property{
		{Name: "CUSTNAME", Type: "Edm.String"}, {Name: "CUSTDES", Type: "Edm.String"}, {Name: "PRICE", Type: odata.EdmDecimal}}}
	hdr := &source.Header{Names: []string{"Code", "Name", "Price"}}
	record := func(cells []source.Cell, fields map[string]any, kids ...*transform.Child) *transform.Record {
		return &transform.Record{Fields: fields, Children: kids,
			Row: source.Row{Loc: source.Location{File: "c.csv", Line: 2}, Header: hdr, Cells: cells}}
	}
	line := func(qty int) *transform.Child {
		return &transform.Child{Nav: "LINES", Fields: map[string]any{"QTY": qty},
			Row: source.Row{Header: &source.Header{Names: []string{"Qty"}}, Cells: []source.Cell{fmt.Sprint(qty)}}}
	}
	was := record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, line(3))
	loaded := &journal.RecordState{Key: "'C1'", SrcHash: srcHash(was), Wrote: wroteFields(was.Fields), LinesHash: linesHash(was.Children)}
	// Loaded by this version: its line's key (1) and fields kept.
	kept := *loaded
	kept.WroteKids = wroteKids(&work{rec: was, root: &op{kids: []*op{{nav: "LINES", key: "1", status: 201}}}})
	txt := func(s string) *transform.Child {
		return &transform.Child{Nav: "TEXTS", Single: true, Fields: map[string]any{"TEXT": s},
			Row: source.Row{Header: &source.Header{Names: []string{"Text"}}, Cells: []source.Cell{s}}}
	}
	text := txt("hello")
	withText := record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, line(3), text)
	keptText := journal.RecordState{Key: "'C1'", SrcHash: srcHash(withText), Wrote: wroteFields(withText.Fields), LinesHash: linesHash(withText.Children),
		WroteKids: wroteKids(&work{rec: withText, root: &op{kids: []*op{{nav: "LINES", key: "1", status: 201}, {nav: "TEXTS", single: true, status: 201}}}})}
	// Loaded by a version that kept a text's hash only.
	olderText := keptText
	kids, _ := journal.DecodeKids(keptText.WroteKids)
	for i := range kids {
		if kids[i].Single {
			kids[i].Wrote, kids[i].TextHash = nil, ""
		}
	}
	olderText.WroteKids = journal.EncodeKids(kids)
	// A line with its own text (a sub-form of the line).
	lineText := func(qty int, note string) *transform.Child {
		l := line(qty)
		l.Children = []*transform.Child{{Nav: "LINETEXT", Single: true, Fields: map[string]any{"TEXT": note},
			Row: source.Row{Header: &source.Header{Names: []string{"Note"}}, Cells: []source.Cell{note}}}}
		return l
	}
	withLineText := record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, lineText(3, "fragile"))
	keptLineText := journal.RecordState{Key: "'C1'", SrcHash: srcHash(withLineText), Wrote: wroteFields(withLineText.Fields), LinesHash: linesHash(withLineText.Children),
		WroteKids: wroteKids(&work{rec: withLineText, root: &op{kids: []*op{{nav: "LINES", key: "1", status: 201}}}})}
	// Loaded by a version that kept no line's own text apart: the line's
	// hash covers it.
	olderLineText := keptLineText
	lkids, _ := journal.DecodeKids(keptLineText.WroteKids)
	lkids[0].Kids, lkids[0].Hash = nil, childHash(withLineText.Children[0], true)
	olderLineText.WroteKids = journal.EncodeKids(lkids)
	keptLineTextNoKey := keptLineText
	keptLineTextNoKey.WroteKids = wroteKids(&work{rec: withLineText})
	// A line with a long text (not compared field by field).
	lineLong := func(qty int, tail string) *transform.Child {
		l := line(qty)
		l.Fields["NOTE"] = strings.Repeat("x", 201) + tail
		l.Row.Cells = append(l.Row.Cells, tail)
		return l
	}
	withLong := record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, lineLong(3, ""))
	keptLineLong := journal.RecordState{Key: "'C1'", SrcHash: srcHash(withLong), Wrote: wroteFields(withLong.Fields), LinesHash: linesHash(withLong.Children),
		WroteKids: wroteKids(&work{rec: withLong, root: &op{kids: []*op{{nav: "LINES", key: "1", status: 201}}}})}
	tests := []struct {
		name   string
		prev   *journal.RecordState
		now    *transform.Record
		kind   deltaKind
		fields []string
		unsent string
		lines  string
	}{
		{"a line's field, its key kept", &kept,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, line(4)), deltaChanged, nil, "",
			"LINES(1) QTY 3->4"},
		{"a line added", &kept,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, line(3), line(5)), deltaChanged, nil, "",
			"new LINES@1 QTY null->5"},
		{"a line gone", &kept,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}), deltaChanged, nil, "",
			"gone LINES(1)"},
		{"a text", &keptText,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, line(3),
				txt("bye")), deltaChanged, nil, "", `TEXTS TEXT "hello"->"bye"`},
		{"a text's markup, its content the same", &keptText,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, line(3),
				txt("<p>hello</p>")), deltaSame, nil, "", ""},
		{"a text added", &kept,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, line(3),
				txt("new")), deltaChanged, nil, "", `new TEXTS@1 TEXT null->"new"`},
		{"a text gone", &keptText,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, line(3)), deltaChanged, nil, "",
			"gone TEXTS"},
		{"another single object, new", &keptText,
			record([]source.Cell{"C1", "One", "1.50"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, line(3), text,
				&transform.Child{Nav: "SHIPTO", Single: true, Fields: map[string]any{"ADDRESS": "1 Main St"}}), deltaChanged, nil,
			"", `new SHIPTO@2 ADDRESS null->"1 Main St"`},
		{"a text of an older journal", &olderText,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, line(3),
				txt("bye")), deltaChanged, nil,
			"its text TEXTS changed, and the journal keeps nothing of the text it wrote to tell a change made on the server since (loaded by an older version)", ""},
		{"a line's own text", &keptLineText,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, lineText(3, "handle with care")), deltaChanged, nil,
			"", `LINES(1)/LINETEXT TEXT "fragile"->"handle with care"`},
		{"a line's own text and its field", &keptLineText,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, lineText(4, "handle with care")), deltaChanged, nil,
			"", `LINES(1) QTY 3->4; LINES(1)/LINETEXT TEXT "fragile"->"handle with care"`},
		{"a line's field, its own text the same", &keptLineText,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, lineText(4, "fragile")), deltaChanged, nil,
			"", "LINES(1) QTY 3->4"},
		{"a text added to a line", &kept,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, lineText(3, "new")), deltaChanged, nil,
			"", `new LINETEXT@0.1 TEXT null->"new"`},
		{"a line's long text and its field", &keptLineLong,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, lineLong(4, "y")), deltaChanged, nil,
			"line LINES(1): a long text, a file's contents or its own sub-forms changed: a delta does not send them", "LINES(1) QTY 3->4"},
		{"a line's own text, of an older journal", &olderLineText,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, lineText(3, "handle with care")), deltaChanged, nil,
			"line LINES(1): a long text, a file's contents or its own sub-forms changed: a delta does not send them", ""},
		{"a line's own text, the line's key not kept", &keptLineTextNoKey,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, lineText(3, "handle with care")), deltaChanged, nil,
			"line LINES: its own text or sub-form changed, and the journal keeps no key for the line (the server's answer gave none)", ""},
		{"a line's field, its own text the same, of an older journal", &olderLineText,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, lineText(4, "fragile")), deltaChanged, nil,
			"", "LINES(1) QTY 3->4"},
		{"the same rows", loaded, was, deltaSame, nil, "", ""},
		{"a column no field takes", loaded,
			record([]source.Cell{"C1", "One", "1.50"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.50}, line(3)), deltaSame, nil, "", ""},
		{"a field", loaded,
			record([]source.Cell{"C1", "One Ltd", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One Ltd", "PRICE": 1.5}, line(3)), deltaChanged, []string{"CUSTDES"}, "", ""},
		{"a field emptied", loaded,
			record([]source.Cell{"C1", "", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": nil, "PRICE": 1.5}, line(3)), deltaChanged, []string{"CUSTDES"}, "", ""},
		{"a line", loaded,
			record([]source.Cell{"C1", "One", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One", "PRICE": 1.5}, line(4)), deltaChanged, nil,
			"its lines or texts changed: the journal keeps no line of it to patch (loaded by an older version), so a delta sends the entity's fields only", ""},
		{"the key", loaded,
			record([]source.Cell{"C9", "One", "1.5"}, map[string]any{"CUSTNAME": "C9", "CUSTDES": "One", "PRICE": 1.5}, line(3)), deltaChanged, nil,
			"its key (CUSTNAME) changed: a delta does not move a record", ""},
		{"an older journal", &journal.RecordState{Key: "'C1'"},
			record([]source.Cell{"C1", "One Ltd", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One Ltd"}), deltaUnknown, nil, "", ""},
		{"a source hash without what was written", &journal.RecordState{Key: "'C1'", SrcHash: "x"},
			record([]source.Cell{"C1", "One Ltd", "1.5"}, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One Ltd"}), deltaUnknown, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := deltaOf(nil, typ, tt.prev, tt.now)
			var names []string
			for _, f := range ch.fields {
				names = append(names, f.Field)
			}
			lines := showDeltaLines(ch.lines)
			if ch.kind != tt.kind || ch.unsent != tt.unsent || len(names) != len(tt.fields) || len(names) > 0 && names[0] != tt.fields[0] || lines != tt.lines {
				t.Errorf("deltaOf = %v, %v, %q, lines %q; want %v, %v, %q, lines %q", ch.kind, names, ch.unsent, lines, tt.kind, tt.fields, tt.unsent, tt.lines)
			}
		})
	}
}

// kidsDelta pairs the lines of the sources with those loaded by their key
// when the source gives every key field of every line (here KLINE, in
// another order than loaded), else by their place: a line moved is the
// same line by key, and a change of its place alone is none.
func TestKidsDeltaPairsLines(t *testing.T) {
	md := sandbox.DemoMetadata()
	orders := md.EntitySet("ORDERS").Type
	line := func(kline any, part string, qty float64) *transform.Child {
		f := map[string]any{"PARTNAME": part, "TQUANT": qty}
		if kline != nil {
			f["KLINE"] = kline
		}
		return &transform.Child{Nav: "ORDERITEMS_SUBFORM", Fields: f}
	}
	loadedWith := func(kids ...*transform.Child) *journal.RecordState {
		rec := &transform.Record{Fields: map[string]any{"CUSTNAME": "C1"}, Children: kids}
		var ops []*op
		for i := range kids {
			ops = append(ops, &op{nav: "ORDERITEMS_SUBFORM", key: fmt.Sprint(i + 1), status: 201})
		}
		return &journal.RecordState{Key: "'SO1'", LinesHash: linesHash(kids), WroteKids: wroteKids(&work{rec: rec, root: &op{kids: ops}})}
	}
	tests := []struct {
		name string
		prev *journal.RecordState
		now  []*transform.Child
		want string
	}{
		{"by key: moved, one changed, one new", loadedWith(line(1, "B-100", 5), line(2, "N-200", 6)),
			[]*transform.Child{line(2, "N-200", 7), line(1, "B-100", 5), line(3, "W-300", 1)},
			`ORDERITEMS_SUBFORM(2) TQUANT 6->7; new ORDERITEMS_SUBFORM@2 KLINE null->3 PARTNAME null->"W-300" TQUANT null->1`},
		{"by key: one gone", loadedWith(line(1, "B-100", 5), line(2, "N-200", 6)),
			[]*transform.Child{line(2, "N-200", 6)},
			`gone ORDERITEMS_SUBFORM(1)`},
		{"by place: the first is the first", loadedWith(line(nil, "B-100", 5), line(nil, "N-200", 6)),
			[]*transform.Child{line(nil, "N-200", 6), line(nil, "B-100", 5)},
			`ORDERITEMS_SUBFORM(1) PARTNAME "B-100"->"N-200" TQUANT 5->6; ORDERITEMS_SUBFORM(2) PARTNAME "N-200"->"B-100" TQUANT 6->5`},
		{"by place when a line gives no key", loadedWith(line(1, "B-100", 5), line(2, "N-200", 6)),
			[]*transform.Child{line(1, "B-100", 5), line(nil, "N-200", 8)},
			`ORDERITEMS_SUBFORM(2) TQUANT 6->8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &transform.Record{Fields: map[string]any{"CUSTNAME": "C1"}, Children: tt.now}
			lines, unsent := kidsDelta(md, orders, tt.prev, rec)
			if got := showDeltaLines(lines); got != tt.want || len(unsent) > 0 {
				t.Errorf("kidsDelta = %s, %q\nwant %s", got, unsent, tt.want)
			}
		})
	}
}

// showDeltaLines writes the lines of a delta one after another: a line new
// at its path, a line gone, each with its fields' old and new values.
func showDeltaLines(lines []DeltaLine) string {
	var out []string
	for _, l := range lines {
		what := l.Name()
		switch {
		case l.New:
			what = "new " + l.Nav + "@" + l.path
		case l.Gone:
			what = "gone " + what
		}
		for _, f := range l.Fields {
			what += fmt.Sprintf(" %s %s->%s", f.Field, f.Was, f.Now)
		}
		out = append(out, what)
	}
	return strings.Join(out, "; ")
}

// A single-object sub-form other than a text (a customer's ship-to
// address) is compared field by field with what the journal wrote to it:
// a changed field is sent (a PATCH of PARENT/NAV), one new in the sources
// is added; a change of its key, of a long text of it, or of one the
// journal keeps no fields of (loaded by an older version, which kept its
// hash only) is said, not sent; a gone one is listed, never deleted.
func TestSinglesDeltaOfAShipTo(t *testing.T) {
	md := sandbox.DemoMetadata()
	customers := md.EntitySet("CUSTOMERS").Type
	ship := func(fields map[string]any) *transform.Child {
		return &transform.Child{Nav: "SHIPTO2_SUBFORM", Single: true, Fields: fields, Loc: source.Location{File: "c.csv", Line: 2}}
	}
	loadedWith := func(kids ...*transform.Child) *journal.RecordState {
		rec := &transform.Record{Fields: map[string]any{"CUSTNAME": "C1"}, Children: kids}
		return &journal.RecordState{Key: "'C1'", LinesHash: linesHash(kids), WroteKids: wroteKids(&work{rec: rec})}
	}
	loaded := loadedWith(ship(map[string]any{"ADDRESS": "1 Main St", "STATE": "Haifa"}))
	older := *loaded
	kids, _ := journal.DecodeKids(loaded.WroteKids)
	kids[0].Wrote = nil // kept its hash only
	older.WroteKids = journal.EncodeKids(kids)
	long := strings.Repeat("x", 201)
	tests := []struct {
		name          string
		prev          *journal.RecordState
		now           []*transform.Child
		lines, unsent string
		sends         bool
	}{
		{"a field changed", loaded, []*transform.Child{ship(map[string]any{"ADDRESS": "5 Harbour Rd", "STATE": "Haifa"})},
			`SHIPTO2_SUBFORM ADDRESS "1 Main St"->"5 Harbour Rd"`, "", true},
		{"a field emptied", loaded, []*transform.Child{ship(map[string]any{"ADDRESS": "1 Main St", "STATE": nil})},
			`SHIPTO2_SUBFORM STATE "Haifa"->null`, "", true},
		{"the same, a blank as null", loadedWith(ship(map[string]any{"ADDRESS": "1 Main St", "STATE": nil})),
			[]*transform.Child{ship(map[string]any{"ADDRESS": "1 Main St", "STATE": ""})}, "", "", false},
		{"new in the sources", loadedWith(), []*transform.Child{ship(map[string]any{"ADDRESS": "3 Lake Rd"})},
			`new SHIPTO2_SUBFORM@0 ADDRESS null->"3 Lake Rd"`, "", true},
		{"gone from the sources", loaded, nil, "", "its SHIPTO2_SUBFORM is gone from the sources (never deleted)", false},
		{"its key", loaded, []*transform.Child{ship(map[string]any{"ADDRESS": "1 Main St", "STATE": "Haifa", "CUSTNAME": "C9"})},
			"", "the key (CUSTNAME) of its SHIPTO2_SUBFORM changed: a delta does not move a sub-form", false},
		{"a long text of it", loadedWith(ship(map[string]any{"ADDRESS": "1 Main St", "NAME": long})),
			[]*transform.Child{ship(map[string]any{"ADDRESS": "1 Main St", "NAME": long + "y"})},
			"", "its SHIPTO2_SUBFORM: a long text, a file's contents or its own sub-forms changed: a delta does not send them", false},
		{"a field and perhaps a long text", loadedWith(ship(map[string]any{"ADDRESS": "1 Main St", "NAME": long})),
			[]*transform.Child{ship(map[string]any{"ADDRESS": "5 Harbour Rd", "NAME": long + "y"})},
			`SHIPTO2_SUBFORM ADDRESS "1 Main St"->"5 Harbour Rd"`,
			"its SHIPTO2_SUBFORM: its fields are sent; a long text or its own sub-forms of it are not compared with what was loaded, and a delta does not send them", true},
		{"loaded by an older version", &older, []*transform.Child{ship(map[string]any{"ADDRESS": "5 Harbour Rd", "STATE": "Haifa"})},
			"", "its SHIPTO2_SUBFORM changed, and the journal keeps nothing of the fields it wrote to it to tell a change made on the server since (loaded by an older version)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &transform.Record{Fields: map[string]any{"CUSTNAME": "C1"}, Children: tt.now}
			lines, unsent := kidsDelta(md, customers, tt.prev, rec)
			sends := slices.ContainsFunc(lines, DeltaLine.sends)
			if got := showDeltaLines(lines); got != tt.lines || strings.Join(unsent, "; ") != tt.unsent || sends != tt.sends {
				t.Errorf("kidsDelta = %s, %q, sends %v\nwant %s, %q, sends %v", got, unsent, sends, tt.lines, tt.unsent, tt.sends)
			}
			for _, l := range lines {
				if !l.Single || l.Text {
					t.Errorf("%s: Single %v, Text %v; want a single object, no text", l.Name(), l.Single, l.Text)
				}
			}
		})
	}
}

// linesRead finds a single object as the record is read with it expanded:
// its fields; none held (null, [] as some servers answer, absent) names a
// changed one (it is gone from the server) and is nil for a new one. A
// PATCH that writes TEXT is a text's, decided by its content; another
// single object's by its fields.
func TestLinesReadSingleObjects(t *testing.T) {
	md := sandbox.DemoMetadata()
	customers := md.EntitySet("CUSTOMERS").Type
	changed := DeltaLine{Nav: "SHIPTO2_SUBFORM", Single: true, Fields: []DeltaField{{Field: "ADDRESS"}}, path: "0"}
	added := DeltaLine{Nav: "SHIPTO2_SUBFORM", Single: true, New: true, Fields: []DeltaField{{Field: "ADDRESS"}}, path: "1"}
	tests := []struct {
		name, body string
		line       DeltaLine
		want       string // the fields read, as JSON; "gone NAME" for a line named gone
	}{
		{"held", `{"CUSTNAME":"C1","SHIPTO2_SUBFORM":{"ADDRESS":"1 Main St","STATE":null}}`, changed, `{"ADDRESS":"1 Main St","STATE":null}`},
		{"null, changed", `{"CUSTNAME":"C1","SHIPTO2_SUBFORM":null}`, changed, "gone SHIPTO2_SUBFORM"},
		{"an empty list, changed", `{"CUSTNAME":"C1","SHIPTO2_SUBFORM":[]}`, changed, "gone SHIPTO2_SUBFORM"},
		{"absent, new", `{"CUSTNAME":"C1"}`, added, `null`},
		{"held, new", `{"CUSTNAME":"C1","SHIPTO2_SUBFORM":{"ADDRESS":"9 Old Rd"}}`, added, `{"ADDRESS":"9 Old Rd"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, gone := linesRead(md, customers, []byte(tt.body), []DeltaLine{tt.line})
			got := "gone " + gone
			if gone == "" {
				b, _ := json.Marshal(out[tt.line.path])
				got = string(b)
			}
			if got != tt.want {
				t.Errorf("linesRead = %s, want %s", got, tt.want)
			}
		})
	}
}

// kidsSent lays what a delta's PATCHes and POSTs wrote over the journal's
// children: a line patched holds its new fields and keeps the hash of what
// the PATCH did not send (a long text), so the next delta still finds that
// changed; a line's own text replaced or added holds what the source gives
// now, below its line; a single object patched likewise; a line added is
// one more, with its key; what failed is not laid.
func TestKidsSent(t *testing.T) {
	line := func(qty int, note, text string) *transform.Child {
		l := &transform.Child{Nav: "LINES", Fields: map[string]any{"QTY": qty, "NOTE": strings.Repeat("x", 201) + note}}
		if text != "" {
			l.Children = []*transform.Child{{Nav: "LINETEXT", Single: true, Fields: map[string]any{"TEXT": text}}}
		}
		return l
	}
	ship := func(addr string) *transform.Child {
		return &transform.Child{Nav: "SHIPTO", Single: true, Fields: map[string]any{"ADDRESS": addr, "STATE": "Haifa"}}
	}
	was := &transform.Record{Children: []*transform.Child{line(3, "", "fragile"), ship("1 Main St"), line(5, "", "")}}
	kept := wroteKids(&work{rec: was, root: &op{kids: []*op{{nav: "LINES", key: "1", status: 201}, {nav: "SHIPTO", single: true, status: 201}, {nav: "LINES", key: "2", status: 201}}}})
	now, shipNow, added := line(4, "y", "handle with care"), ship("5 Harbour Rd"), &transform.Child{Nav: "LINES", Fields: map[string]any{"QTY": 7}}
	text2 := &transform.Child{Nav: "LINETEXT", Single: true, Fields: map[string]any{"TEXT": "top shelf"}}
	sent := []*op{
		{kind: journal.OpPatch, path: "0", nav: "LINES", key: "1", fields: map[string]any{"QTY": 4}, child: now, status: 200},
		{kind: journal.OpPatch, path: "0.0", nav: "LINETEXT", single: true, child: now.Children[0], status: 200},
		{kind: journal.OpPatch, path: "1", nav: "SHIPTO", single: true, fields: map[string]any{"ADDRESS": "5 Harbour Rd"}, child: shipNow, status: 200},
		{kind: journal.OpCreate, path: "2.1", nav: "LINETEXT", single: true, child: text2, status: 201},
		{kind: journal.OpCreate, path: "3", nav: "LINES", key: "3", fields: added.Fields, child: added, status: 201},
		{kind: journal.OpCreate, path: "4", nav: "LINES", fields: added.Fields, child: added, status: 400},
	}
	kids, err := journal.DecodeKids(kidsSent(kept, sent))
	if err != nil || len(kids) != 4 {
		t.Fatalf("kidsSent = %+v, %v; want 4 children", kids, err)
	}
	before, _ := journal.DecodeKids(kept)
	type kid struct{ path, wrote, key, hash string }
	show := func(k journal.WroteKid) kid { return kid{k.Path, string(k.Wrote), k.Key, k.Hash} }
	want := []kid{
		{"0", `{"QTY":4}`, "1", before[0].Hash},
		{"1", `{"ADDRESS":"5 Harbour Rd","STATE":"Haifa"}`, "", kidHash(shipNow)},
		{"2", `{"QTY":5}`, "2", before[2].Hash},
		{"3", `{"QTY":7}`, "3", ""},
	}
	for i, w := range want {
		if got := show(kids[i]); got != w {
			t.Errorf("child %d = %+v; want %+v", i, got, w)
		}
	}
	if kids[0].Hash == kidHash(now) {
		t.Errorf("the patched line's hash is its long text's now: the next delta would not find it changed")
	}
	texts := []kid{}
	for _, k := range append(kids[0].Kids, kids[2].Kids...) {
		texts = append(texts, kid{k.Path, string(k.Wrote), k.TextHash, ""})
	}
	wantTexts := []kid{{"0.0", `{"TEXT":"handle with care"}`, textHash("handle with care"), ""}, {"2.1", `{"TEXT":"top shelf"}`, textHash("top shelf"), ""}}
	if !slices.Equal(texts, wantTexts) {
		t.Errorf("the lines' own texts = %+v; want %+v", texts, wantTexts)
	}
}
