package journal

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Depth is how deep path is among a record's sub-requests: 0 for the
// record's entity (""), 1 for a sub-form child ("0"), 2 for a child of
// one ("0.2").
func Depth(path string) int {
	if path == "" {
		return 0
	}
	return strings.Count(path, ".") + 1
}

// Carried is one first-level child a deep insert wrote inside its body,
// as the journal keeps it: its path (from Lines and Texts: the children
// of one sub-form are contiguous, in the order sent), its sub-form and
// its match fields.
type Carried struct {
	Path, Nav string
	Single    bool
	Match     json.RawMessage
}

// Carried lists the first-level children deep insert s carried, in path
// order. A journal written before Texts has no texts, so a document that
// carried one gets its lines' paths from 0: only a line sent again on its
// own is then misplaced.
func (s *SubState) Carried() []Carried {
	if s == nil || len(s.Lines) == 0 && len(s.Texts) == 0 {
		return nil
	}
	var texts map[string]map[string]json.RawMessage
	_ = json.Unmarshal(s.Texts, &texts)
	byPath := map[int]Carried{}
	for p, m := range texts {
		i, err := strconv.Atoi(p)
		if err != nil {
			continue
		}
		for nav, f := range m {
			byPath[i] = Carried{Path: p, Nav: nav, Single: true, Match: f}
		}
	}
	lines := s.CarriedLines()
	at := 0
	for _, nav := range objectKeys(s.Lines) {
		for _, l := range lines[nav] {
			for byPath[at].Nav != "" {
				at++
			}
			byPath[at] = Carried{Path: strconv.Itoa(at), Nav: nav, Match: l}
		}
	}
	out := make([]Carried, 0, len(byPath))
	for _, i := range slices.Sorted(maps.Keys(byPath)) {
		out = append(out, byPath[i])
	}
	return out
}

// CarriedLines reads Lines: the match fields of the lines a deep insert
// carried, by sub-form; none when s is not one.
func (s *SubState) CarriedLines() map[string][]json.RawMessage {
	if s == nil || len(s.Lines) == 0 {
		return nil
	}
	var out map[string][]json.RawMessage
	_ = json.Unmarshal(s.Lines, &out)
	return out
}

// objectKeys are the keys of a JSON object in the order written.
func objectKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}
