package journal

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// The journal encodes and decodes its lines with
// github.com/segmentio/encoding/json, by the entry types' struct tags;
// the lines of every journal written before were encoding/json's
// (json.Marshal's bytes, which the hand encoder once matched). These
// tests hold the two to the same bytes and the same entries: a field
// whose tag one of them reads otherwise (an option it does not know, as
// it does not know omitzero) changes the lines, and the hash chain of a
// journal resumed across the change would break.

// encodeJSON encodes e as a journal line does, without the checksum and
// newline.
func encodeJSON(e *Entry) ([]byte, error) {
	line, err := appendLine(nil, e)
	if err != nil {
		return nil, err
	}
	return line[9 : len(line)-1], nil
}

// sameAsMarshal checks that the journal writes e as json.Marshal does, and
// reads those bytes back as json.Unmarshal does.
func sameAsMarshal(t *testing.T, what string, e *Entry) {
	t.Helper()
	want, werr := json.Marshal(e)
	got, gerr := encodeJSON(e)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%s: json.Marshal: %v, the journal: %v", what, werr, gerr)
	}
	if werr != nil {
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: the journal wrote\n%s\njson.Marshal\n%s", what, got, want)
	}
	var viaStd, viaJournal Entry
	if err := json.Unmarshal(want, &viaStd); err != nil {
		t.Fatal(err)
	}
	if err := decodeLine(want, &viaJournal); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(viaJournal, viaStd) {
		t.Fatalf("%s: the journal read\n%+v\njson.Unmarshal\n%+v", what, viaJournal, viaStd)
	}
}

// TestCodecKnowsEveryField: every field of an entry, alone and all
// together, in each entry that holds it, is written and read as
// encoding/json writes and reads it.
func TestCodecKnowsEveryField(t *testing.T) {
	t.Parallel()
	each := func(typ reflect.Type, build func(v reflect.Value) *Entry) {
		for i := 0; i < typ.NumField(); i++ {
			if !typ.Field(i).IsExported() {
				continue
			}
			v := reflect.New(typ).Elem()
			fill(v.Field(i), 0)
			sameAsMarshal(t, typ.Name()+"."+typ.Field(i).Name, build(v))
		}
		v := reflect.New(typ).Elem()
		fill(v, 0)
		sameAsMarshal(t, typ.Name()+" filled", build(v))
	}
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	each(reflect.TypeOf(Sub{}), func(v reflect.Value) *Entry {
		return &Entry{Kind: KindIntent, Batch: 1, At: &at, Subs: []Sub{v.Interface().(Sub)}}
	})
	each(reflect.TypeOf(SubResult{}), func(v reflect.Value) *Entry {
		return &Entry{Kind: KindOutcome, Batch: 1, At: &at, Results: []SubResult{v.Interface().(SubResult)}}
	})
	each(reflect.TypeOf(RecordEntry{}), func(v reflect.Value) *Entry {
		r := v.Interface().(RecordEntry)
		return &Entry{Kind: KindRecord, Record: &r}
	})
	each(reflect.TypeOf(Header{}), func(v reflect.Value) *Entry {
		h := v.Interface().(Header)
		return &Entry{Kind: KindHeader, Header: &h}
	})
	each(reflect.TypeOf(Entry{}), func(v reflect.Value) *Entry {
		e := v.Interface().(Entry)
		return &e
	})
}

// fill sets every field of v to a value that is not its zero.
func fill(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(3)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage(nil)) {
			v.SetBytes([]byte(`{"a":1}`))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// encodeSamples are entries of each kind a run writes, with a text and a
// raw value that json.Marshal may escape, compact or refuse.
func encodeSamples(text string, raw json.RawMessage) []Entry {
	at := time.Date(2026, 11, 23, 17, 4, 5, 123456789, time.UTC)
	il := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("IL", 7200))
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	sub := Sub{ID: "1", Step: "orders", Rec: text, Path: "0.1", Op: OpCreate, Meth: "POST", URL: "ORDERS", Hash: "ab12", Key: "'SO1'",
		Nav: "ORDERITEMS_SUBFORM", Line: "3", Before: raw, Match: json.RawMessage(`{"A":"x y","B":1.5}`), RowHash: "rh", Lines: json.RawMessage(`{"L":[{"P":"\"q\""},{}]}`)}
	return []Entry{
		{Kind: KindIntent, Batch: 7, Subs: []Sub{sub, {ID: "2", Step: "s", Rec: "r", Op: OpPatch, Meth: "PATCH", URL: "X('1')", Match: raw}}, At: &at},
		{Kind: KindOutcome, Batch: 7, Results: []SubResult{{ID: "1", Status: 201, Key: "'SO1'", Location: "ORDERS('SO1')", Filled: raw}, {ID: "2", Status: 400, Error: text, By: "user"}},
			InDoubt: text, At: &at, Calls: 2, Throttled: 1, WaitMS: 1500},
		{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: text, Status: Committed, Loc: "orders.csv:2", Key: "'SO1'", Partly: text, Undo: true, RowHash: "h",
			Keyed: []KeyedRow{{Loc: "orders.csv:2", Header: []string{"A", text}, Cells: []string{"1", ""}}, {Loc: "orders.csv:3", Path: "0", Nav: "L", Key: "1"}}, Carried: 5,
			Held: raw, Wrote: raw, WroteKids: EncodeKids([]WroteKid{{Path: "0", Nav: text, Wrote: raw, Hash: text}})}},
		{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "2", Status: Failed, Errors: []Problem{{Message: text, Value: text}}, Row: &Row{Header: []string{text}, Cells: []string{text}}}},
		{Kind: KindDone, Done: text, Gone: []string{text}},
		{Kind: KindOutcome, Batch: 1, At: &il},
		{Kind: KindOutcome, Batch: 1, At: &far},
		{Kind: KindHeader, Header: &Header{Plan: text, Sources: map[string]string{text: "1", "b": text}, Created: far}},
		{Kind: KindHeader, Header: &Header{Plan: text, Sources: map[string]string{text: "1", "b": text}, Created: il}},
		{Kind: KindWatermark, Mark: &Watermark{Step: text, Field: "F", Value: text}},
		{Kind: KindAccept, Accept: &Accepted{PlanHash: text, Sources: map[string]string{"z": "1", "a": text}}},
		{Kind: KindTotals, At: &at, Totals: &Totals{Rows: []TotalRow{{Step: "s", Name: text, Expr: text, Source: "1"}}}},
		{Kind: KindIntent, Subs: []Sub{}},
	}
}

// TestEncodingAsMarshal: every kind of entry, with texts and raw values
// that json.Marshal escapes, compacts, replaces or refuses, is written as
// json.Marshal writes it, and refused when it refuses it.
func TestEncodingAsMarshal(t *testing.T) {
	t.Parallel()
	texts := []string{"", "SO1", "O'Neil & Co", "<b>", `a "q" \ b`, "tab\there", "שלום", "bad \xff utf8", "\u2028\u2029", "del\x7f", "nul\x00"}
	raws := []string{"", `{"A":1}`, `{"A": 1}`, "{\"A\":\n1}", `{"A":"<"}`, `{"A":"x\u003cy"}`, `{"A":"\"}"}`, `{"A":"é"}`, `{"A":`, `null`,
		`[1,{"b":[]}]`, `"str"`, `{"A":"\u2028"}`, "{\"A\":\"\xff\"}", `{"A":1e400}`, ` {"A":1} `}
	for _, s := range texts {
		for _, r := range raws {
			for i, e := range encodeSamples(s, []byte(r)) {
				sameAsMarshal(t, string(e.Kind)+string(rune('0'+i))+" "+s+" "+r, &e)
			}
		}
	}
}

func FuzzEncodeLine(f *testing.F) {
	f.Add("SO1", []byte(`{"A":1}`))
	f.Add("<&>", []byte(`{"A": "\u0041"}`))
	f.Fuzz(func(t *testing.T, text string, raw []byte) {
		if len(raw) > 0 && !json.Valid(raw) {
			// Not JSON: json.Marshal refuses the entry; the journal's codec
			// refuses it too, unless it begins with a value ("000", "1 2"):
			// it writes that value and drops the rest. The journal's raw
			// values are json.Marshal's own output, never such.
			return
		}
		for _, e := range encodeSamples(text, raw) {
			sameAsMarshal(t, "", &e)
		}
	})
}

// FuzzDecodeLine: a line's JSON that encoding/json reads, the journal
// reads to the same entry; one it refuses, the journal refuses too (a
// damaged line is found, not half read).
func FuzzDecodeLine(f *testing.F) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, e := range encodeSamples("SO1 <&> שלום", json.RawMessage(`{"A":[1,"x"]}`)) {
		if js, err := encodeJSON(&e); err == nil {
			f.Add(js)
		}
	}
	for _, e := range []Entry{
		{Kind: KindOutcome, Batch: 4, At: &at, Calls: 2, Throttled: 1, WaitMS: 500, Results: []SubResult{{ID: "r1", Status: 204}}, InDoubt: "timeout"},
		{Kind: KindRecord, Record: &RecordEntry{Step: "s", ID: "1", Status: Committed, Keyed: []KeyedRow{{Loc: "a.csv:2", Key: "3", Header: []string{"A"}, Cells: []string{"x"}}}}},
	} {
		js, _ := encodeJSON(&e)
		f.Add(js)
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		var std, got Entry
		serr := json.Unmarshal(js, &std)
		jerr := decodeLine(js, &got)
		if (serr == nil) != (jerr == nil) {
			t.Fatalf("encoding/json: %v, the journal: %v, for %q", serr, jerr, js)
		}
		if serr == nil && !reflect.DeepEqual(got, std) {
			t.Fatalf("the journal read %+v, encoding/json %+v, for %q", got, std, js)
		}
	})
}
