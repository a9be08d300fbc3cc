package plan

import (
	"strings"
	"testing"
)

// Every name inside an expression is checked before a row is read, at the
// place it is written, with the nearest name that exists.
func TestExprNames(t *testing.T) {
	t.Parallel()
	const head = `version: 1
sources:
  c: {file: c.csv}
  a: {file: a.csv}
lookups:
  ag: {source: a, key: row.Old, value: row.New}
steps:
  - name: c
    entity: CUSTOMERS
    source: c
    fields:
`
	tests := []struct {
		name, field string
		want        []string
	}{
		{"unknown name inside a call", "      X: upper(nosuch)\n",
			[]string{`plan.yaml:12:16: field "X" of step "c": unknown name nosuch; a column is read as row.nosuch, and text is written in quotes`}},
		{"misspelt row", "      X: upper(rwo.Name)\n",
			[]string{`plan.yaml:12:16: field "X" of step "c": unknown name rwo; did you mean row.Name?`}},
		{"misspelt row with an index", "      X: trim(rwo[\"Part No\"])\n",
			[]string{`plan.yaml:12:15: field "X" of step "c": unknown name rwo; did you mean row["Part No"]?`}},
		{"misspelt function inside a call", "      X: trim(uper(row.Name))\n",
			[]string{`plan.yaml:12:15: field "X" of step "c": unknown function uper; did you mean upper?`}},
		{"misspelt function in a conditional", "      X: 'row.A == \"1\" ? substr(row.B, 0, 2) : pad_lfet(row.B, 5, \"0\")'\n",
			[]string{`plan.yaml:12:48: field "X" of step "c": unknown function pad_lfet; did you mean pad_left?`}},
		{"unknown name in an operator", "      X: row.A + nosuch * 2\n",
			[]string{`plan.yaml:12:18: field "X" of step "c": unknown name nosuch; a column is read as row.nosuch, and text is written in quotes`}},
		{"after escapes in a double-quoted scalar", "      X: \"\\\"a\\\" + upper(nosuch)\"\n",
			[]string{`plan.yaml:12:25: field "X" of step "c": unknown name nosuch; a column is read as row.nosuch, and text is written in quotes`}},
		{"on a folded line", "      X: trim(row.A) +\n        uper(row.B)\n",
			[]string{`plan.yaml:13:9: field "X" of step "c": unknown function uper; did you mean upper?`}},
		{"in a block scalar", "      X: |\n        row.A == \"\"\n          ? fail(\"no A\")\n          : lowr(row.A)\n",
			[]string{`plan.yaml:15:13: field "X" of step "c": unknown function lowr; did you mean lower?`}},
		{"group without group_by is said once", "      X: len(group)\n",
			[]string{`plan.yaml:12:14: field "X" of step "c" reads "group", which exists only on a step with group_by`}},
		{"library, builtins, let, predicates and lookups", "      X: let n = len(row.A); (lookup(\"ag\", row.A) ?? string(n)) + join(map(split(row.B, \",\"), trim(#)), \"-\") + default(row.C, $env.X)\n",
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ds := Decode("plan.yaml", []byte(head+tt.field))
			assertDiags(t, ds.Errors(), tt.want)
		})
	}
}

// parent in a sub-form and group with group_by are variables; a misspelt
// one is suggested.
func TestExprNamesInSubforms(t *testing.T) {
	t.Parallel()
	src := `version: 1
sources:
  c: {file: c.csv}
steps:
  - name: c
    entity: ORDERS
    source: c
    group_by: row.No
    fields:
      X: len(gruop)
    subforms:
      - name: L
        source: group
        fields: {A: parnet.row.Code, B: parent.row.Code + len(group), C: parent.rwo.Code + parent.fields.X}
`
	_, ds := Decode("plan.yaml", []byte(src))
	assertDiags(t, ds.Errors(), []string{
		`plan.yaml:10:14: field "X" of step "c": unknown name gruop; did you mean group?`,
		`plan.yaml:14:21: field "A" of sub-form "L" of step "c": unknown name parnet; did you mean parent.row?`,
		`plan.yaml:14:81: field "C" of sub-form "L" of step "c": unknown name parent.rwo; did you mean parent.row?`,
	})
}

// Every column an expression reads is checked against its own source's
// header: lookups' key and value, group_by, group rows, both sides of a
// link, parent.row and parent.parent.row, and a sub-form fed by the group.
func TestCheckColumns(t *testing.T) {
	t.Parallel()
	src := `version: 1
sources:
  c: {file: c.csv}
  n: {file: n.csv}
  a: {file: a.csv}
lookups:
  ag: {source: a, key: row.Olt, value: 'row["Nwe"]'}
steps:
  - name: c
    entity: ORDERS
    source: c
    group_by: row.Cod
    fields:
      A: lookup("ag", row.Agnet)
      B: sum(map(group, int(#.Lnie)))
      C: group[0].Nmae + first(group).Nmae + filter(group, .Lien != "")[0].Code
    subforms:
      - name: N
        source: n
        link: {parent: row.Cde, child: row.CustCod}
        fields: {T: row.Txt + parent.row.Nam}
        subforms:
          - name: T
            fields: {TEXT: row.Txet + parent.parent.row.Cdoe}
      - name: G
        source: group
        fields: {L: row.Lin}
`
	p, ds := Decode("plan.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	headers := map[string][]string{
		"c": {"Code", "Name", "Agent", "Line"},
		"n": {"CustCode", "Text"},
		"a": {"Old", "New"},
	}
	all := []string{
		`plan.yaml:7:28: source a has no column "Olt"; did you mean "Old"?`,
		`plan.yaml:7:46: source a has no column "Nwe"; did you mean "New"?`,
		`plan.yaml:12:19: source c has no column "Cod"; did you mean "Code"?`,
		`plan.yaml:14:27: source c has no column "Agnet"; did you mean "Agent"?`,
		`plan.yaml:15:31: source c has no column "Lnie"; did you mean "Line"?`,
		`plan.yaml:16:19: source c has no column "Nmae"; did you mean "Name"?`,
		`plan.yaml:16:39: source c has no column "Nmae"; did you mean "Name"?`,
		`plan.yaml:16:61: source c has no column "Lien"; did you mean "Line"?`,
		`plan.yaml:20:28: source c has no column "Cde"; did you mean "Code"?`,
		`plan.yaml:20:44: source n has no column "CustCod"; did you mean "CustCode"?`,
		`plan.yaml:21:25: source n has no column "Txt"; did you mean "Text"?`,
		`plan.yaml:21:42: source c has no column "Nam"; did you mean "Name"?`,
		`plan.yaml:24:32: source n has no column "Txet"; did you mean "Text"?`,
		`plan.yaml:24:57: source c has no column "Cdoe"; did you mean "Code"?`,
		`plan.yaml:27:25: source c has no column "Lin"; did you mean "Line"?`,
	}
	assertDiags(t, p.CheckColumns(headers), all)

	// A source whose header is unknown (it could not be opened) is not checked.
	delete(headers, "n")
	var withoutN []string
	for _, w := range all {
		if !strings.Contains(w, "source n ") {
			withoutN = append(withoutN, w)
		}
	}
	assertDiags(t, p.CheckColumns(headers), withoutN)
}
