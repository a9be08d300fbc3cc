package journal

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fastDecode decodes intent and outcome lines, the bulk of a journal,
// without reflection: every string is a substring of one copy of the line.
// It handles exactly what appendLine writes; anything else returns false and
// the caller falls back to encoding/json, which also validates.
func fastDecode(js []byte, e *Entry) bool { return fastDecodeSkip(js, e, false) }

// fastDecodeSkip is fastDecode that leaves a record's Rows out when
// skipRows is set.
func fastDecodeSkip(js []byte, e *Entry, skipRows bool) bool {
	p := fastParser{skipRows: skipRows}
	return p.decode(js, e)
}

// decode is fastDecode with p's settings.
func (p *fastParser) decode(js []byte, e *Entry) bool {
	p.s = string(js)
	if !p.lit('{') {
		return false
	}
	first := true
	for {
		if p.lit('}') {
			return p.i == len(p.s)
		}
		if !first && !p.lit(',') {
			return false
		}
		first = false
		k, ok := p.str()
		if !ok || !p.lit(':') {
			return false
		}
		switch k {
		case "seq":
			n, ok := p.num()
			if !ok {
				return false
			}
			e.Seq = n
		case "prev":
			if e.Prev, ok = p.str(); !ok {
				return false
			}
		case "t":
			v, ok := p.str()
			if !ok || (v != string(KindIntent) && v != string(KindOutcome) && v != string(KindRecord)) {
				return false
			}
			e.Kind = Kind(v)
		case "b":
			n, ok := p.num()
			if !ok {
				return false
			}
			e.Batch = n
		case "d":
			if e.InDoubt, ok = p.str(); !ok {
				return false
			}
		case "at":
			v, ok := p.str()
			if !ok || e.At.UnmarshalText([]byte(v)) != nil {
				return false
			}
		case "calls", "429", "wait_ms", "gets":
			n, ok := p.num()
			if !ok {
				return false
			}
			switch k {
			case "calls":
				e.Calls = n
			case "429":
				e.Throttled = n
			case "gets":
				e.Gets = n
			default:
				e.WaitMS = int64(n)
			}
		case "s":
			e.Subs = make([]Sub, 0, 128)
			if !p.array(func() bool {
				var s Sub
				if !p.sub(&s) {
					return false
				}
				e.Subs = append(e.Subs, s)
				return true
			}) {
				return false
			}
		case "r":
			e.Results = make([]SubResult, 0, 128)
			if !p.array(func() bool {
				var r SubResult
				if !p.result(&r) {
					return false
				}
				e.Results = append(e.Results, r)
				return true
			}) {
				return false
			}
		case "rec":
			e.Record = new(RecordEntry)
			if !p.record(e.Record) {
				return false
			}
		default:
			return false
		}
	}
}

// record decodes a record entry without errors or row (committed and
// skipped records, the bulk, with their keyed rows); those with them go to
// encoding/json.
func (p *fastParser) record(r *RecordEntry) bool {
	return p.object(func(k string) bool {
		var ok bool
		switch k {
		case "st":
			r.Step, ok = p.str()
		case "rec":
			r.ID, ok = p.str()
		case "status":
			var v string
			v, ok = p.str()
			r.Status = Status(v)
		case "loc":
			r.Loc, ok = p.str()
		case "k":
			r.Key, ok = p.str()
		case "kr":
			if p.skipRows {
				_, ok = p.rawValue()
				break
			}
			ok = p.array(func() bool {
				var kr KeyedRow
				if !p.keyedRow(&kr) {
					return false
				}
				r.Keyed = append(r.Keyed, kr)
				return true
			})
		case "rh":
			r.RowHash, ok = p.str()
		case "ch":
			r.Carried, ok = p.num()
		case "why":
			r.Reason, ok = p.str()
		case "sh":
			r.SrcHash, ok = p.str()
		case "lh":
			r.LinesHash, ok = p.str()
		case "hd", "wr", "wf", "wl":
			var raw string
			raw, ok = p.rawValue()
			switch v := json.RawMessage(raw); k {
			case "hd":
				r.Held = v
			case "wr":
				r.Wrote = v
			case "wl":
				r.WroteKids = v
			default:
				r.Filled = v
			}
		case "undo":
			switch {
			case strings.HasPrefix(p.s[p.i:], "true"):
				r.Undo, ok = true, true
				p.i += 4
			case strings.HasPrefix(p.s[p.i:], "false"):
				ok = true
				p.i += 5
			}
		}
		return ok
	})
}

func (p *fastParser) keyedRow(kr *KeyedRow) bool {
	return p.object(func(k string) bool {
		var ok bool
		switch k {
		case "loc":
			kr.Loc, ok = p.str()
		case "p":
			kr.Path, ok = p.str()
		case "n":
			kr.Nav, ok = p.str()
		case "k":
			kr.Key, ok = p.str()
		case "h":
			ok = p.strings(&kr.Header)
		case "c":
			ok = p.strings(&kr.Cells)
		}
		return ok
	})
}

func (p *fastParser) strings(dst *[]string) bool {
	*dst = []string{}
	return p.array(func() bool {
		v, ok := p.str()
		*dst = append(*dst, v)
		return ok
	})
}

type fastParser struct {
	s string
	i int
	// skipRows steps over a record's keyed rows: only reports read them
	// (State.report), and decoding them would slow every resume.
	skipRows bool
	// written: the line is one appendLine just encoded, its raw values
	// valid JSON (State.applyLine).
	written bool
}

func (p *fastParser) lit(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *fastParser) str() (string, bool) {
	if !p.lit('"') {
		return "", false
	}
	start := p.i
	ascii := true
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			v := p.s[start:p.i]
			if !ascii && !utf8.ValidString(v) {
				// encoding/json replaces invalid bytes: leave it to it.
				return "", false
			}
			p.i++
			return v, true
		case c >= 0x80:
			ascii = false
		case c == '\\':
			return p.escaped(start - 1)
		case c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

// escaped decodes a string with escapes through encoding/json (rare).
func (p *fastParser) escaped(start int) (string, bool) {
	i := start + 1
	for i < len(p.s) {
		switch p.s[i] {
		case '\\':
			i += 2
			continue
		case '"':
			var v string
			if json.Unmarshal([]byte(p.s[start:i+1]), &v) != nil {
				return "", false
			}
			p.i = i + 1
			return v, true
		}
		i++
	}
	return "", false
}

func (p *fastParser) num() (int, bool) {
	start := p.i
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
	}
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	n, err := strconv.Atoi(p.s[start:p.i])
	return n, err == nil
}

func (p *fastParser) array(elem func() bool) bool {
	if !p.lit('[') {
		return false
	}
	if p.lit(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if p.lit(']') {
			return true
		}
		if !p.lit(',') {
			return false
		}
	}
}

// object walks a flat object, calling field for each key.
func (p *fastParser) object(field func(k string) bool) bool {
	if !p.lit('{') {
		return false
	}
	if p.lit('}') {
		return true
	}
	for {
		k, ok := p.str()
		if !ok || !p.lit(':') || !field(k) {
			return false
		}
		if p.lit('}') {
			return true
		}
		if !p.lit(',') {
			return false
		}
	}
}

func (p *fastParser) sub(s *Sub) bool {
	return p.object(func(k string) bool {
		var ok bool
		switch k {
		case "id":
			s.ID, ok = p.str()
		case "st":
			s.Step, ok = p.str()
		case "rec":
			s.Rec, ok = p.str()
		case "p":
			s.Path, ok = p.str()
		case "op":
			var op string
			op, ok = p.str()
			s.Op = OpKind(op)
		case "m":
			s.Meth, ok = p.str()
		case "u":
			s.URL, ok = p.str()
		case "h":
			s.Hash, ok = p.str()
		case "k":
			s.Key, ok = p.str()
		case "n":
			s.Nav, ok = p.str()
		case "l":
			s.Line, ok = p.str()
		case "rh":
			s.RowHash, ok = p.str()
		case "nx":
			s.Nested, ok = p.num()
		case "bf", "mt", "ln", "tx":
			var raw string
			raw, ok = p.rawValue()
			switch {
			case !ok:
			case k == "bf":
				s.Before = json.RawMessage(raw)
			case k == "mt":
				s.Match = json.RawMessage(raw)
			case k == "tx":
				s.Texts = json.RawMessage(raw)
			default:
				s.Lines = json.RawMessage(raw)
			}
		}
		return ok
	})
}

func (p *fastParser) result(r *SubResult) bool {
	return p.object(func(k string) bool {
		var ok bool
		switch k {
		case "id":
			r.ID, ok = p.str()
		case "s":
			r.Status, ok = p.num()
		case "k":
			r.Key, ok = p.str()
		case "loc":
			r.Location, ok = p.str()
		case "e":
			r.Error, ok = p.str()
		case "fl":
			var raw string
			raw, ok = p.rawValue()
			r.Filled = json.RawMessage(raw)
		}
		return ok
	})
}

// rawValue skips one JSON object and returns its text; encoding/json checks
// it when it is used.
func (p *fastParser) rawValue() (string, bool) {
	start := p.i
	depth := 0
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '"':
			if _, ok := p.str(); !ok {
				return "", false
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				p.i++
				raw := p.s[start:p.i]
				if !p.written && !json.Valid([]byte(raw)) {
					return "", false
				}
				return raw, true
			}
		}
		p.i++
	}
	return "", false
}
