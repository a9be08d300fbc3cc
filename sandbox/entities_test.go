package sandbox_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// docs/service.md, Service root: the service root lists the entity sets.
func TestSpec2_1ServiceRoot(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	m := c.must(200, "GET", "/", nil).json(t)
	if !strings.HasSuffix(m["@odata.context"].(string), "/$metadata") {
		t.Errorf("context %v", m["@odata.context"])
	}
	names := map[string]bool{}
	for _, v := range m["value"].([]any) {
		e := v.(map[string]any)
		if e["kind"] != "EntitySet" || e["url"] != e["name"] {
			t.Errorf("entry %v", e)
		}
		names[e["name"].(string)] = true
	}
	for _, want := range []string{"CUSTOMERS", "LOGPART", "FAMILY_LOG", "ORDERS", "AINVOICES", "ABILITIES"} {
		if !names[want] {
			t.Errorf("service root lacks %s", want)
		}
	}
}

// docs/service.md, Keys, Queries and Writes: create and read by simple key;
// the auto-unique key is assigned and read-only.
func TestSpec2_5KeysAndAutoUnique(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	r := c.must(201, "POST", "/FAMILY_LOG", map[string]any{"FAMILYNAME": "F1", "FAMILYDESC": "Fasteners", "DEBITFLAG": "Y"})
	got := r.json(t)
	if got["FAMILY"] != float64(1) || got["EFAMILYDES"] != nil {
		t.Errorf("created %v: want FAMILY 1 and unset fields null", got)
	}
	if _, ok := got["EFAMILYDES"]; !ok {
		t.Errorf("unset field missing from the answer: %v", got)
	}
	if loc := r.header.Get("Location"); loc != c.base+"/FAMILY_LOG('F1')" {
		t.Errorf("Location %q", loc)
	}
	one := c.must(200, "GET", "/FAMILY_LOG('F1')", nil).json(t)
	if one["FAMILYDESC"] != "Fasteners" || !strings.HasSuffix(one["@odata.context"].(string), "$metadata#FAMILY_LOG/$entity") &&
		!strings.HasSuffix(one["@odata.context"].(string), "$metadata#FAMILY_LOG('F1')/$entity") {
		t.Errorf("read %v", one)
	}
	// docs/service.md, Keys and Errors: the auto-unique key cannot address,
	// nor be written.
	e := c.must(400, "PATCH", "/FAMILY_LOG(1)", map[string]any{"FAMILYDESC": "x"})
	if !strings.Contains(e.String(), "FAMILY is a read-only field") {
		t.Errorf("PATCH by auto-unique key: %s", e)
	}
	c.must(400, "PATCH", "/FAMILY_LOG(FAMILY=1)", map[string]any{"FAMILYDESC": "x"})
	e = c.must(400, "POST", "/FAMILY_LOG", map[string]any{"FAMILYNAME": "F2", "FAMILYDESC": "x", "FAMILY": 7})
	if !strings.Contains(e.String(), "FAMILY is a read-only field") {
		t.Errorf("writing FAMILY: %s", e)
	}
	c.must(404, "GET", "/FAMILY_LOG('NOPE')", nil)
	c.must(400, "GET", "/FAMILY_LOG('F1'", nil)
	c.must(404, "GET", "/FAMILY_LOGS", nil)
}

// docs/service.md, Keys: composite keys, and IVNUM numbered by the server.
func TestSpec2_5CompositeKey(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{Now: newClock().Now})
	c.seed()
	r := c.must(201, "POST", "/AINVOICES", map[string]any{"CUSTNAME": "C100", "IVTYPE": "A", "DEBIT": "D",
		"AINVOICEITEMS_SUBFORM": []any{map[string]any{"PARTNAME": "P1", "TQUANT": 3}}})
	inv := r.json(t)
	if inv["IVNUM"] != "IV26000001" || inv["CDES"] != "Acme Ltd" {
		t.Errorf("invoice %v", inv)
	}
	path := "/AINVOICES(IVNUM='IV26000001',IVTYPE='A',DEBIT='D')"
	if loc := r.header.Get("Location"); loc != c.base+path[:0]+"/AINVOICES(IVNUM='IV26000001',IVTYPE='A',DEBIT='D')" {
		t.Errorf("Location %q", loc)
	}
	c.must(200, "GET", path, nil)
	c.must(200, "GET", "/AINVOICES(DEBIT='D',IVNUM='IV26000001',IVTYPE='A')", nil)
	lines := c.must(200, "GET", path+"/AINVOICEITEMS_SUBFORM", nil).json(t)["value"].([]any)
	if len(lines) != 1 || field(lines[0].(map[string]any), "PDES") != "Bolt M6" {
		t.Errorf("lines %v", lines)
	}
	c.must(400, "GET", "/AINVOICES('IV26000001')", nil)
	c.must(400, "GET", "/AINVOICES(IVNUM='IV26000001',IVTYPE='A')", nil)
	c.must(201, "POST", path+"/AINVOICEITEMS_SUBFORM", map[string]any{"PARTNAME": "P2", "TQUANT": 1})
	c.must(200, "PATCH", path+"/AINVOICEITEMS_SUBFORM(2)", map[string]any{"TQUANT": 5})
	c.must(204, "DELETE", path+"/AINVOICEITEMS_SUBFORM(1)", nil)
	snap := c.sb.Snapshot()["AINVOICES"]
	items := snap[0]["AINVOICEITEMS_SUBFORM"].([]map[string]any)
	if len(items) != 1 || items[0]["TQUANT"] != float64(5) || items[0]["KLINE"] != float64(2) {
		t.Errorf("snapshot %v", snap)
	}
	c.must(400, "POST", "/AINVOICES", map[string]any{"CUSTNAME": "C100", "IVTYPE": "A", "DEBIT": "X"})
	c.must(204, "DELETE", path, nil)
	if n := len(c.sb.Snapshot()["AINVOICES"]); n != 0 {
		t.Errorf("%d invoices after delete", n)
	}
}

// docs/service.md, Writes and Deep insert: deep insert, screen-filled fields,
// numbered keys, lines with increasing keys, navigation to sub-forms, PATCH
// and DELETE at every level.
func TestSpec4_2DeepInsertAndNavigation(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{Now: newClock().Now})
	c.seed()
	r := c.must(201, "POST", "/ORDERS", map[string]any{"CUSTNAME": "C100", "CURDATE": "2026-03-14T00:00:00+02:00",
		"ORDERITEMS_SUBFORM": []any{
			map[string]any{"PARTNAME": "P1", "TQUANT": 2, "PRICE": 1.5},
			map[string]any{"PARTNAME": "P2", "TQUANT": 10.25, "DUEDATE": "2026-04-01T00:00:00+02:00"},
		}})
	o := r.json(t)
	if o["ORDNAME"] != "SO26000001" || o["CDES"] != "Acme Ltd" || o["ORD"] != float64(1) {
		t.Errorf("order %v", o)
	}
	items, _ := o["ORDERITEMS_SUBFORM"].([]any)
	if len(items) != 2 || field(items[1].(map[string]any), "KLINE") != float64(2) || field(items[0].(map[string]any), "PDES") != "Bolt M6" {
		t.Errorf("21.1+: the answer includes the children: %v", o["ORDERITEMS_SUBFORM"])
	}
	line := c.must(200, "GET", "/ORDERS('SO26000001')/ORDERITEMS_SUBFORM(2)", nil).json(t)
	if line["TQUANT"] != 10.25 || line["PDES"] != "Nut M6" {
		t.Errorf("line %v", line)
	}
	c.must(201, "POST", "/ORDERS('SO26000001')/ORDERITEMS_SUBFORM", map[string]any{"PARTNAME": "P1", "TQUANT": 1})
	e := c.must(400, "POST", "/ORDERS('SO26000001')/ORDERITEMS_SUBFORM", map[string]any{"PARTNAME": "NOPE", "TQUANT": 1})
	if !strings.Contains(e.String(), `PARTNAME \"NOPE\" does not exist in LOGPART`) && !strings.Contains(e.String(), `PARTNAME "NOPE" does not exist in LOGPART`) {
		t.Errorf("unknown part: %s", e)
	}
	c.must(200, "PATCH", "/ORDERS('SO26000001')/ORDERITEMS_SUBFORM(3)", map[string]any{"PARTNAME": "P2"})
	c.must(204, "DELETE", "/ORDERS('SO26000001')/ORDERITEMS_SUBFORM(1)", nil)
	c.must(404, "GET", "/ORDERS('SO26000001')/ORDERITEMS_SUBFORM(1)", nil)
	c.must(200, "PATCH", "/ORDERS('SO26000001')", map[string]any{"DETAILS": "rush"})
	o = c.sb.Snapshot()["ORDERS"][0]
	lines := o["ORDERITEMS_SUBFORM"].([]map[string]any)
	if o["DETAILS"] != "rush" || len(lines) != 2 || lines[1]["PDES"] != "Nut M6" {
		t.Errorf("snapshot %v", o)
	}
	c.must(400, "PATCH", "/ORDERS('SO26000001')", map[string]any{"ORD": 5})
	// Numbering skips a number a document was keyed with by hand.
	c.must(201, "POST", "/ORDERS", map[string]any{"ORDNAME": "SO26000002", "CUSTNAME": "C100"})
	if o := c.must(201, "POST", "/ORDERS", map[string]any{"CUSTNAME": "C100"}).json(t); o["ORDNAME"] != "SO26000003" {
		t.Errorf("numbered %v, want SO26000003", o["ORDNAME"])
	}
	c.must(204, "DELETE", "/ORDERS('SO26000002')", nil)
	c.must(204, "DELETE", "/ORDERS('SO26000003')", nil)
	c.must(400, "POST", "/ORDERS", map[string]any{"CUSTNAME": "C999"})
	c.must(204, "DELETE", "/ORDERS('SO26000001')", nil)
	c.must(404, "GET", "/ORDERS('SO26000001')", nil)
}

// docs/service.md, Errors, and the business rules of a screen the sandbox
// keeps (docs/design.md, The sandbox): MaxLength, mandatory, DEBITFLAG,
// unique keys.
func TestSpec7ScreenErrors(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	tests := []struct {
		name   string
		set    string
		body   map[string]any
		status int
		text   string
	}{
		{"max length", "CUSTOMERS", map[string]any{"CUSTNAME": strings.Repeat("x", 17), "CUSTDES": "d"}, 400, "CUSTNAME: the value is longer than 16 characters."},
		{"mandatory missing", "CUSTOMERS", map[string]any{"CUSTNAME": "C1"}, 400, "CUSTDES: a value is required."},
		{"mandatory empty", "LOGPART", map[string]any{"PARTNAME": "P", "PARTDES": ""}, 400, "PARTDES: a value is required."},
		{"debitflag", "FAMILY_LOG", map[string]any{"FAMILYNAME": "F", "FAMILYDESC": "d", "DEBITFLAG": "X"}, 400, `DEBITFLAG: the value "X" is not allowed; use 'Y', 'N', blank.`},
		{"type", "LOGPART", map[string]any{"PARTNAME": "P", "PARTDES": "d", "PRICE": "cheap"}, 400, "PRICE: \"cheap\" is not a valid decimal number."},
		{"unknown field", "LOGPART", map[string]any{"PARTNAME": "P", "PARTDES": "d", "COLOUR": "red"}, 400, "COLOUR is not a field of LOGPART."},
		{"date without offset", "ORDERS", map[string]any{"CUSTNAME": "C", "CURDATE": "2026-01-01"}, 400, "CURDATE"},
		{"family must exist", "LOGPART", map[string]any{"PARTNAME": "P", "PARTDES": "d", "FAMILYNAME": "ZZ"}, 400, `FAMILYNAME "ZZ" does not exist in FAMILY_LOG.`},
		{"abilities", "ABILITIES", map[string]any{"ABILITYCODE": "ABCD", "ABILITYDES": "d"}, 400, "ABILITYCODE: the value is longer than 3 characters."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.do("POST", "/"+tt.set, tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r)
			}
			m := r.json(t)
			text := fmt.Sprint(field(m, "FORM", "InterfaceErrors", "text"))
			if field(m, "FORM", "@TYPE") != tt.set || !strings.HasPrefix(text, "Line 1- ") || !strings.Contains(text, tt.text) {
				t.Errorf("error body %s: want FORM of %s with %q", r, tt.set, tt.text)
			}
		})
	}
	c.must(201, "POST", "/CUSTOMERS", map[string]any{"CUSTNAME": "C1", "CUSTDES": "One"})
	r := c.must(409, "POST", "/CUSTOMERS", map[string]any{"CUSTNAME": "C1", "CUSTDES": "Again"})
	if !strings.Contains(r.String(), "already exists") {
		t.Errorf("409 body %s", r)
	}
	if c.sb.Snapshot()["CUSTOMERS"][0]["CUSTDES"] != "One" {
		t.Error("a refused POST changed the record")
	}
}

// docs/service.md, Errors: messages follow the language code; XML FORM before
// 23.0.
func TestSpec7ErrorLanguageAndXML(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{SystemVersion: "22.1"})
	he := strings.Replace(c.base, "tabula.ini", "tabula.ini,2", 1)
	r := c.must(400, "POST", he+"/FAMILY_LOG", map[string]any{"FAMILYNAME": "F1", "FAMILYDESC": "d", "DEBITFLAG": "Q"})
	body := r.String()
	if r.header.Get("Content-Type") != "application/xml" || !strings.Contains(body, `<FORM TYPE="FAMILY_LOG">`) ||
		!strings.Contains(body, "<FAMILY>0</FAMILY>") || !strings.Contains(body, "<InterfaceErrors><text>שורה 1- DEBITFLAG") ||
		!strings.Contains(body, "<FAMILYNAME>F1</FAMILYNAME>") {
		t.Errorf("Hebrew XML screen error:\n%s", body)
	}
	r = c.must(400, "POST", c.base+"/FAMILY_LOG", map[string]any{"FAMILYNAME": "F1", "FAMILYDESC": "d", "DEBITFLAG": "Q"})
	if !strings.Contains(r.String(), "<text>Line 1- DEBITFLAG") {
		t.Errorf("English XML screen error:\n%s", r)
	}
	// The client's parser reads what the sandbox sends.
	e := odata.ParseError(r.status, r.header, r.body)
	if !odata.IsScreenError(e) || e.Entity != "FAMILY_LOG" || e.Values["FAMILYNAME"] != "F1" || len(e.Messages) != 1 || !strings.Contains(e.Messages[0], "DEBITFLAG") {
		t.Errorf("client reading of the XML error: %+v", e)
	}
	r = c.must(404, "GET", he+"/FAMILY_LOG('NOPE')", nil)
	if !strings.Contains(r.String(), "אין רשומה") {
		t.Errorf("Hebrew 404: %s", r)
	}
	r = c.must(403, "POST", he+"/CURRENCIES", map[string]any{"CODE": "X"})
	if !strings.Contains(r.String(), "אינו פתוח לממשק") || !odata.IsForbidden(odata.ParseError(r.status, r.header, r.body)) {
		t.Errorf("Hebrew 403: %s", r)
	}
	c.must(201, "POST", c.base+"/CUSTOMERS", map[string]any{"CUSTNAME": "C1", "CUSTDES": "x"})
	r = c.must(409, "POST", c.base+"/CUSTOMERS", map[string]any{"CUSTNAME": "C1", "CUSTDES": "x"})
	if e := odata.ParseError(r.status, r.header, r.body); !odata.IsConflict(e) || len(e.Messages) != 1 {
		t.Errorf("client reading of the 409: %+v", e)
	}
	en := strings.Replace(c.base, "tabula.ini", "tabula.ini,1", 1)
	c.must(200, "GET", en+"/FAMILY_LOG", nil)
	c.must(404, "GET", strings.Replace(c.base, "tabula.ini", "tabula.ini,x", 1)+"/FAMILY_LOG", nil)
}

// Status 403: a screen not open to the API for writes.
func TestStatus403ScreenNotOpen(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	list := c.must(200, "GET", "/CURRENCIES", nil).json(t)["value"].([]any)
	if len(list) != 3 {
		t.Errorf("currencies %v", list)
	}
	r := c.must(403, "POST", "/CURRENCIES", map[string]any{"CODE": "GBP", "NAME": "Pound"})
	if !strings.Contains(r.String(), "not open to the API") {
		t.Errorf("403 body %s", r)
	}
	c.must(403, "DELETE", "/CURRENCIES('USD')", nil)
}

// docs/service.md, Queries: the query options, and the service's $filter/$skip.
func TestSpec4_1QueryOptions(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{RowCap: 4})
	for i := 1; i <= 6; i++ {
		c.must(201, "POST", "/LOGPART", map[string]any{"PARTNAME": fmt.Sprintf("P%d", i), "PARTDES": fmt.Sprintf("Part %d", i), "PRICE": float64(i) * 1.5})
	}
	names := func(q string) string {
		t.Helper()
		m := c.must(200, "GET", "/LOGPART?"+q, nil).json(t)
		var out []string
		for _, v := range m["value"].([]any) {
			out = append(out, v.(map[string]any)["PARTNAME"].(string))
		}
		return strings.Join(out, ",")
	}
	tests := []struct{ q, want string }{
		{"", "P1,P2,P3,P4"}, // row cap, no next link
		{"$top=2", "P1,P2"},
		{"$skip=4", "P5,P6"},
		{"$skip=1&$top=2", "P2,P3"},
		{"$filter=" + url.QueryEscape("PRICE gt 4.5"), "P4,P5,P6"},
		{"$filter=" + url.QueryEscape("PRICE ge 4.5 and PRICE le 6"), "P3,P4"},
		{"$filter=" + url.QueryEscape("PARTNAME eq 'P2' or (PARTNAME eq 'P5' and PRICE ne 1)"), "P2,P5"},
		{"$filter=" + url.QueryEscape("PARTNAME lt 'P3'"), "P1,P2"},
		{"$filter=" + url.QueryEscape("BARCODE eq null and PART gt 5"), "P6"},
		{"$orderby=" + url.QueryEscape("PRICE desc"), "P6,P5,P4,P3"},
		{"$orderby=" + url.QueryEscape("PRICE desc") + "&$top=1", "P6"},
		{"$orderby=" + url.QueryEscape("PART desc") + "&$select=PART,PARTNAME&$top=2", "P6,P5"},
		{"$orderby=" + url.QueryEscape("PRICE asc") + "&$skip=1&$top=2", "P2,P3"},
		{"$orderby=PARTNAME&$filter=" + url.QueryEscape("PRICE gt 4.5"), "P4,P5,P6"},
		{"$orderby=" + url.QueryEscape("BARCODE asc, PARTNAME desc") + "&$top=3", "P6,P5,P4"},
	}
	for _, tt := range tests {
		if got := names(tt.q); got != tt.want {
			t.Errorf("%s: got %s want %s", tt.q, got, tt.want)
		}
	}
	m := c.must(200, "GET", "/LOGPART?$select=PARTNAME,PRICE&$top=1", nil).json(t)
	row := m["value"].([]any)[0].(map[string]any)
	if len(row) != 2 || row["PRICE"] != 1.5 || !strings.HasSuffix(m["@odata.context"].(string), "#LOGPART(PARTNAME,PRICE)") {
		t.Errorf("$select: %v", m)
	}
	for _, bad := range []string{"$select=NOPE", "$top=-1", "$filter=PRICE+gt", "$filter=PRICE+in+(1,2)", "$orderby=PARTNAM", "$orderby=PRICE+down", "$orderby=PRICE+desc+x", "$filter=PRICE+gt+'x'"} {
		c.must(400, "GET", "/LOGPART?"+bad, nil)
	}
	c.must(201, "POST", "/CUSTOMERS", map[string]any{"CUSTNAME": "C1", "CUSTDES": "x"})
	c.must(201, "POST", "/ORDERS", map[string]any{"CUSTNAME": "C1", "CURDATE": "2026-03-14T00:00:00+02:00"})
	c.must(201, "POST", "/ORDERS", map[string]any{"CUSTNAME": "C1", "CURDATE": "2026-05-01T00:00:00+02:00"})
	m = c.must(200, "GET", "/ORDERS?$filter="+url.QueryEscape("CURDATE ge 2026-04-01"), nil).json(t)
	if v := m["value"].([]any); len(v) != 1 || v[0].(map[string]any)["ORDNAME"] != "SO26000002" && !strings.HasSuffix(v[0].(map[string]any)["ORDNAME"].(string), "000002") {
		t.Errorf("date filter: %v", m["value"])
	}
}

// docs/service.md, Payloads: $expand nested, and full metadata annotations.
func TestSpec2_6ExpandAndFullMetadata(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	c.seed()
	c.must(201, "POST", "/ORDERS", map[string]any{"ORDNAME": "O1", "CUSTNAME": "C100",
		"ORDERITEMS_SUBFORM": []any{map[string]any{"PARTNAME": "P1", "TQUANT": 1,
			"ORDERITEMSTEXT_SUBFORM": map[string]any{"TEXT": "<p>fragile</p>"}}}})
	m := c.must(200, "GET", "/ORDERS('O1')?$expand=ORDERITEMS_SUBFORM($expand=ORDERITEMSTEXT_SUBFORM;$select=KLINE,PARTNAME),ORDERSTEXT_SUBFORM", nil).json(t)
	items := m["ORDERITEMS_SUBFORM"].([]any)
	it := items[0].(map[string]any)
	if len(items) != 1 || it["PARTNAME"] != "P1" || it["TQUANT"] != nil || !strings.Contains(fmt.Sprint(field(it, "ORDERITEMSTEXT_SUBFORM", "TEXT")), "fragile") {
		t.Errorf("nested expand: %v", items)
	}
	if _, ok := m["ORDERITEMS_SUBFORM@odata.context"]; !ok {
		t.Errorf("no <nav>@odata.context: %v", m)
	}
	if _, ok := m["ORDERSTEXT_SUBFORM"]; !ok {
		t.Errorf("empty single sub-form missing: %v", m)
	}
	c.must(400, "GET", "/ORDERS('O1')?$expand=NOPE", nil)
	for _, get := range []func() resp{
		func() resp {
			return c.must(200, "GET", "/ORDERS('O1')?$format="+url.QueryEscape("application/json;odata.metadata=full"), nil)
		},
		func() resp {
			return c.must(200, "GET", "/ORDERS('O1')", nil, "Accept", "application/json;odata.metadata=full")
		},
	} {
		f := get().json(t)
		if f["@odata.type"] != "#Service.OData.ORDERS" || f["@odata.editLink"] != "ORDERS('O1')" ||
			f["@odata.id"] != c.base+"/ORDERS('O1')" || f["ORD@odata.type"] != "#Int64" ||
			f["ORDERITEMS_SUBFORM@odata.associationLink"] != c.base+"/ORDERS('O1')/ORDERITEMS_SUBFORM/$ref" ||
			f["ORDERITEMS_SUBFORM@odata.navigationLink"] != c.base+"/ORDERS('O1')/ORDERITEMS_SUBFORM" {
			t.Errorf("full metadata: %v", f)
		}
	}
	min := c.must(200, "GET", "/ORDERS('O1')", nil).json(t)
	if _, ok := min["@odata.type"]; ok {
		t.Errorf("minimal metadata carries @odata.type: %v", min)
	}
}

// Values survive the trip: quotes, control characters, Hebrew, quotes in
// keys and filters.
func TestSpec2_3ValuesRoundTrip(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	des := "Tab\there \"quoted\" back\\slash\nline \x01 שלום <b>&"
	c.must(201, "POST", "/CUSTOMERS", map[string]any{"CUSTNAME": "O'Brien", "CUSTDES": des})
	got := c.must(200, "GET", "/CUSTOMERS('O''Brien')", nil).json(t)
	if got["CUSTDES"] != des {
		t.Errorf("CUSTDES %q, want %q", got["CUSTDES"], des)
	}
	list := c.must(200, "GET", "/CUSTOMERS?$filter="+url.QueryEscape("CUSTNAME eq 'O''Brien'"), nil).json(t)["value"].([]any)
	if len(list) != 1 {
		t.Errorf("filter on a quoted key: %v", list)
	}
	c.must(400, "GET", "/CUSTOMERS?$filter="+url.QueryEscape("CUSTNAME eq 'open"), nil)
	c.must(201, "POST", "/LOGPART", `{"PARTNAME":"P/1","PARTDES":"slash","PRICE":12345678901234.5678}`)
	p := c.must(200, "GET", "/LOGPART('P%2F1')", nil).json(t)
	if p["PARTDES"] != "slash" {
		t.Errorf("key with a slash: %v", p)
	}
	r := c.must(200, "GET", "/LOGPART('P%2F1')?$select=PRICE", nil)
	if !strings.Contains(r.String(), `"PRICE":12345678901234.5678`) {
		t.Errorf("decimal digits lost: %s", r)
	}
}
