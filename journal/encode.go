package journal

import (
	"encoding/json"
	"strconv"
	"time"
)

// appendEntryJSON appends e as json.Marshal writes it, byte for byte, for
// the entries a run writes by the thousand: intents, outcomes and
// committed records, because json.Marshal's reflection and its
// re-compacting of every raw value was a seventh of a deep apply's CPU.
// Anything else (a header, a watermark, a failed record's problems and
// rows, verify's totals, a text json.Marshal would escape) returns false: json.Marshal
// encodes that entry. The fast decoder reads what this writes.
func appendEntryJSON(dst []byte, e *Entry) ([]byte, bool) {
	if e.Header != nil || e.Mark != nil || e.Run != nil || e.Accept != nil || len(e.Gone) > 0 || e.Totals != nil {
		return dst, false
	}
	w := jsonWriter{b: dst, ok: true}
	w.b = append(w.b, '{')
	w.int("seq", e.Seq, true)
	w.str("prev", e.Prev, true)
	w.str("t", string(e.Kind), false)
	w.int("b", e.Batch, true)
	if len(e.Subs) > 0 {
		w.key("s")
		w.b = append(w.b, '[')
		for i := range e.Subs {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.sub(&e.Subs[i])
		}
		w.b = append(w.b, ']')
	}
	if len(e.Results) > 0 {
		w.key("r")
		w.b = append(w.b, '[')
		for i := range e.Results {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.result(&e.Results[i])
		}
		w.b = append(w.b, ']')
	}
	w.str("d", e.InDoubt, true)
	if e.Record != nil {
		w.key("rec")
		w.record(e.Record)
	}
	w.str("done", e.Done, true)
	if !e.At.IsZero() {
		w.time("at", e.At)
	}
	w.int("calls", e.Calls, true)
	w.int("429", e.Throttled, true)
	w.int("wait_ms", int(e.WaitMS), true)
	w.int("gets", e.Gets, true)
	w.b = append(w.b, '}')
	return w.b, w.ok
}

// jsonWriter writes the members of one object; ok turns false at the
// first value it cannot write as json.Marshal would.
type jsonWriter struct {
	b     []byte
	ok    bool
	inner bool // a member was written: the next needs a comma
}

func (w *jsonWriter) key(k string) {
	if w.inner {
		w.b = append(w.b, ',')
	}
	w.inner = true
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

// str writes a string member; omitempty leaves out "".
func (w *jsonWriter) str(k, v string, omitempty bool) {
	if omitempty && v == "" {
		return
	}
	w.key(k)
	w.quote(v)
}

// quote writes v as json.Marshal does when it is plain ASCII; anything it
// escapes (quotes, controls, <, >, &, bytes past ASCII) is json.Marshal's.
func (w *jsonWriter) quote(v string) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(v)
			w.b = append(w.b, q...)
			return
		}
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, v...)
	w.b = append(w.b, '"')
}

func (w *jsonWriter) int(k string, v int, omitempty bool) {
	if omitempty && v == 0 {
		return
	}
	w.key(k)
	w.b = strconv.AppendInt(w.b, int64(v), 10)
}

// raw writes a json.RawMessage member (omitempty): as it is when it is
// already compact, valid and plain ASCII, which json.Marshal would copy
// unchanged; otherwise the entry is json.Marshal's.
func (w *jsonWriter) raw(k string, v json.RawMessage) {
	if len(v) == 0 {
		return
	}
	in := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			in = !in
		case c == '\\':
			if !in {
				w.ok = false
				return
			}
			i++ // the escaped byte; a \u's digits are plain
		case c < 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '&':
			w.ok = false
			return
		case c == ' ' && !in:
			w.ok = false
			return
		}
	}
	if !json.Valid(v) {
		w.ok = false
		return
	}
	w.key(k)
	w.b = append(w.b, v...)
}

func (w *jsonWriter) time(k string, t time.Time) {
	if _, off := t.Zone(); off != 0 || t.Year() < 0 || t.Year() > 9999 {
		w.ok = false // json.Marshal's: its error, or an offset it checks
		return
	}
	w.key(k)
	w.b = append(w.b, '"')
	w.b = t.AppendFormat(w.b, time.RFC3339Nano)
	w.b = append(w.b, '"')
}

// object writes a nested object with fields.
func (w *jsonWriter) object(fields func()) {
	outer := w.inner
	w.inner = false
	w.b = append(w.b, '{')
	fields()
	w.b = append(w.b, '}')
	w.inner = outer
}

func (w *jsonWriter) sub(s *Sub) {
	w.object(func() {
		w.str("id", s.ID, false)
		w.str("st", s.Step, false)
		w.str("rec", s.Rec, false)
		w.str("p", s.Path, true)
		w.str("op", string(s.Op), false)
		w.str("m", s.Meth, false)
		w.str("u", s.URL, false)
		w.str("h", s.Hash, true)
		w.str("k", s.Key, true)
		w.str("n", s.Nav, true)
		w.str("l", s.Line, true)
		w.raw("bf", s.Before)
		w.raw("mt", s.Match)
		w.str("rh", s.RowHash, true)
		w.raw("ln", s.Lines)
		w.raw("tx", s.Texts)
		w.int("nx", s.Nested, true)
	})
}

func (w *jsonWriter) result(r *SubResult) {
	w.object(func() {
		w.str("id", r.ID, false)
		w.int("s", r.Status, false)
		w.str("k", r.Key, true)
		w.str("loc", r.Location, true)
		w.str("e", r.Error, true)
		w.str("by", r.By, true)
		w.raw("fl", r.Filled)
	})
}

func (w *jsonWriter) record(r *RecordEntry) {
	if len(r.Errors) > 0 || r.Row != nil || len(r.Rows) > 0 {
		w.ok = false // a failed record: rare, json.Marshal's
		return
	}
	w.object(func() {
		w.str("st", r.Step, false)
		w.str("rec", r.ID, false)
		w.str("status", string(r.Status), false)
		w.str("loc", r.Loc, true)
		w.str("k", r.Key, true)
		w.str("partly", r.Partly, true)
		if r.Undo {
			w.key("undo")
			w.b = append(w.b, "true"...)
		}
		w.str("rh", r.RowHash, true)
		if len(r.Keyed) > 0 {
			w.key("kr")
			w.b = append(w.b, '[')
			for i := range r.Keyed {
				if i > 0 {
					w.b = append(w.b, ',')
				}
				w.keyedRow(&r.Keyed[i])
			}
			w.b = append(w.b, ']')
		}
		w.int("ch", r.Carried, true)
		w.str("why", r.Reason, true)
		w.str("sh", r.SrcHash, true)
		w.raw("hd", r.Held)
		w.raw("wr", r.Wrote)
		w.raw("wf", r.Filled)
		w.str("lh", r.LinesHash, true)
		w.raw("wl", r.WroteKids)
	})
}

func (w *jsonWriter) keyedRow(k *KeyedRow) {
	w.object(func() {
		w.str("loc", k.Loc, false)
		w.str("p", k.Path, true)
		w.str("n", k.Nav, true)
		w.str("k", k.Key, true)
		w.strings("h", k.Header)
		w.strings("c", k.Cells)
	})
}

// strings writes a []string member (omitempty).
func (w *jsonWriter) strings(k string, l []string) {
	if len(l) == 0 {
		return
	}
	w.key(k)
	w.b = append(w.b, '[')
	for i, s := range l {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.quote(s)
	}
	w.b = append(w.b, ']')
}
