package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/migrate-tool/migrate/source"
)

// schemaDefs are the schema's shapes of values that are not blocks of
// keys: expressions, field values, conditions and the mappings of fields.
const schemaDefs = `{
  "expression": {"description": "An expr-lang expression. In scope: row (the current source row: row.Code, row[\"Part No\"]), parent (in a sub-form: parent.row, parent.fields), group (with group_by), lookup(name, key), ref(step, id), env(NAME) and the function library (trim, upper, date, number, file, ...). Text in quotes is an expression too: for a constant write {value: ...}.", "type": "string", "minLength": 1},
  "value": {"description": "A field's value: an expression, a bare number or boolean (a constant), or {value: X} for a constant of any kind.", "anyOf": [{"$ref": "#/$defs/expression"}, {"type": ["number", "boolean"], "description": "A constant number or boolean."}, {"type": "object", "description": "A constant.", "required": ["value"], "additionalProperties": false, "properties": {"value": {"description": "The constant: text, a number, true/false, or null.", "type": ["string", "number", "boolean", "null"]}}}]},
  "condition": {"description": "An expression; rows for which it is false are skipped (and counted). A bare true/false is a constant.", "anyOf": [{"$ref": "#/$defs/expression"}, {"type": "boolean"}]},
  "exists": {"description": "Reference checks: field name to the entity set its values are keys of (exists: {PARTNAME: LOGPART}). Every value must exist on the target or be created by an earlier step; plan, diff and apply check them before anything is sent.", "type": "object", "minProperties": 1, "additionalProperties": {"type": "string", "minLength": 1}},
  "fields": {"description": "Target field name to value. Field names are the entity's, as in its metadata (CUSTNAME, CUSTDES).", "type": "object", "minProperties": 1, "additionalProperties": {"$ref": "#/$defs/value"}},
  "test_record": {"description": "A record a plan test expects: fields, its field values; any other key is a sub-form, the list of its lines, each a mapping of field to value (and of a nested sub-form to its lines).", "type": "object", "properties": {"fields": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean", "null"]}}}, "additionalProperties": {"type": "array", "items": {"type": "object"}}}
}`

// Schema is docs/plan.schema.json, the plan format for editors, as the
// format table says it. `go generate ./plan` writes it; TestSchemaIsGenerated
// fails when the file differs.
func Schema() []byte {
	var defs map[string]any
	if err := json.Unmarshal([]byte(schemaDefs), &defs); err != nil {
		panic("plan: schemaDefs: " + err.Error())
	}
	root := blockSchema(blockOf("top"))
	for _, b := range format[1:] {
		defs[b.Name] = blockSchema(&b)
	}
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = "https://github.com/migrate-tool/migrate/docs/plan.schema.json"
	root["title"] = "migrate plan (version 1)"
	root["patternProperties"] = map[string]any{"^x-": map[string]any{
		"description": "Your own key, ignored by the tool: a home for YAML anchors (x-defaults: &defaults ...)."}}
	root["$defs"] = defs
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		panic("plan: schema: " + err.Error())
	}
	return buf.Bytes()
}

// blockSchema is a block's object schema: its keys, the required ones,
// nothing else, and the block's own keywords.
func blockSchema(b *Block) map[string]any {
	props := map[string]any{}
	var required []string
	for _, k := range b.Keys {
		props[k.Name] = keySchema(b, k)
		if k.Required {
			required = append(required, k.Name)
		}
	}
	s := map[string]any{"description": b.Desc, "type": "object", "properties": props, "additionalProperties": false}
	if required != nil {
		s["required"] = required
	}
	if b.Schema != "" {
		mustUnmarshal(b.Name, b.Schema, &s)
	}
	if b.Name == "source" {
		// A CSV-only key on a workbook, or an XLSX-only key on a CSV file,
		// is an error (decodeSources); source.IsWorkbook says which is which.
		csv, xlsx := map[string]any{}, map[string]any{}
		for _, k := range onlyFor("csv") {
			csv[k] = false
		}
		for _, k := range onlyFor("xlsx") {
			xlsx[k] = false
		}
		s["if"] = map[string]any{"properties": map[string]any{"file": map[string]any{"pattern": workbookPattern}}}
		s["then"] = map[string]any{"properties": csv}
		s["else"] = map[string]any{"properties": xlsx}
	}
	return s
}

func keySchema(b *Block, k Key) map[string]any {
	s := map[string]any{}
	if k.Schema != "" {
		mustUnmarshal(b.Name+"."+k.Name, k.Schema, &s)
	}
	s["description"] = plainText(k.Meaning)
	if k.Enum != nil {
		enum := make([]any, 0, len(k.Enum)+1)
		for _, e := range k.Enum {
			enum = append(enum, e)
		}
		if k.Null {
			enum = append(enum, nil)
		}
		s["enum"] = enum
	}
	if k.Min != 0 {
		s["minimum"] = k.Min
	}
	if k.Max != 0 {
		s["maximum"] = k.Max
	}
	return s
}

func mustUnmarshal(what, src string, into *map[string]any) {
	if err := json.Unmarshal([]byte(src), into); err != nil {
		panic(fmt.Sprintf("plan: the format table's schema of %s: %v", what, err))
	}
}

// plainText is a meaning without the doc's Markdown backticks and escaped
// pipes, as an editor shows a description.
func plainText(md string) string {
	return strings.NewReplacer("`", "", `\|`, "|").Replace(md)
}

// workbookPattern matches the names source.IsWorkbook reads as workbooks,
// in any case.
var workbookPattern = `\.(` + anyCase("xlsx") + "|" + anyCase("xlsm") + `)$`

// encodingSchema accepts exactly the spellings source.EncodingName does:
// a name of source.EncodingSpellings in any case, with '-', '_' and spaces
// anywhere, surrounded by white space.
func encodingSchema() string {
	var alts []string
	for _, n := range source.EncodingSpellings() {
		var b strings.Builder
		for _, r := range n {
			b.WriteString("[-_ ]*")
			b.WriteString(anyCase(string(r)))
		}
		alts = append(alts, b.String()+"[-_ ]*")
	}
	s, _ := json.Marshal(map[string]any{
		"type":     "string",
		"pattern":  `^\s*(` + strings.Join(alts, "|") + `)\s*$`,
		"examples": source.Encodings(),
	})
	return string(s)
}

// anyCase writes each letter of s as a class of both cases: JSON Schema's
// regular expressions have no flag for it.
func anyCase(s string) string {
	var b strings.Builder
	for _, r := range s {
		up, low := strings.ToUpper(string(r)), strings.ToLower(string(r))
		if up == low {
			b.WriteString(regexp.QuoteMeta(string(r)))
			continue
		}
		b.WriteString("[" + low + up + "]")
	}
	return b.String()
}

// The markers around the generated tables in docs/plan-format.md.
const (
	keysBegin = "<!-- keys:begin: generated by `go generate ./plan` from plan/format.go; edit there -->"
	keysEnd   = "<!-- keys:end -->"
)

// KeysDoc is the "Every plan key" tables of docs/plan-format.md: a
// heading, a table and its note per block.
func KeysDoc() string {
	var b strings.Builder
	for i, blk := range format {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s\n\n| key | type | default | meaning |\n|---|---|---|---|\n", blk.Heading)
		for _, k := range blk.Keys {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Name, k.typeText(), k.Default, k.Meaning)
		}
		if blk.Note != "" {
			fmt.Fprintf(&b, "\n%s\n", blk.Note)
		}
	}
	return b.String()
}

// ReplaceKeysDoc puts KeysDoc between the markers of doc.
func ReplaceKeysDoc(doc string) (string, error) {
	i := strings.Index(doc, keysBegin)
	j := strings.Index(doc, keysEnd)
	if i < 0 || j < i {
		return "", errors.New("no " + keysBegin + " … " + keysEnd + " markers")
	}
	return doc[:i] + keysBegin + "\n" + KeysDoc() + doc[j:], nil
}
