package odata

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/migrate-tool/migrate/internal/golden"
)

// sameMetadata reports whether a and b declare the same: reflect.DeepEqual
// of their declarations, without the look-up tables, which are pointers
// DeepEqual compares as such (and would read while a look-up of another
// goroutine publishes them).
func sameMetadata(a, b *Metadata) bool {
	if a == nil || b == nil {
		return a == b
	}
	if n := reflect.TypeFor[Metadata]().NumField(); n != 5 {
		panic(fmt.Sprintf("Metadata has %d fields: sameMetadata compares 4 and its look-up tables", n))
	}
	if a.Namespace != b.Namespace || a.Container != b.Container || len(a.Types) != len(b.Types) || len(a.Sets) != len(b.Sets) {
		return false
	}
	for i := range a.Types {
		if !sameType(a.Types[i], b.Types[i]) {
			return false
		}
	}
	for i := range a.Sets {
		if a.Sets[i].Name != b.Sets[i].Name || !sameType(a.Sets[i].Type, b.Sets[i].Type) {
			return false
		}
	}
	return true
}

// sameType is sameMetadata of two entity types.
func sameType(a, b *EntityType) bool {
	if n := reflect.TypeFor[EntityType]().NumField(); n != 6 {
		panic(fmt.Sprintf("EntityType has %d fields: sameType compares 5 and its look-up tables", n))
	}
	if a == nil || b == nil {
		return a == b
	}
	type declared struct {
		Name, Description string
		Key               []string
		Properties        []*Property
		Navigations       []*NavigationProperty
	}
	return reflect.DeepEqual(declared{a.Name, a.Description, a.Key, a.Properties, a.Navigations},
		declared{b.Name, b.Description, b.Key, b.Properties, b.Navigations})
}

// dumpType renders a type in a stable text form for golden files.
func dumpType(b *strings.Builder, t *EntityType) {
	fmt.Fprintf(b, "type %s key=%v desc=%q\n", t.Name, t.Key, t.Description)
	for _, p := range t.Properties {
		fmt.Fprintf(b, "  prop %s %s max=%d nullable=%v mandatory=%v computed=%v desc=%q\n",
			p.Name, p.Type, p.MaxLength, p.Nullable, p.Mandatory, p.Computed, p.Description)
	}
	for _, n := range t.Navigations {
		fmt.Fprintf(b, "  nav %s -> %s collection=%v contains=%v\n", n.Name, n.Type, n.Collection, n.ContainsTarget)
	}
}

func dumpMetadata(m *Metadata) string {
	var b strings.Builder
	fmt.Fprintf(&b, "namespace %s container %s\n", m.Namespace, m.Container)
	for _, t := range m.Types {
		dumpType(&b, t)
	}
	for _, s := range m.Sets {
		fmt.Fprintf(&b, "set %s : %s\n", s.Name, s.Type.Name)
	}
	return b.String()
}

func TestParseMetadataGolden(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"priority_inline", "mycompany_blocks"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("testdata", "metadata", name+".xml"))
			if err != nil {
				t.Fatal(err)
			}
			m, err := ParseMetadata(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "metadata", name+".golden"), []byte(dumpMetadata(m)))

			// Round trip: what we write, we read back equal.
			var out bytes.Buffer
			if err := m.WriteXML(&out); err != nil {
				t.Fatal(err)
			}
			m2, err := ParseMetadata(&out)
			if err != nil {
				t.Fatalf("re-parse: %v\n%s", err, out.String())
			}
			if !sameMetadata(m, m2) {
				t.Errorf("round trip differs:\n%s\nvs\n%s", dumpMetadata(m), dumpMetadata(m2))
			}
		})
	}
}

// loadMetadata parses the $metadata document at path.
func loadMetadata(t *testing.T, path string) *Metadata {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseMetadata(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseMetadataLookups(t *testing.T) {
	t.Parallel()
	m := loadMetadata(t, "testdata/metadata/mycompany_blocks.xml")
	if m.Namespace != "MyCompany.Ns" {
		t.Errorf("namespace %q", m.Namespace)
	}
	c := m.EntitySet("CUSTOMERS")
	if c == nil || c.Type != m.Type("CUSTOMERS") {
		t.Fatalf("EntitySet(CUSTOMERS) = %v", c)
	}
	ct := c.Type
	if p := ct.Property("CUSTDES"); p == nil || p.Description != "לקוח & שם" || !p.Mandatory {
		t.Errorf("CUSTDES = %+v", p)
	}
	if p := ct.Property("CUST"); p == nil || !p.Computed {
		t.Errorf("CUST not computed via alias C: %+v", p)
	}
	if n := ct.Navigation("SHIPTO2_SUBFORM"); n == nil || n.Collection || !n.ContainsTarget || n.Type != "SHIPTO2_SUBFORM" {
		t.Errorf("SHIPTO2_SUBFORM = %+v", n)
	}
	if n := ct.Navigation("GENCUSTNOTES_SUBFORM"); n == nil || !n.Collection {
		t.Errorf("GENCUSTNOTES_SUBFORM = %+v", n)
	}
	if p := m.Type("ABILITIES").Property("ABILITY"); !p.Computed {
		t.Errorf("ABILITIES.ABILITY should be computed (auto-unique)")
	}
	if d := m.Type("ABILITIES").Property("ABILITYDES").Description; d != "Description" {
		t.Errorf("qualified annotation leaked: %q", d)
	}
	if got := m.SetNames(); !reflect.DeepEqual(got, []string{"ABILITIES", "CUSTOMERS"}) {
		t.Errorf("SetNames = %v", got)
	}
	if got := ct.PropertyNames(); !reflect.DeepEqual(got, []string{"CUSTNAME", "CUSTDES", "CUST"}) {
		t.Errorf("PropertyNames = %v", got)
	}
	if got := ct.NavigationNames(); !reflect.DeepEqual(got, []string{"GENCUSTNOTES_SUBFORM", "SHIPTO2_SUBFORM"}) {
		t.Errorf("NavigationNames = %v", got)
	}
	if !ct.IsKey("CUSTNAME") || ct.IsKey("CUSTDES") {
		t.Errorf("IsKey wrong")
	}
	if m.Type("NOPE") != nil || m.EntitySet("NOPE") != nil || ct.Property("NOPE") != nil || ct.Navigation("NOPE") != nil {
		t.Errorf("unknown names must give nil")
	}
}

func TestParseMetadataErrors(t *testing.T) {
	t.Parallel()
	const head = `<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0"><edmx:DataServices><Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="N">`
	const tail = `</Schema></edmx:DataServices></edmx:Edmx>`
	tests := []struct {
		name, doc, want string
	}{
		{"empty", "", "empty document"},
		{"not xml", "{json}", "line 1"},
		{"wrong root", "<html><body/></html>", "root element is not edmx:Edmx"},
		{"no schema", `<edmx:Edmx xmlns:edmx="x"><edmx:DataServices/></edmx:Edmx>`, "no edmx:DataServices/Schema"},
		{"no namespace", `<Edmx><DataServices><Schema/></DataServices></Edmx>`, "no Namespace"},
		{"bad maxlength", head + `<EntityType Name="T"><Property Name="A" Type="Edm.String" MaxLength="x"/></EntityType>` + tail, `entity type T, property A: MaxLength "x"`},
		{"bad nullable", head + `<EntityType Name="T"><Property Name="A" Type="Edm.String" Nullable="maybe"/></EntityType>` + tail, `Nullable "maybe"`},
		{"no type", head + `<EntityType Name="T"><Property Name="A"/></EntityType>` + tail, "property A: no Type"},
		{"key not declared", head + `<EntityType Name="T"><Key><PropertyRef Name="B"/></Key><Property Name="A" Type="Edm.String"/></EntityType>` + tail, "key property B is not declared"},
		{"dup type", head + `<EntityType Name="T"/><EntityType Name="T"/>` + tail, "entity type T: declared twice"},
		{"dup prop", head + `<EntityType Name="T"><Property Name="A" Type="Edm.String"/><Property Name="A" Type="Edm.String"/></EntityType>` + tail, "property A declared twice"},
		{"unknown set type", head + `<EntityContainer Name="C"><EntitySet Name="S" EntityType="N.X"/></EntityContainer>` + tail, `entity set S: entity type "N.X" is not declared`},
		{"bad bool", head + `<EntityType Name="T"><Property Name="A" Type="Edm.String"><Annotation Term="N.Mandatory" Bool="yes"/></Property></EntityType>` + tail, `Bool "yes"`},
		{"unclosed", head + `<EntityType Name="T">`, "line 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseMetadata(strings.NewReader(tc.doc))
			var me *MetadataError
			if !errors.As(err, &me) || !errors.Is(err, ErrBadMetadata) {
				t.Fatalf("err = %v, want a *MetadataError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseEntityTypeGolden(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"fragment_bare", "fragment_wrapped"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("testdata", "metadata", name+".xml"))
			if err != nil {
				t.Fatal(err)
			}
			et, err := ParseEntityType(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			dumpType(&b, et)
			golden.Check(t, filepath.Join("testdata", "metadata", name+".golden"), []byte(b.String()))

			var out bytes.Buffer
			if err := et.WriteXML(&out, "Some.Ns"); err != nil {
				t.Fatal(err)
			}
			et2, err := ParseEntityType(&out)
			if err != nil {
				t.Fatalf("re-parse: %v\n%s", err, out.String())
			}
			if !sameType(et, et2) {
				var b2 strings.Builder
				dumpType(&b2, et2)
				t.Errorf("round trip differs:\n%s\nvs\n%s", b.String(), b2.String())
			}
		})
	}
}

func TestParseEntityTypeErrors(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"", "<Schema/>", "<EntityType Name='T'>", `<EntityType Name="T"><Property Name="A" Type="Edm.String" MaxLength="-1"/></EntityType>`} {
		if _, err := ParseEntityType(strings.NewReader(doc)); !errors.Is(err, ErrBadMetadata) {
			t.Errorf("ParseEntityType(%q) err = %v, want ErrBadMetadata", doc, err)
		}
	}
}

// demoModel builds a model by hand, as the sandbox does.
func demoModel() *Metadata {
	orders := &EntityType{
		Name: "ORDERS", Description: `Orders "quoted" & <tagged>`, Key: []string{"ORDNAME"},
		Properties: []*Property{
			{Name: "ORDNAME", Type: EdmString, MaxLength: 16, Description: "Order", Mandatory: true},
			{Name: "CUSTNAME", Type: EdmString, MaxLength: 16, Nullable: true, Mandatory: true},
			{Name: "ORD", Type: EdmInt64, Nullable: true, Computed: true},
			{Name: "PRICE", Type: EdmDecimal, Nullable: true, Description: "line1\nline2\ttab"},
			{Name: "CURDATE", Type: EdmDateTimeOffset, Nullable: true},
		},
		Navigations: []*NavigationProperty{
			{Name: "ORDERITEMS_SUBFORM", Type: "ORDERITEMS_SUBFORM", Collection: true, ContainsTarget: true},
			{Name: "ORDERSTEXT_SUBFORM", Type: "ORDERSTEXT_SUBFORM", ContainsTarget: true},
		},
	}
	items := &EntityType{
		Name: "ORDERITEMS_SUBFORM", Key: []string{"KLINE"},
		Properties: []*Property{{Name: "KLINE", Type: EdmInt64}, {Name: "PARTNAME", Type: EdmString, MaxLength: 15, Nullable: true}},
	}
	text := &EntityType{Name: "ORDERSTEXT_SUBFORM", Properties: []*Property{
		{Name: "TEXT", Type: EdmString, Nullable: true}, {Name: "APPEND", Type: EdmBoolean, Nullable: true}, {Name: "SIGNATURE", Type: EdmBoolean, Nullable: true},
	}}
	inv := &EntityType{Name: "AINVOICES", Key: []string{"IVNUM", "IVTYPE", "DEBIT"}, Properties: []*Property{
		{Name: "IVNUM", Type: EdmString, MaxLength: 16}, {Name: "IVTYPE", Type: EdmString, MaxLength: 1}, {Name: "DEBIT", Type: EdmString, MaxLength: 1},
	}}
	m := &Metadata{Namespace: "Priority.OData", Container: "DefaultContainer",
		Types: []*EntityType{orders, items, text, inv},
		Sets:  []*EntitySet{{Name: "ORDERS", Type: orders}, {Name: "AINVOICES", Type: inv}},
	}
	m.Reindex()
	return m
}

func TestWriteXMLGoldenAndRoundTrip(t *testing.T) {
	t.Parallel()
	m := demoModel()
	var out bytes.Buffer
	if err := m.WriteXML(&out); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/metadata/written.xml", out.Bytes())
	for _, want := range []string{
		`<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">`,
		`<edmx:Include Namespace="Org.OData.Core.V1" Alias="Core"/>`,
		`<Annotation Term="Priority.OData.Mandatory" Bool="true"/>`,
		`<Annotation Term="Core.Computed" Bool="true"/>`,
		`Type="Collection(Priority.OData.ORDERITEMS_SUBFORM)" ContainsTarget="true"`,
		`<EntityContainer Name="DefaultContainer">`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("written document lacks %s", want)
		}
	}
	m2, err := ParseMetadata(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !sameMetadata(m, m2) {
		t.Errorf("parse(write(m)) != m:\n%s\nvs\n%s", dumpMetadata(m), dumpMetadata(m2))
	}

	var frag bytes.Buffer
	if err := m.Type("ORDERS").WriteXML(&frag, m.Namespace); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/metadata/written_fragment.xml", frag.Bytes())
	et, err := ParseEntityType(&frag)
	if err != nil {
		t.Fatal(err)
	}
	if !sameType(et, m.Type("ORDERS")) {
		t.Errorf("fragment round trip differs")
	}
}

func TestWriteXMLNoComputedNoReference(t *testing.T) {
	t.Parallel()
	m := &Metadata{Namespace: "A.B", Types: []*EntityType{{Name: "T", Properties: []*Property{{Name: "X", Type: EdmString, Nullable: true}}}}}
	m.Sets = []*EntitySet{{Name: "T", Type: m.Types[0]}}
	var out bytes.Buffer
	if err := m.WriteXML(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "edmx:Reference") {
		t.Errorf("reference written without need:\n%s", out.String())
	}
	m2, err := ParseMetadata(&out)
	if err != nil || m2.Container != "DefaultContainer" || m2.EntitySet("T") == nil {
		t.Errorf("re-parse = %v, %v", m2, err)
	}
}

// TestRealMetadataAnnotations reads what real installations' documents
// carry (docs/servers.md, Metadata): the Priority.OData namespace,
// navigation types without the _SUBFORM suffix, Precision/Scale,
// Core.Permissions Read, AutoUnique and DateType Date.
func TestRealMetadataAnnotations(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "metadata", "priority_real.xml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseMetadata(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if m.Namespace != "Priority.OData" {
		t.Errorf("namespace %q", m.Namespace)
	}
	type want struct {
		computed, autoUnique, readOnly, dateOnly bool
		precision, scale                         int
		hasScale                                 bool
	}
	tests := []struct {
		typ, field string
		want       want
	}{
		{"ABILITIES", "ABILITY", want{computed: true, autoUnique: true}},
		{"ABILITIES", "ABILITYCODE", want{}},
		{"ORDERS", "ORD", want{computed: true, autoUnique: true}},
		{"ORDERS", "CDES", want{readOnly: true}},    // element form, Core alias
		{"ORDERS", "CURDATE", want{dateOnly: true}}, // String attribute
		{"ORDERS", "UDATE", want{}},                 // a moment
		{"ORDERS", "DISPRICE", want{precision: 16, scale: 2, hasScale: true}},
		{"ORDERS", "QPRICE", want{precision: 18}},                              // Scale="variable": no limit
		{"ORDERITEMS", "PDES", want{readOnly: true}},                           // attribute form, full namespace
		{"ORDERITEMS", "PRICE", want{precision: 16, scale: 2, hasScale: true}}, // Read Write: writable
		{"ORDERITEMS", "TQUANT", want{precision: 16, scale: 3, hasScale: true}},
		{"ORDERITEMS", "DUEDATE", want{dateOnly: true}}, // String element
		{"ORDERITEMS", "KLINE", want{}},
	}
	for _, tc := range tests {
		typ := m.Type(tc.typ)
		if typ == nil {
			t.Fatalf("no type %s", tc.typ)
		}
		p := typ.Property(tc.field)
		if p == nil {
			t.Fatalf("no field %s.%s", tc.typ, tc.field)
		}
		got := want{p.Computed, p.AutoUnique, p.ReadOnly, p.DateOnly, p.Precision, p.Scale, p.HasScale}
		if got != tc.want {
			t.Errorf("%s.%s = %+v, want %+v", tc.typ, tc.field, got, tc.want)
		}
		if p.Writable() != !(tc.want.computed || tc.want.readOnly) {
			t.Errorf("%s.%s Writable() = %v", tc.typ, tc.field, p.Writable())
		}
	}
	// A sub-form's type is what its navigation names, suffix or not.
	nav := m.Type("ABILITIES").Navigation("ABILITYVALUES_SUBFORM")
	if nav == nil || nav.Type != "ABILITYVALUES" || !nav.Collection || m.Type(nav.Type) == nil {
		t.Errorf("ABILITYVALUES_SUBFORM = %+v", nav)
	}
	if m.EntitySet("ABILITIES") == nil || m.EntitySet("ORDERS") == nil || len(m.Sets) != 2 {
		t.Errorf("sets %v", m.SetNames())
	}

	// What we write, we read back equal: the annotations survive.
	var out bytes.Buffer
	if err := m.WriteXML(&out); err != nil {
		t.Fatal(err)
	}
	written := out.String()
	m2, err := ParseMetadata(&out)
	if err != nil {
		t.Fatalf("re-parse: %v\n%s", err, written)
	}
	if !sameMetadata(m, m2) {
		t.Errorf("round trip differs:\n%s\nvs\n%s", dumpMetadata(m), dumpMetadata(m2))
	}
	for _, s := range []string{`Precision="16" Scale="2"`, `Term="Priority.OData.AutoUnique"`, `Term="Priority.OData.DateType" String="Date"`, `EnumMember="Core.Permission/Read"`} {
		if !strings.Contains(written, s) {
			t.Errorf("written document lacks %s", s)
		}
	}
}

func TestMetadataFacetErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ attrs, want string }{
		{`Precision="x"`, `entity type T, property X: Precision "x" is not a non-negative integer`},
		{`Precision="4" Scale="5"`, `entity type T, property X: Scale "5" is not an integer from 0 to the Precision`},
		{`Scale="-1"`, `entity type T, property X: Scale "-1" is not an integer from 0 to the Precision`},
		{`Scale="floating"`, ``},
	}
	for _, tc := range tests {
		doc := `<edmx:Edmx xmlns:edmx="e"><edmx:DataServices><Schema Namespace="N"><EntityType Name="T"><Property Name="X" Type="Edm.Decimal" ` + tc.attrs + `/></EntityType></Schema></edmx:DataServices></edmx:Edmx>`
		_, err := ParseMetadata(strings.NewReader(doc))
		got := ""
		if err != nil {
			got = strings.TrimPrefix(err.Error(), "metadata: ")
			if !errors.Is(err, ErrBadMetadata) {
				t.Errorf("%s: not ErrBadMetadata", tc.attrs)
			}
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.attrs, got, tc.want)
		}
	}
}

// TestAutoUniqueNeedsAnAnnotation: no field is auto-unique by its name
// alone; the document says so (AutoUnique or Core.Computed).
func TestAutoUniqueNeedsAnAnnotation(t *testing.T) {
	t.Parallel()
	doc := `<edmx:Edmx xmlns:edmx="e"><edmx:DataServices><Schema Namespace="N"><EntityType Name="ORDERS"><Property Name="ORD" Type="Edm.Int64"/></EntityType></Schema></edmx:DataServices></edmx:Edmx>`
	m, err := ParseMetadata(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if m.Type("ORDERS").Property("ORD").Computed {
		t.Errorf("ORDERS.ORD computed without an annotation")
	}
}

func BenchmarkParseMetadata(b *testing.B) {
	data, err := os.ReadFile("testdata/metadata/priority_inline.xml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseMetadata(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseEntityTypeNamed(t *testing.T) {
	t.Parallel()
	doc := `<Schema Namespace="N"><EntityType Name="ORDERITEMS_SUBFORM"><Property Name="K" Type="Edm.Int64"/></EntityType>` +
		`<EntityType Name="ORDERS"><Property Name="ORDNAME" Type="Edm.String"/></EntityType>` +
		`<Annotations Target="N.ORDERS/ORDNAME"><Annotation Term="N.Mandatory" Bool="true"/></Annotations></Schema>`
	et, err := ParseEntityTypeNamed(strings.NewReader(doc), "ORDERS")
	if err != nil || et.Name != "ORDERS" || !et.Property("ORDNAME").Mandatory {
		t.Fatalf("named = %+v, %v", et, err)
	}
	et, err = ParseEntityType(strings.NewReader(doc))
	if err != nil || et.Name != "ORDERITEMS_SUBFORM" {
		t.Fatalf("first = %+v, %v", et, err)
	}
	// Never another type in place of the one asked for (docs/servers.md,
	// Metadata: a cold entity's GetMetadataFor answers another entity's
	// type).
	et, err = ParseEntityTypeNamed(strings.NewReader(doc), "MISSING")
	if !errors.Is(err, ErrBadMetadata) || et != nil || !strings.Contains(err.Error(), "no EntityType MISSING, only ORDERITEMS_SUBFORM, ORDERS") {
		t.Fatalf("missing name = %+v, %v", et, err)
	}
}

// docs/service.md, Text sub-forms: a text sub-form takes APPEND and SIGNATURE
// whether or not the document declares them; real installations often declare
// TEXT alone.
func TestTextSubformsTakeFlags(t *testing.T) {
	t.Parallel()
	doc := `<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0"><edmx:DataServices>
<Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="MyCompany.Ns">
<EntityType Name="ORDERS"><Key><PropertyRef Name="ORDNAME"/></Key>
  <Property Name="ORDNAME" Type="Edm.String" MaxLength="16" Nullable="false"/>
  <NavigationProperty Name="ORDERSTEXT_SUBFORM" Type="MyCompany.Ns.ORDERSTEXT_SUBFORM" ContainsTarget="true"/>
  <NavigationProperty Name="PARTTEXT_SUBFORM" Type="MyCompany.Ns.PARTTEXT_SUBFORM" ContainsTarget="true"/>
  <NavigationProperty Name="SHIPTO2_SUBFORM" Type="MyCompany.Ns.SHIPTO2_SUBFORM" ContainsTarget="true"/>
  <NavigationProperty Name="NOTES_SUBFORM" Type="Collection(MyCompany.Ns.NOTES_SUBFORM)" ContainsTarget="true"/>
</EntityType>
<EntityType Name="ORDERSTEXT_SUBFORM"><Property Name="TEXT" Type="Edm.String"/></EntityType>
<EntityType Name="PARTTEXT_SUBFORM"><Property Name="TEXT" Type="Edm.String"/><Property Name="APPEND" Type="Edm.Boolean"/></EntityType>
<EntityType Name="SHIPTO2_SUBFORM"><Property Name="ADDRESS" Type="Edm.String"/></EntityType>
<EntityType Name="NOTES_SUBFORM"><Key><PropertyRef Name="LINE"/></Key><Property Name="LINE" Type="Edm.Int64"/><Property Name="TEXT" Type="Edm.String"/></EntityType>
<EntityContainer Name="DefaultContainer"><EntitySet Name="ORDERS" EntityType="MyCompany.Ns.ORDERS"/></EntityContainer>
</Schema></edmx:DataServices></edmx:Edmx>`
	m, err := ParseMetadata(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typ  string
		want []string
	}{
		{"ORDERSTEXT_SUBFORM", []string{"TEXT", "APPEND", "SIGNATURE"}},
		{"PARTTEXT_SUBFORM", []string{"TEXT", "APPEND", "SIGNATURE"}},
		{"SHIPTO2_SUBFORM", []string{"ADDRESS"}},    // no TEXT: not a text sub-form
		{"NOTES_SUBFORM", []string{"LINE", "TEXT"}}, // lines, not a text sub-form
	} {
		typ := m.Type(tc.typ)
		if got := typ.PropertyNames(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s fields = %v, want %v", tc.typ, got, tc.want)
		}
		for _, f := range tc.want[1:] {
			if p := typ.Property(f); tc.typ != "NOTES_SUBFORM" && tc.typ != "SHIPTO2_SUBFORM" && (p == nil || p.Type != EdmBoolean) {
				t.Errorf("%s.%s = %+v, want Edm.Boolean", tc.typ, f, p)
			}
		}
	}
}

// AutoUnique wins over a Core.Computed false, in whichever order they come.
func TestAutoUniqueStaysComputed(t *testing.T) {
	t.Parallel()
	for _, annos := range []string{
		`<Annotation Term="N.AutoUnique"/><Annotation Term="Core.Computed" Bool="false"/>`,
		`<Annotation Term="Core.Computed" Bool="false"/><Annotation Term="N.AutoUnique"/>`,
	} {
		doc := `<edmx:Edmx xmlns:edmx="e"><edmx:DataServices><Schema Namespace="N"><EntityType Name="T"><Property Name="X" Type="Edm.Int64">` + annos + `</Property></EntityType></Schema></edmx:DataServices></edmx:Edmx>`
		m, err := ParseMetadata(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if p := m.Type("T").Property("X"); !p.AutoUnique || !p.Computed {
			t.Errorf("%s: %+v", annos, p)
		}
	}
}

// ReplaceType puts an annotated type in place of $metadata's: the sets of
// that type and the look-ups then give the new one; a type of another
// name changes nothing.
func TestReplaceType(t *testing.T) {
	t.Parallel()
	m := loadMetadata(t, "testdata/metadata/mycompany_blocks.xml")
	doc := `<Schema Namespace="N"><EntityType Name="CUSTOMERS"><Property Name="CUSTNAME" Type="Edm.String"/></EntityType>` +
		`<Annotations Target="N.CUSTOMERS/CUSTNAME"><Annotation Term="N.Mandatory" Bool="true"/></Annotations></Schema>`
	annotated, err := ParseEntityTypeNamed(strings.NewReader(doc), "CUSTOMERS")
	if err != nil {
		t.Fatal(err)
	}
	types := len(m.Types)
	m.ReplaceType(annotated)
	if got := m.Type("CUSTOMERS"); got != annotated {
		t.Errorf("Type(CUSTOMERS) = %p, want the annotated %p", got, annotated)
	}
	if s := m.EntitySet("CUSTOMERS"); s == nil || s.Type != annotated || !s.Type.Property("CUSTNAME").Mandatory {
		t.Errorf("EntitySet(CUSTOMERS) = %+v, want the annotated type", s)
	}
	if len(m.Types) != types {
		t.Errorf("%d types after the replace, want %d", len(m.Types), types)
	}
	other := &EntityType{Name: "NOSUCHTYPE"}
	m.ReplaceType(other)
	m.ReplaceType(nil)
	if m.Type("NOSUCHTYPE") != nil || len(m.Types) != types {
		t.Errorf("a type of no known name was added")
	}
}

// TestLookupsAtOnce: goroutines that look up at once in metadata built by
// hand, before anything indexed it, each find every type, set, field and
// sub-form (the tables are published whole), as the engine's concurrent
// batches and comparisons do. Before, a look-up could meet a table
// another goroutine had made and not yet filled, and find a field
// missing: a Decimal of Scale 2 was then compared as untyped text.
func TestLookupsAtOnce(t *testing.T) {
	t.Parallel()
	for round := range 50 {
		lines := &EntityType{Name: "LINES", Key: []string{"KLINE"}, Navigations: []*NavigationProperty{{Name: "TEXTS", Type: "TEXTS"}}}
		for i := range 40 {
			lines.Properties = append(lines.Properties, &Property{Name: fmt.Sprintf("F%02d", i), Type: EdmDecimal})
		}
		m := &Metadata{Types: []*EntityType{lines}, Sets: []*EntitySet{{Name: "LINES", Type: lines}}}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for i := range 40 {
					name := fmt.Sprintf("F%02d", i)
					if p := lines.Property(name); p == nil || p.Name != name {
						t.Errorf("round %d: Property(%s) = %v", round, name, p)
					}
				}
				if lines.Navigation("TEXTS") == nil || m.Type("LINES") != lines || m.EntitySet("LINES") == nil {
					t.Errorf("round %d: a sub-form, type or set not found", round)
				}
			})
		}
		wg.Wait()
	}
}
