package plan

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const schemaPath = "../docs/plan.schema.json"

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	return s
}

// schemaWalker checks a YAML tree against the parts of a JSON schema that
// decide which keys are allowed: properties, patternProperties,
// additionalProperties, items, $ref and anyOf (the branch whose type fits).
type schemaWalker struct {
	root map[string]any
	errs []string
}

func (sw *schemaWalker) deref(s map[string]any) map[string]any {
	for i := 0; i < 10; i++ {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		cur := sw.root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur, _ = cur[part].(map[string]any)
		}
		if cur == nil {
			sw.errs = append(sw.errs, "unresolved "+ref)
			return map[string]any{}
		}
		s = cur
	}
	return s
}

func kindFits(s map[string]any, n *yaml.Node) bool {
	var types []string
	switch t := s["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			types = append(types, x.(string))
		}
	default:
		return true
	}
	for _, t := range types {
		switch {
		case t == "object" && n.Kind == yaml.MappingNode,
			t == "array" && n.Kind == yaml.SequenceNode,
			n.Kind == yaml.ScalarNode && (t == "string" && n.ShortTag() == "!!str" ||
				(t == "number" || t == "integer") && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") ||
				t == "boolean" && n.ShortTag() == "!!bool" || t == "null" && n.ShortTag() == "!!null"):
			return true
		}
	}
	return false
}

func (sw *schemaWalker) walk(s map[string]any, n *yaml.Node, path string) {
	s = sw.deref(s)
	if anyOf, ok := s["anyOf"].([]any); ok {
		for _, b := range anyOf {
			bs := sw.deref(b.(map[string]any))
			if kindFits(bs, n) {
				sw.walk(bs, n, path)
				return
			}
		}
		sw.errs = append(sw.errs, path+": no anyOf branch fits")
		return
	}
	if !kindFits(s, n) {
		sw.errs = append(sw.errs, path+": wrong kind of value")
		return
	}
	if enum, ok := s["enum"].([]any); ok && n.Kind == yaml.ScalarNode {
		found := false
		for _, e := range enum {
			if e == n.Value {
				found = true
			}
		}
		if !found {
			sw.errs = append(sw.errs, path+": "+n.Value+" not in enum")
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		props, _ := s["properties"].(map[string]any)
		pats, _ := s["patternProperties"].(map[string]any)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			if ps, ok := props[key].(map[string]any); ok {
				sw.walk(ps, val, path+"."+key)
				continue
			}
			matched := false
			for pat, ps := range pats {
				if regexp.MustCompile(pat).MatchString(key) {
					sw.walk(ps.(map[string]any), val, path+"."+key)
					matched = true
				}
			}
			if matched {
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case map[string]any:
				sw.walk(ap, val, path+"."+key)
			case bool:
				if !ap {
					sw.errs = append(sw.errs, path+": key "+key+" is not allowed")
				}
			default:
				sw.errs = append(sw.errs, path+": key "+key+" is not described")
			}
		}
	case yaml.SequenceNode:
		items, ok := s["items"].(map[string]any)
		for _, c := range n.Content {
			if ok {
				sw.walk(items, c, path+"[]")
			}
		}
	}
}

// Every key of docs/plan-format.md's example is allowed by the schema, and the
// schema rejects a misspelt key.
func TestSchemaAllowsFormatExample(t *testing.T) {
	t.Parallel()
	root := loadSchema(t)
	if root["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema is %v", root["$schema"])
	}
	for _, path := range []string{"testdata/format-example.yaml", "testdata/good/format-example-complete.yaml"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		sw := &schemaWalker{root: root}
		sw.walk(root, doc.Content[0], "plan")
		if len(sw.errs) > 0 {
			t.Errorf("%s against the schema:\n%s", path, strings.Join(sw.errs, "\n"))
		}
	}

	var bad yaml.Node
	if err := yaml.Unmarshal([]byte("version: 1\nsteps:\n  - {name: a, entity: E, sorce: s}\n"), &bad); err != nil {
		t.Fatal(err)
	}
	sw := &schemaWalker{root: root}
	sw.walk(root, bad.Content[0], "plan")
	if len(sw.errs) != 1 || !strings.Contains(sw.errs[0], "key sorce is not allowed") {
		t.Errorf("a misspelt key: got %v", sw.errs)
	}
}

// docs/plan.schema.json is what the format table generates: a key added to
// the table and not generated, or an edit by hand, fails here.
func TestSchemaIsGenerated(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != string(Schema()) {
		t.Errorf("%s is stale: run `go generate ./plan` (the schema comes from plan/format.go)", schemaPath)
	}
}

// The schema accepts exactly the encoding spellings the decoder accepts,
// which are source's: in any case, with '-', '_' and spaces anywhere.
func TestSchemaEncodingsAreTheDecoders(t *testing.T) {
	t.Parallel()
	defs := loadSchema(t)["$defs"].(map[string]any)
	enc := defs["source"].(map[string]any)["properties"].(map[string]any)["encoding"].(map[string]any)
	pattern := regexp.MustCompile(enc["pattern"].(string))
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"utf-8", true}, {"UTF8", true}, {"utf_16", true}, {"UTF-16LE", true}, {"utf-16be", true},
		{"windows-1255", true}, {"Windows_1255", true}, {"cp1255", true}, {"windows1252", true}, {"CP1252", true},
		{"iso-8859-8", true}, {"iso8859-8", true}, {"ISO_8859-8", true}, {"iso-8859-8-i", true}, {"hebrew", true},
		{"iso-8859-1", true}, {"latin1", true}, {" utf-8 ", true},
		{"klingon", false}, {"utf-9", false}, {"latin-9", false}, {"windows-1251", false}, {"", false},
	} {
		src := "version: 1\nsources:\n  s: {file: s.csv, encoding: \"" + tc.name + "\"}\nsteps:\n  - {name: a, entity: E, source: s, fields: {A: row.A}}\n"
		p, ds := Decode("plan.yaml", []byte(src))
		decoded := !ds.HasErrors() && len(p.Sources) == 1 && p.Sources[0].Encoding != ""
		if decoded != tc.ok || pattern.MatchString(tc.name) != tc.ok {
			t.Errorf("encoding %q: decoder %v (%v), schema %v; want %v", tc.name, decoded, ds, pattern.MatchString(tc.name), tc.ok)
		}
	}
}
