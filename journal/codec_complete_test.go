package journal

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// The hand-written encoder and decoder of journal lines name each field
// again: a field added to Entry, Sub, SubResult or RecordEntry (and what
// they hold) that one of them leaves out is lost on disk or on replay
// without a word (a deep insert's nested count, nx, once was). Every
// field, filled by reflection, must come back as json.Marshal and
// json.Unmarshal give it.
func TestCodecsKnowEveryField(t *testing.T) {
	t.Parallel()
	fast := 0
	check := func(what string, e *Entry) {
		t.Helper()
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := appendEntryJSON(nil, e); ok {
			fast++
			if !bytes.Equal(got, want) {
				t.Errorf("%s: appendEntryJSON wrote\n%s\njson.Marshal\n%s", what, got, want)
			}
		}
		var viaJSON, viaFast Entry
		if err := json.Unmarshal(want, &viaJSON); err != nil {
			t.Fatal(err)
		}
		if fastDecode(want, &viaFast) {
			fast++
			a, _ := json.Marshal(&viaJSON)
			b, _ := json.Marshal(&viaFast)
			if !bytes.Equal(a, b) {
				t.Errorf("%s: fastDecode read\n%s\njson.Unmarshal\n%s", what, b, a)
			}
		}
	}
	// Each field alone, in the entries that hold it: a codec that takes
	// the entry and leaves the field out is caught.
	each := func(typ reflect.Type, build func(v reflect.Value) *Entry) {
		for i := 0; i < typ.NumField(); i++ {
			if !typ.Field(i).IsExported() {
				continue
			}
			v := reflect.New(typ).Elem()
			fill(v.Field(i), 0)
			check(typ.Name()+"."+typ.Field(i).Name, build(v))
		}
	}
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	each(reflect.TypeOf(Sub{}), func(v reflect.Value) *Entry {
		s := v.Interface().(Sub)
		return &Entry{Kind: KindIntent, Batch: 1, At: at, Subs: []Sub{s}}
	})
	each(reflect.TypeOf(SubResult{}), func(v reflect.Value) *Entry {
		r := v.Interface().(SubResult)
		return &Entry{Kind: KindOutcome, Batch: 1, At: at, Results: []SubResult{r}}
	})
	each(reflect.TypeOf(RecordEntry{}), func(v reflect.Value) *Entry {
		r := v.Interface().(RecordEntry)
		return &Entry{Kind: KindRecord, Record: &r}
	})
	each(reflect.TypeOf(Entry{}), func(v reflect.Value) *Entry {
		e := v.Interface().(Entry)
		if e.Kind == "" || e.Kind == "x" {
			e.Kind = KindOutcome
		}
		return &e
	})
	if fast < 40 {
		t.Errorf("the hand codecs took only %d of the entries: the test checks too little", fast)
	}
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
		if v.Type() == reflect.TypeOf(time.Duration(0)) {
			v.SetInt(int64(time.Second))
			return
		}
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
