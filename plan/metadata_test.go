package plan

import (
	"os"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
)

// demoMetadata is a small hand-built metadata document with the resources
// docs/service.md names (Text sub-forms, Attachments, the documents of Keys).
func demoMetadata() *odata.Metadata {
	str := func(name string, max int) *odata.Property {
		return &odata.Property{Name: name, Type: odata.EdmString, MaxLength: max, Nullable: true}
	}
	typ := func(name string, t odata.EdmType) *odata.Property {
		return &odata.Property{Name: name, Type: t, Nullable: true}
	}
	mand := func(p *odata.Property) *odata.Property { p.Mandatory = true; return p }
	comp := func(p *odata.Property) *odata.Property { p.Computed = true; return p }
	// ro is Core.Permissions Read, as real documents mark a field the API
	// may not write; a mandatory one is not asked for.
	ro := func(p *odata.Property) *odata.Property { p.ReadOnly = true; return p }
	coll := func(name string) *odata.NavigationProperty {
		return &odata.NavigationProperty{Name: name, Type: name, Collection: true, ContainsTarget: true}
	}
	single := func(name string) *odata.NavigationProperty {
		return &odata.NavigationProperty{Name: name, Type: name, ContainsTarget: true}
	}
	text := func(name string) *odata.EntityType {
		return &odata.EntityType{Name: name, Properties: []*odata.Property{
			str("TEXT", 0), typ("APPEND", odata.EdmBoolean), typ("SIGNATURE", odata.EdmBoolean)}}
	}
	types := []*odata.EntityType{
		{Name: "FAMILY_LOG", Key: []string{"FAMILYNAME"}, Properties: []*odata.Property{
			str("FAMILYNAME", 16), mand(str("FAMILYDESC", 32)), str("DEBITFLAG", 1), str("TECHFLAG", 1),
			comp(typ("FAMILY", odata.EdmInt64))},
			Navigations: []*odata.NavigationProperty{coll("FAMILY_LOGPART_SUBFORM")}},
		{Name: "FAMILY_LOGPART_SUBFORM", Key: []string{"PARTNAME"}, Properties: []*odata.Property{
			str("PARTNAME", 15), str("PARTDES", 48)}},
		{Name: "LOGPART", Key: []string{"PARTNAME"}, Properties: []*odata.Property{
			str("PARTNAME", 15), str("PARTDES", 48), str("BARCODE", 16), str("EXTPART", 15)}},
		{Name: "CUSTOMERS", Key: []string{"CUSTNAME"}, Properties: []*odata.Property{
			str("CUSTNAME", 16), mand(str("CUSTDES", 48)), str("AGENTCODE", 8)},
			Navigations: []*odata.NavigationProperty{coll("GENCUSTNOTES_SUBFORM"), single("SHIPTO2_SUBFORM")}},
		{Name: "GENCUSTNOTES_SUBFORM", Key: []string{"NOTELINE"}, Properties: []*odata.Property{
			typ("NOTELINE", odata.EdmInt64), str("SUBJECT", 80)}},
		{Name: "SHIPTO2_SUBFORM", Properties: []*odata.Property{str("ADDRESS", 80), str("PHONE", 20)}},
		{Name: "ORDERS", Key: []string{"ORDNAME"}, Properties: []*odata.Property{
			mand(str("ORDNAME", 16)), mand(str("CUSTNAME", 16)), str("CDES", 48),
			typ("CURDATE", odata.EdmDateTimeOffset), comp(typ("ORD", odata.EdmInt64))},
			Navigations: []*odata.NavigationProperty{coll("ORDERITEMS_SUBFORM"), single("ORDERSTEXT_SUBFORM"), coll("EXTFILES_SUBFORM")}},
		{Name: "ORDERITEMS_SUBFORM", Key: []string{"KLINE"}, Properties: []*odata.Property{
			typ("KLINE", odata.EdmInt64), mand(str("PARTNAME", 15)), typ("TQUANT", odata.EdmDecimal),
			typ("PRICE", odata.EdmDecimal), typ("DUEDATE", odata.EdmDateTimeOffset), ro(mand(str("PDES", 48)))},
			Navigations: []*odata.NavigationProperty{single("ORDERITEMSTEXT_SUBFORM")}},
		text("ORDERITEMSTEXT_SUBFORM"),
		text("ORDERSTEXT_SUBFORM"),
		{Name: "EXTFILES_SUBFORM", Key: []string{"EXTFILENUM"}, Properties: []*odata.Property{
			typ("EXTFILENUM", odata.EdmInt64), str("EXTFILEDES", 80), str("EXTFILENAME", 0), str("SUFFIX", 8)}},
		{Name: "AINVOICES", Key: []string{"IVNUM", "IVTYPE", "DEBIT"}, Properties: []*odata.Property{
			str("IVNUM", 16), str("IVTYPE", 1), str("DEBIT", 1), str("CUSTNAME", 16)}},
		{Name: "ABILITIES", Key: []string{"ABILITYCODE"}, Properties: []*odata.Property{
			str("ABILITYCODE", 3), str("ABILITYDES", 32), typ("ABILITY", odata.EdmInt64)},
			Navigations: []*odata.NavigationProperty{coll("ABILITYVALUES_SUBFORM")}},
		{Name: "ABILITYVALUES_SUBFORM", Properties: []*odata.Property{str("VALUE", 20)}},
	}
	md := &odata.Metadata{Namespace: "Service.OData", Container: "DefaultContainer", Types: types}
	byName := map[string]*odata.EntityType{}
	for _, t := range types {
		byName[t.Name] = t
	}
	for _, n := range []string{"FAMILY_LOG", "LOGPART", "CUSTOMERS", "ORDERS", "AINVOICES", "ABILITIES"} {
		md.Sets = append(md.Sets, &odata.EntitySet{Name: n, Type: byName[n]})
	}
	md.Reindex()
	return md
}

func mustVersion(t *testing.T, s string) odata.Version {
	t.Helper()
	v, err := odata.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCheckMetadataFormatExample(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/good/format-example-complete.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, ds := Decode("plan.yaml", data)
	if len(ds) != 0 {
		t.Fatalf("decode: %v", ds)
	}
	md := demoMetadata()
	tests := []struct {
		version string
		want    []string
	}{
		{"25.1", nil},
		{"22.0", nil},
		{"20.1", []string{
			"plan.yaml:106:15: attaching files (file() in EXTFILES_SUBFORM) needs system version 21.0; the target runs 20.1",
		}},
		{"19.1", []string{
			"plan.yaml:100:19: writing the text sub-form ORDERITEMSTEXT_SUBFORM needs system version 20.0; the target runs 19.1",
			"plan.yaml:103:15: writing the text sub-form ORDERSTEXT_SUBFORM needs system version 20.0; the target runs 19.1",
			"plan.yaml:106:15: attaching files (file() in EXTFILES_SUBFORM) needs system version 21.0; the target runs 19.1",
		}},
		{"19.0", []string{
			"plan.yaml:44:1: loading needs $batch, which came with system version 19.1; the target runs 19.0. migrate sends every write inside $batch so that its journal knows what was sent; load this server with the ERP's own form-load tool, or upgrade it",
			"plan.yaml:100:19: writing the text sub-form ORDERITEMSTEXT_SUBFORM needs system version 20.0; the target runs 19.0",
			"plan.yaml:103:15: writing the text sub-form ORDERSTEXT_SUBFORM needs system version 20.0; the target runs 19.0",
			"plan.yaml:106:15: attaching files (file() in EXTFILES_SUBFORM) needs system version 21.0; the target runs 19.0",
		}},
		{"17.1", []string{
			"plan.yaml:44:1: writing records needs system version 17.2; the target runs 17.1",
			"plan.yaml:100:19: writing the text sub-form ORDERITEMSTEXT_SUBFORM needs system version 20.0; the target runs 17.1",
			"plan.yaml:103:15: writing the text sub-form ORDERSTEXT_SUBFORM needs system version 20.0; the target runs 17.1",
			"plan.yaml:106:15: attaching files (file() in EXTFILES_SUBFORM) needs system version 21.0; the target runs 17.1",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			got := p.CheckMetadata(md, mustVersion(t, tt.version))
			assertDiags(t, got, tt.want)
		})
	}
}

func assertDiags(t *testing.T, got Diagnostics, want []string) {
	t.Helper()
	var g []string
	for _, d := range got {
		g = append(g, d.String())
	}
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n got: %s\nwant: %s", strings.Join(g, "\n      "), strings.Join(want, "\n      "))
	}
}

// planOf decodes a plan body (steps only) after a fixed header declaring
// sources s and t; the header is 5 lines long and the bodies start with a
// blank line, so their first step is on line 7.
func planOf(t *testing.T, body string) *Plan {
	t.Helper()
	src := "version: 1\nsources:\n  s: {file: s.csv}\n  t: {file: t.csv}\nsteps:\n" + body
	p, ds := Decode("plan.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatalf("decode: %v", ds.Errors())
	}
	return p
}

// ordersWith begins a step "o" of ORDERS from source s, up to its
// "subforms:"; groupedOrders groups s's rows by order too. The sub-forms a
// case goes on with start on line 12 of the plan planOf makes (13 after
// groupedOrders).
const (
	ordersWith    = "\n  - name: o\n    entity: ORDERS\n    source: s\n    fields: {CUSTNAME: row.C}\n    subforms:\n"
	groupedOrders = "\n  - name: o\n    entity: ORDERS\n    source: s\n    group_by: row.No\n    fields: {CUSTNAME: row.C}\n    subforms:\n"
)

func TestCheckMetadata(t *testing.T) {
	t.Parallel()
	md := demoMetadata()
	tests := []struct {
		name    string
		version string
		body    string
		want    []string
	}{
		{"unknown entity", "25.1", `
  - {name: a, entity: CUSTOMRS, source: s, fields: {CUSTNAME: row.A}}
`, []string{`plan.yaml:7:23: unknown entity "CUSTOMRS" in step "a"; did you mean "CUSTOMERS"?`}},
		{"sub-form type is no entity set", "25.1", `
  - {name: a, entity: ORDERITEMS_SUBFORM, source: s, fields: {PARTNAME: row.A}}
`, []string{`plan.yaml:7:23: "ORDERITEMS_SUBFORM" in step "a" is a sub-form type, not an entity set; load it as a sub-form of its parent`}},
		{"unknown field with suggestion", "25.1", `
  - name: a
    entity: CUSTOMERS
    source: s
    fields:
      CUSTNAME: row.A
      CUSTDESC: row.B
`, []string{
			`plan.yaml:7:5: step "a" does not write CUSTOMERS.CUSTDES, which is mandatory; map it in fields`,
			`plan.yaml:12:7: unknown field "CUSTDESC" in CUSTOMERS; did you mean "CUSTDES"?`,
		}},
		{"mandatory only from 25.1", "25.0", `
  - {name: a, entity: CUSTOMERS, source: s, fields: {CUSTNAME: row.A}}
`, nil},
		{"mandatory not needed for update", "25.1", `
  - {name: a, entity: CUSTOMERS, source: s, mode: update, fields: {CUSTNAME: row.A}}
`, nil},
		{"fields at every depth", "25.1", groupedOrders + `      - name: ORDERITEMS_SUBFORM
        source: group
        fields: {PARTNAM: row.P}
        subforms:
          - name: ORDERITEMSTEXT_SUBFORM
            fields: {TEXTT: row.N}
          - name: ORDERITEMSTEXT_SUBFROM
            fields: {TEXT: row.N}
`, []string{
			`plan.yaml:13:9: sub-form "ORDERITEMS_SUBFORM" of step "o" does not write ORDERITEMS_SUBFORM.PARTNAME, which is mandatory; map it in fields`,
			`plan.yaml:15:18: unknown field "PARTNAM" in ORDERITEMS_SUBFORM; did you mean "PARTNAME"?`,
			`plan.yaml:17:19: sub-form "ORDERITEMSTEXT_SUBFORM" of sub-form "ORDERITEMS_SUBFORM" of step "o" is a text sub-form written without TEXT, the text itself; map TEXT in fields`,
			`plan.yaml:18:22: unknown field "TEXTT" in ORDERITEMSTEXT_SUBFORM; did you mean "TEXT"?`,
			`plan.yaml:19:19: unknown sub-form "ORDERITEMSTEXT_SUBFROM" of ORDERITEMS_SUBFORM; did you mean "ORDERITEMSTEXT_SUBFORM"?`,
		}},
		{"single-object sub-form fed by lines", "25.1", `
  - name: c
    entity: CUSTOMERS
    source: s
    fields: {CUSTNAME: row.A, CUSTDES: row.B}
    subforms:
      - name: SHIPTO2_SUBFORM
        source: t
        link: {parent: row.A, child: row.A}
        lines: replace
        fields: {ADDRESS: row.X}
`, []string{
			`plan.yaml:13:17: SHIPTO2_SUBFORM is a single-object sub-form of CUSTOMERS: it takes one object built from the parent's row, not lines from source "t"; remove "source"`,
			`plan.yaml:15:16: "lines" means nothing for SHIPTO2_SUBFORM, a single-object sub-form of CUSTOMERS; remove it`,
		}},
		{"single-object sub-form fed by the group", "25.1", groupedOrders + `      - {name: ORDERSTEXT_SUBFORM, source: group, fields: {TEXT: row.T}}
`, []string{
			`plan.yaml:13:44: ORDERSTEXT_SUBFORM is a single-object sub-form of ORDERS: it takes one object built from the parent's row, not lines from the group; remove "source"`,
		}},
		{"text sub-form without TEXT", "25.1", ordersWith + `      - {name: ORDERSTEXT_SUBFORM, fields: {APPEND: true, SIGNATURE: false}}
`, []string{
			`plan.yaml:12:16: sub-form "ORDERSTEXT_SUBFORM" of step "o" is a text sub-form written without TEXT, the text itself; map TEXT in fields`,
		}},
		{"computed field and navigation as field", "25.1", `
  - name: f
    entity: FAMILY_LOG
    source: s
    fields:
      FAMILYNAME: row.A
      FAMILYDESC: row.B
      FAMILY: row.C
      FAMILY_LOGPART_SUBFORM: row.D
    subforms:
      - name: DEBITFLAG
        fields: {X: row.A}
`, []string{
			`plan.yaml:13:7: FAMILY_LOG.FAMILY is assigned by the server and read-only; remove it from fields`,
			`plan.yaml:14:7: "FAMILY_LOGPART_SUBFORM" is a sub-form of FAMILY_LOG, not a field; list it under subforms`,
			`plan.yaml:16:15: "DEBITFLAG" is a field of FAMILY_LOG, not a sub-form; map it under fields`,
		}},
		{"read-only field (Core.Permissions Read)", "25.1", ordersWith + `      - name: ORDERITEMS_SUBFORM
        fields: {PARTNAME: row.P, PDES: row.D}
`, []string{
			`plan.yaml:13:35: ORDERITEMS_SUBFORM.PDES is read-only through the API (Core.Permissions Read in the metadata); remove it from fields`,
		}},
		{"keys: server-numbered, composite, line keys", "25.1", `
  - {name: o, entity: ORDERS, source: s, fields: {CUSTNAME: row.C}, subforms: [{name: ORDERITEMS_SUBFORM, source: t, link: {parent: row.A, child: row.A}, fields: {PARTNAME: row.P}}]}
  - {name: i, entity: AINVOICES, source: s, fields: {CUSTNAME: row.C, IVTYPE: {value: A}}}
  - {name: c, entity: CUSTOMERS, source: s, fields: {CUSTDES: row.C}}
  - name: f
    entity: FAMILY_LOG
    source: s
    fields: {FAMILYNAME: row.A, FAMILYDESC: row.B}
    subforms: [{name: FAMILY_LOGPART_SUBFORM, fields: {PARTDES: row.X}}]
`, []string{
			`plan.yaml:8:5: step "i" does not write the key field DEBIT of AINVOICES; map it in fields`,
			`plan.yaml:9:5: step "c" does not write the key field CUSTNAME of CUSTOMERS; map it in fields`,
			`plan.yaml:14:16: sub-form "FAMILY_LOGPART_SUBFORM" of step "f" does not write the key field PARTNAME of FAMILY_LOGPART_SUBFORM; map it in fields`,
		}},
		{"update and upsert need the key", "25.1", `
  - {name: o, entity: ORDERS, source: s, mode: update, fields: {CUSTNAME: row.C}}
  - {name: p, entity: LOGPART, source: s, mode: upsert, fields: {PARTDES: row.C}}
  - {name: f, entity: FAMILY_LOG, source: s, mode: upsert, fields: {FAMILYNAME: row.C}}
`, []string{
			`plan.yaml:7:48: step "o": mode update finds each record by its key; map the key field ORDNAME of ORDERS`,
			`plan.yaml:8:49: step "p": mode upsert finds each record by its key; map the key field PARTNAME of LOGPART`,
		}},
		{"SUFFIX needs 22.0", "21.0", ordersWith + `      - name: EXTFILES_SUBFORM
        fields:
          EXTFILENAME: file(row.Path)
          SUFFIX: {value: .pdf}
`, []string{
			`plan.yaml:15:11: writing SUFFIX of an attachment needs system version 22.0; the target runs 21.0`,
		}},
		{"constants that cannot fit", "25.1", `
  - name: a
    entity: ABILITIES
    source: s
    fields:
      ABILITYCODE: {value: "ABCD"}
      ABILITYDES: {value: "שלום"}
      ABILITY: {value: "abc"}
  - name: b
    entity: ABILITIES
    source: s
    fields:
      ABILITYCODE: 1234
      ABILITYDES: true
      ABILITY: 2.5
  - name: c
    entity: ORDERS
    source: s
    fields:
      CUSTNAME: {value: "C1"}
      CURDATE: 17
      CDES: {value: null}
    subforms:
      - name: ORDERITEMS_SUBFORM
        fields: {PARTNAME: {value: P}, TQUANT: {value: "1.234,50"}, PRICE: {value: "a lot"}}
`, []string{
			`plan.yaml:11:28: the constant "ABCD" is 4 characters, longer than MaxLength 3 for ABILITIES.ABILITYCODE`,
			`plan.yaml:13:24: the constant "abc" is not a whole number (Edm.Int64) for ABILITIES.ABILITY`,
			`plan.yaml:18:20: the constant 1234 is 4 characters, longer than MaxLength 3 for ABILITIES.ABILITYCODE`,
			`plan.yaml:19:19: the constant true is true/false, not text (Edm.String) for ABILITIES.ABILITYDES`,
			`plan.yaml:20:16: the constant 2.5 is not a whole number (Edm.Int64) for ABILITIES.ABILITY`,
			`plan.yaml:26:16: the constant 17 is a number, not a date (Edm.DateTimeOffset) for ORDERS.CURDATE`,
			`plan.yaml:30:84: the constant "a lot" is not a decimal number (Edm.Decimal) for ORDERITEMS_SUBFORM.PRICE`,
		}},
		// A server without a version function is older than 22.0: a text
		// refused after its order was committed leaves half an order, so
		// what a server before 22.0 may lack waits for a declared version.
		{"unknown version refuses what it may lack", "", ordersWith + `      - {name: ORDERSTEXT_SUBFORM, fields: {TEXT: row.T}}
      - {name: EXTFILES_SUBFORM, fields: {EXTFILENAME: file(row.F), SUFFIX: row.X}}
`, []string{
			`plan.yaml:12:16: writing the text sub-form ORDERSTEXT_SUBFORM needs system version 20.0; the target has no version function, so it is older than 22.0 and may be older than 20.0: ` + DeclareVersion,
			`plan.yaml:13:16: attaching files (file() in EXTFILES_SUBFORM) needs system version 21.0; the target has no version function, so it is older than 22.0 and may be older than 21.0: ` + DeclareVersion,
			`plan.yaml:13:69: writing SUFFIX of an attachment needs system version 22.0; the target is older (it has no version function, which came with 22.0)`,
		}},
		{"unknown version still writes", "", `
  - name: p
    entity: LOGPART
    source: s
    fields: {PARTNAME: row.C, PARTDES: row.D}
`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := planOf(t, tt.body)
			var v odata.Version
			if tt.version != "" {
				v = mustVersion(t, tt.version)
			}
			assertDiags(t, withoutMatchHint(p.CheckMetadata(md, v)), tt.want)
		})
	}
}

// withoutMatchHint drops the warning about match: that most plans of these
// tests would get (TestCheckMetadataMatch is about it).
func withoutMatchHint(ds Diagnostics) Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if !strings.Contains(d.Message, "neither match nor id") {
			out = append(out, d)
		}
	}
	return out
}

// match: names fields the step writes (reconciliation finds an in-doubt
// create by them); a step that creates
// server-numbered documents without match or id is warned, with a
// suggestion built from its fields.
func TestCheckMetadataMatch(t *testing.T) {
	t.Parallel()
	tests := []metadataCase{
		{"orders without match or id", `
  - name: o
    entity: ORDERS
    source: s
    fields: {CUSTNAME: row.C, CDES: row.D}
`, []string{`plan.yaml:7:5: warning: step "o" creates ORDERS, numbered by the server, and has neither match nor id: if a create goes in doubt, any ORDERS with the same fields may be taken for it; name the fields that tell one document from another, e.g. match: [CUSTNAME, CDES]`}},
		{"match given", `
  - name: o
    entity: ORDERS
    source: s
    match: [CUSTNAME]
    fields: {CUSTNAME: row.C, CDES: row.D}
`, nil},
		{"one name", `
  - name: o
    entity: ORDERS
    source: s
    match: CDES
    fields: {CUSTNAME: row.C, CDES: row.D}
`, nil},
		{"id given", `
  - name: o
    entity: ORDERS
    source: s
    id: row.N
    fields: {CUSTNAME: row.C}
`, nil},
		{"customers have their key", `
  - name: c
    entity: CUSTOMERS
    source: s
    fields: {CUSTNAME: row.C, CUSTDES: row.D}
`, nil},
		{"unknown and unwritten fields", `
  - name: o
    entity: ORDERS
    source: s
    match: [CUSTNAM, CURDATE]
    fields: {CUSTNAME: row.C}
`, []string{
			`plan.yaml:10:13: match of step "o": unknown field "CUSTNAM" in ORDERS; did you mean "CUSTNAME"?`,
			`plan.yaml:10:22: match of step "o": "CURDATE" is not written by the step; match names fields the step writes (add it to fields, or remove it from match)`,
		}},
	}
	checkMetadataCases(t, tests, func(ds Diagnostics) Diagnostics { return ds })
}

// metadataCase is a plan's steps and the diagnostics CheckMetadata gives
// them against demoMetadata at version 25.1.
type metadataCase struct {
	name, body string
	want       []string
}

// checkMetadataCases checks each case's diagnostics, as keep leaves them.
func checkMetadataCases(t *testing.T, tests []metadataCase, keep func(Diagnostics) Diagnostics) {
	t.Helper()
	md := demoMetadata()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assertDiags(t, keep(planOf(t, tt.body).CheckMetadata(md, mustVersion(t, "25.1"))), tt.want)
		})
	}
}

func TestCheckMetadataNil(t *testing.T) {
	t.Parallel()
	p := &Plan{Steps: []*Step{{Name: "a", Entity: "X"}}}
	if ds := p.CheckMetadata(nil, odata.Version{Major: 25, Minor: 1}); ds != nil {
		t.Fatalf("nil metadata: got %v, want no diagnostics", ds)
	}
}

// exists: names fields the step or sub-form writes, and entity
// sets with a key of one field.
func TestCheckMetadataExists(t *testing.T) {
	t.Parallel()
	tests := []metadataCase{
		{"on a step and a sub-form", `
  - name: o
    entity: ORDERS
    source: s
    id: row.N
    exists: {CUSTNAME: CUSTOMERS}
    fields: {CUSTNAME: row.C}
    subforms:
      - name: ORDERITEMS_SUBFORM
        exists: {PARTNAME: LOGPART}
        fields: {PARTNAME: row.P}
`, nil},
		{"unknown, unwritten, unknown entity, key of three fields", `
  - name: o
    entity: ORDERS
    source: s
    id: row.N
    exists: {CUSTNAM: CUSTOMERS, CDES: CUSTOMER, CUSTNAME: AINVOICES}
    fields: {CUSTNAME: row.C}
    subforms:
      - name: ORDERITEMS_SUBFORM
        exists: {PRICE: LOGPART}
        fields: {PARTNAME: row.P}
`, []string{
			`plan.yaml:11:14: exists of step "o": unknown field "CUSTNAM" in ORDERS; did you mean "CUSTNAME"?`,
			`plan.yaml:11:34: exists of step "o": "CDES" is not written by it; exists checks fields it writes (add it to fields, or remove it from exists)`,
			`plan.yaml:11:40: exists of step "o": unknown entity "CUSTOMER"; did you mean "CUSTOMERS"?`,
			`plan.yaml:11:60: exists of step "o": AINVOICES has a key of 3 fields (IVNUM, IVTYPE, DEBIT); exists checks a value against a key of one field`,
			`plan.yaml:15:18: exists of sub-form "ORDERITEMS_SUBFORM" of step "o": "PRICE" is not written by it; exists checks fields it writes (add it to fields, or remove it from exists)`,
		}},
	}
	checkMetadataCases(t, tests, withoutMatchHint)
}

// A standard service's keys (docs/other-services.md): a Guid key the
// server computes when none is given (Core.ComputedDefaultValue), and a
// line's key field that holds its parent's by a referential constraint
// (a CAP composition's up__CUSTNAME), need not be written; a line's key
// of its own, without either, must be. The service's document is
// testdata/standard-keys.xml.
func TestCheckMetadataStandardKeys(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/standard-keys.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	md, err := odata.ParseMetadata(f)
	if err != nil {
		t.Fatal(err)
	}
	p := planOf(t, `
  - {name: o, entity: ORDERS, source: s, id: row.N, fields: {CUSTNAME: row.C}}
  - name: c
    entity: CUSTOMERS
    source: s
    fields: {CUSTNAME: row.C}
    subforms:
      - {name: NOTES, fields: {NOTE: row.N}}
      - {name: TAGS, fields: {NOTE: row.N}}
`)
	assertDiags(t, withoutMatchHint(p.CheckMetadata(md, odata.StandardVersion)), []string{
		`plan.yaml:14:9: sub-form "TAGS" of step "c" does not write the key field TAG of TAGS; map it in fields`,
	})
}
