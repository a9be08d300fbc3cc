package journal

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"
)

// TestHeadKeepsARecord: a record with every field set comes back from the
// index's head (toHead, its JSON, restore) with every field but those the
// head leaves out on purpose, so a field added to RecordState and
// forgotten in headRec, toHead or restore fails here rather than vanish
// from a resumed run.
func TestHeadKeepsARecord(t *testing.T) {
	t.Parallel()
	notInHead := map[string]string{
		"Keyed":      "only LoadReport keeps it, never from the index",
		"Held":       "only verify reads it, from a full replay",
		"unreadable": "says the index could not be read; never written to it",
	}
	r := &RecordState{}
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if notInHead[name] != "" {
			continue
		}
		fill(settable(v.Field(i)), 0)
	}
	var subs []*SubState
	sub := func(s *SubState) int { subs = append(subs, s); return len(subs) - 1 }
	at := func(i int) *SubState {
		if i < 0 || i >= len(subs) {
			return nil
		}
		return subs[i]
	}
	b, err := json.Marshal(toHead(r, sub))
	must(t, err)
	var hr headRec
	must(t, json.Unmarshal(b, &hr))
	back := &RecordState{}
	if !hr.restore(back, at) {
		t.Fatal("restore refused its own head")
	}
	back.Step, back.ID = hr.Step, hr.ID // st.record sets these
	bv := reflect.ValueOf(back).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if notInHead[name] != "" {
			continue
		}
		if got, want := settable(bv.Field(i)).Interface(), settable(v.Field(i)).Interface(); !reflect.DeepEqual(got, want) {
			t.Errorf("RecordState.%s: back from the head %#v, want %#v (add it to headRec, toHead and restore, or to notInHead with the reason)", name, got, want)
		}
	}
}

// settable is f, which may be unexported, as a value the test can set and
// read.
func settable(f reflect.Value) reflect.Value {
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}
