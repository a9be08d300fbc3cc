package sandbox_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// docs/service.md, Versions: every version-gated behaviour, on both sides of
// its threshold.
func TestSpec9VersionGates(t *testing.T) {
	t.Parallel()
	type check func(t *testing.T, c *tc) bool
	seedOrder := func(c *tc) {
		c.must(201, "POST", "/CUSTOMERS", map[string]any{"CUSTNAME": "C1", "CUSTDES": "x"})
		c.must(201, "POST", "/LOGPART", map[string]any{"PARTNAME": "P1", "PARTDES": "y"})
		c.must(201, "POST", "/ORDERS", map[string]any{"ORDNAME": "O1", "CUSTNAME": "C1"})
	}
	tests := []struct {
		feature       string
		before, after string
		// probe reports whether the feature is there.
		probe check
	}{
		{"17.2 writes", "17.1", "17.2", func(t *testing.T, c *tc) bool {
			r := c.do("POST", "/CUSTOMERS", map[string]any{"CUSTNAME": "C1", "CUSTDES": "x"})
			return r.status == 201
		}},
		{"18.1 $expand", "18.0", "18.1", func(t *testing.T, c *tc) bool {
			return c.do("GET", "/CUSTOMERS?$expand=GENCUSTNOTES_SUBFORM", nil).status == 200
		}},
		{"18.2 language code", "18.1", "18.2", func(t *testing.T, c *tc) bool {
			return c.do("GET", strings.Replace(c.base, "tabula.ini", "tabula.ini,2", 1)+"/CUSTOMERS", nil).status == 200
		}},
		{"19.1 $batch", "19.0", "19.1", func(t *testing.T, c *tc) bool {
			r := c.do("POST", "/$batch", map[string]any{"requests": []any{map[string]any{"id": "1", "method": "GET", "url": "CUSTOMERS"}}})
			return r.status == 200
		}},
		{"19.1 personal access tokens", "19.0", "19.1", func(t *testing.T, c *tc) bool {
			req, _ := http.NewRequest("GET", c.base+"/CUSTOMERS", nil)
			req.SetBasicAuth("demo-pat", "PAT")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		}},
		{"20.0 text sub-forms without brackets", "19.1", "20.0", func(t *testing.T, c *tc) bool {
			seedOrder(c)
			plain := c.do("POST", "/ORDERS('O1')/ORDERSTEXT_SUBFORM", map[string]any{"TEXT": "<p>a</p>"}).status
			brackets := c.do("POST", "/ORDERS('O1')/[ORDERSTEXT_SUBFORM]", map[string]any{"TEXT": "<p>a</p>"}).status
			if (plain == 200) == (brackets == 200) {
				t.Errorf("plain %d, brackets %d: exactly one form works", plain, brackets)
			}
			return plain == 200
		}},
		{"20.0 APPEND", "19.1", "20.0", func(t *testing.T, c *tc) bool {
			seedOrder(c)
			nav := "/ORDERS('O1')/ORDERSTEXT_SUBFORM"
			if c.do("GET", nav, nil).status != 200 {
				nav = "/ORDERS('O1')/[ORDERSTEXT_SUBFORM]"
			}
			c.must(200, "POST", nav, map[string]any{"TEXT": "a"})
			c.must(200, "POST", nav, map[string]any{"TEXT": "b", "APPEND": true})
			return c.sb.Snapshot()["ORDERS"][0]["ORDERSTEXT_SUBFORM"].(map[string]any)["TEXT"] == "ab"
		}},
		{"21.0 attachments as data URIs", "20.1", "21.0", func(t *testing.T, c *tc) bool {
			seedOrder(c)
			a := c.must(201, "POST", "/ORDERS('O1')/EXTFILES_SUBFORM", map[string]any{"EXTFILENAME": "data:application/pdf;base64,aGk="}).json(t)
			return strings.HasPrefix(a["EXTFILENAME"].(string), "data:")
		}},
		{"21.1 parent and child answered together", "21.0", "21.1", func(t *testing.T, c *tc) bool {
			seedOrder(c)
			o := c.must(201, "POST", "/ORDERS", map[string]any{"CUSTNAME": "C1", "ORDERITEMS_SUBFORM": []any{map[string]any{"PARTNAME": "P1", "TQUANT": 1}}}).json(t)
			_, ok := o["ORDERITEMS_SUBFORM"]
			return ok
		}},
		{"22.0 GetSystemVersion", "21.1", "22.0", func(t *testing.T, c *tc) bool {
			r := c.do("GET", "/GetSystemVersion()", nil)
			if r.status == 200 {
				v, err := odata.ParseVersion(r.json(t)["value"].(string))
				if err != nil || !v.AtLeast(22, 0) {
					t.Errorf("version value %s: %v", r.body, err)
				}
			}
			return r.status == 200 && c.do("GET", "/GetPriorityVersion()", nil).status == 200
		}},
		{"22.0 ClearEntityMetadata", "21.1", "22.0", func(t *testing.T, c *tc) bool {
			return c.do("POST", "/ClearEntityMetadata", map[string]any{"Entity": "ORDERS"}).status == 204
		}},
		{"22.0 SUFFIX on write", "21.1", "22.0", func(t *testing.T, c *tc) bool {
			seedOrder(c)
			return c.do("POST", "/ORDERS('O1')/EXTFILES_SUBFORM", map[string]any{"EXTFILENAME": "data:application/pdf;base64,aGk=", "SUFFIX": ".pdf"}).status == 201
		}},
		{"22.0 decimal point only", "21.1", "22.0", func(t *testing.T, c *tc) bool {
			r := c.do("POST", "/LOGPART", map[string]any{"PARTNAME": "P9", "PARTDES": "x", "PRICE": "12,5"})
			if r.status == 201 && r.json(t)["PRICE"] != 12.5 {
				t.Errorf("comma decimal stored as %v", r.json(t)["PRICE"])
			}
			return r.status == 400
		}},
		{"22.1 JSON batch answers", "22.0", "22.1", func(t *testing.T, c *tc) bool {
			format, _ := c.batch("json", []odata.BatchRequest{{ID: "1", Method: "GET", URL: "CUSTOMERS"}})
			return format == "json"
		}},
		{"23.0 screen errors in JSON (sandbox's choice)", "22.1", "23.0", func(t *testing.T, c *tc) bool {
			r := c.must(400, "POST", "/FAMILY_LOG", map[string]any{"FAMILYNAME": "F", "FAMILYDESC": "d", "DEBITFLAG": "Z"})
			e := odata.ParseError(r.status, r.header, r.body)
			if !odata.IsScreenError(e) || e.Entity != "FAMILY_LOG" || len(e.Messages) != 1 || !strings.Contains(e.Messages[0], "DEBITFLAG") {
				t.Errorf("the client cannot read the screen error %s: %+v", r.body, e)
			}
			return strings.HasPrefix(r.header.Get("Content-Type"), "application/json")
		}},
		{"25.0 GetMetadataFor", "24.1", "25.0", func(t *testing.T, c *tc) bool {
			c.must(200, "GET", "/LOGPART?$top=1", nil)
			return c.do("GET", "/GetMetadataFor(entity='LOGPART')", nil).status == 200
		}},
		{"25.1 Mandatory annotation", "25.0", "25.1", func(t *testing.T, c *tc) bool {
			return strings.Contains(c.must(200, "GET", "/$metadata", nil).String(), ".Mandatory")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.feature, func(t *testing.T) {
			t.Parallel()
			if tt.probe(t, start(t, sandbox.Options{SystemVersion: tt.before})) {
				t.Errorf("present at %s", tt.before)
			}
			if !tt.probe(t, start(t, sandbox.Options{SystemVersion: tt.after})) {
				t.Errorf("absent at %s", tt.after)
			}
		})
	}
}

// docs/service.md, Metadata: the metadata document, read back by the client's
// parser.
func TestSpec2_2Metadata(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	r := c.must(200, "GET", "/$metadata", nil)
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/xml") {
		t.Errorf("content type %q", r.header.Get("Content-Type"))
	}
	m, err := odata.ParseMetadata(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("the served $metadata does not parse: %v", err)
	}
	want := sandbox.DemoMetadata()
	for _, set := range want.Sets {
		if m.EntitySet(set.Name) == nil {
			t.Errorf("set %s missing", set.Name)
		}
	}
	checks := []struct {
		typ, prop string
		maxLen    int
		mandatory bool
		computed  bool
	}{
		{"CUSTOMERS", "CUSTNAME", 16, true, false},
		{"ABILITIES", "ABILITYCODE", 3, true, false},
		{"ABILITIES", "ABILITYDES", 32, true, false},
		{"FAMILY_LOG", "FAMILY", 0, false, true},
		{"ORDERS", "ORD", 0, false, true},
		{"ORDERITEMS_SUBFORM", "TQUANT", 0, true, false},
		{"AINVOICES", "DEBIT", 1, true, false},
	}
	for _, ck := range checks {
		typ := m.Type(ck.typ)
		if typ == nil {
			t.Errorf("type %s missing", ck.typ)
			continue
		}
		p := typ.Property(ck.prop)
		if p == nil || p.MaxLength != ck.maxLen || p.Mandatory != ck.mandatory || p.Computed != ck.computed {
			t.Errorf("%s.%s: %+v", ck.typ, ck.prop, p)
		}
	}
	if k := m.Type("AINVOICES").Key; strings.Join(k, ",") != "IVNUM,IVTYPE,DEBIT" {
		t.Errorf("AINVOICES key %v", k)
	}
	if n := m.Type("CUSTOMERS").Navigation("SHIPTO2_SUBFORM"); n == nil || n.Collection {
		t.Errorf("SHIPTO2_SUBFORM %+v", n)
	}
	if n := m.Type("CUSTOMERS").Navigation("GENCUSTNOTES_SUBFORM"); n == nil || !n.Collection {
		t.Errorf("GENCUSTNOTES_SUBFORM %+v", n)
	}
	if !strings.Contains(r.String(), `Term="Service.OData.Description"`) {
		t.Error("no Description annotations")
	}
}

// docs/service.md, Queries: the functions.
func TestSpec4_1Functions(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	if v := c.must(200, "GET", "/GetODataVersion()", nil).json(t)["value"]; v != "4.0" {
		t.Errorf("OData version %v", v)
	}
	if v := c.must(200, "GET", "/GetSystemVersion()", nil).json(t)["value"]; !strings.HasPrefix(v.(string), "25.1-") {
		t.Errorf("system version %v", v)
	}
	// GetMetadataFor: top-level only, and prepared by a GET.
	r := c.must(400, "GET", "/GetMetadataFor(entity='ORDERS')", nil)
	if !strings.Contains(r.String(), "ORDERS?$top=1") {
		t.Errorf("not prepared: %s", r)
	}
	c.must(200, "GET", "/ORDERS?$top=1", nil)
	r = c.must(200, "GET", "/GetMetadataFor(entity='ORDERS')", nil)
	typ, err := odata.ParseEntityType(bytes.NewReader(r.body))
	if err != nil || typ.Name != "ORDERS" || typ.Property("CUSTNAME") == nil || !typ.Property("CUSTNAME").Mandatory {
		t.Errorf("fragment: %v %+v\n%s", err, typ, r.body)
	}
	c.must(400, "GET", "/GetMetadataFor(entity='ORDERITEMS_SUBFORM')", nil)
	c.must(404, "GET", "/GetMetadataFor(entity='NOPE')", nil)
	c.must(400, "GET", "/GetMetadataFor(ORDERS)", nil)
	// ClearEntityMetadata: one entity, or all.
	c.must(204, "POST", "/ClearEntityMetadata", map[string]any{"Entity": "ORDERS"})
	c.must(400, "GET", "/GetMetadataFor(entity='ORDERS')", nil)
	c.must(200, "GET", "/ORDERS?$top=1", nil)
	c.must(200, "GET", "/CUSTOMERS?$top=1", nil)
	c.must(204, "POST", "/ClearEntityMetadata", nil)
	c.must(400, "GET", "/GetMetadataFor(entity='CUSTOMERS')", nil)
	c.must(400, "POST", "/ClearEntityMetadata", map[string]any{"Entity": "ORDERITEMS_SUBFORM"})
	c.must(405, "GET", "/ClearEntityMetadata", nil)
}

// A schema loaded from a real installation's $metadata gets generic rules.
func TestLoadedMetadataGenericRules(t *testing.T) {
	t.Parallel()
	m, err := odata.ParseMetadata(strings.NewReader(`<?xml version="1.0" encoding="utf-8"?>
<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0"><edmx:DataServices>
<Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="Priority.OData">
<EntityType Name="WAREHOUSES"><Key><PropertyRef Name="WARHSNAME"/></Key>
<Property Name="WARHSNAME" Type="Edm.String" MaxLength="4" Nullable="false"/>
<Property Name="WARHSDES" Type="Edm.String" MaxLength="16"><Annotation Term="Priority.OData.Mandatory" Bool="true"/></Property>
<Property Name="CAPACITY" Type="Edm.Decimal"/>
</EntityType>
<EntityContainer Name="DefaultContainer"><EntitySet Name="WAREHOUSES" EntityType="Priority.OData.WAREHOUSES"/></EntityContainer>
</Schema></edmx:DataServices></edmx:Edmx>`))
	if err != nil {
		t.Fatal(err)
	}
	c := start(t, sandbox.Options{Metadata: m})
	c.must(201, "POST", "/WAREHOUSES", map[string]any{"WARHSNAME": "Main", "WARHSDES": "Main store", "CAPACITY": 12.5})
	c.must(400, "POST", "/WAREHOUSES", map[string]any{"WARHSNAME": "Other", "WARHSDES": "x"})
	c.must(400, "POST", "/WAREHOUSES", map[string]any{"WARHSNAME": "W2"})
	c.must(400, "POST", "/WAREHOUSES", map[string]any{"WARHSNAME": "W2", "WARHSDES": "x", "CAPACITY": "big"})
	c.must(409, "POST", "/WAREHOUSES", map[string]any{"WARHSNAME": "Main", "WARHSDES": "again"})
	if snap := c.sb.Snapshot()["WAREHOUSES"]; len(snap) != 1 || snap[0]["CAPACITY"] != 12.5 {
		t.Errorf("snapshot %v", snap)
	}
	if !strings.Contains(c.must(200, "GET", "/$metadata", nil).String(), `Namespace="Priority.OData"`) {
		t.Error("the loaded namespace is not served")
	}
}
