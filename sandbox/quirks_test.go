package sandbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// Each quirk behaves as docs/servers.md says real servers do, and only when
// switched on.

func TestQuirkNames(t *testing.T) {
	t.Parallel()
	all, err := sandbox.ParseQuirks("")
	if err != nil || len(all) != len(sandbox.QuirkNames()) {
		t.Fatalf("ParseQuirks(\"\") = %v, %v; want every quirk", all, err)
	}
	some, err := sandbox.ParseQuirks("cold-forms, json-errors")
	if err != nil || len(some) != 2 || !some[sandbox.QuirkColdForms] || !some[sandbox.QuirkJSONErrors] {
		t.Errorf("ParseQuirks(two) = %v, %v", some, err)
	}
	if _, err := sandbox.ParseQuirks("cold-forms,warm-forms"); err == nil || !strings.Contains(err.Error(), `quirk "warm-forms": unknown`) {
		t.Errorf("an unknown quirk: %v", err)
	}
	if _, err := sandbox.New(sandbox.Options{Quirks: map[string]bool{"nope": true}}); err == nil || !strings.Contains(err.Error(), `quirk "nope"`) {
		t.Errorf("New with an unknown quirk: %v", err)
	}
}

// Before 22.1 the vendor's example answers g1 as g1-r1 in a
// changesetresponse part, and a GET's part without Content-ID; from 22.1
// (JSON answers) and without the quirk, the ids are the requests'.
func TestQuirkMultipartIDs(t *testing.T) {
	t.Parallel()
	reqs := func(c *tc) []odata.BatchRequest {
		return []odata.BatchRequest{
			post("g1", "FAMILY_LOG", `{"FAMILYNAME":"F2","FAMILYDESC":"Nuts"}`),
			{ID: "g2", Method: "GET", URL: "FAMILY_LOG('F2')"},
			{ID: "g3", Method: "PATCH", URL: "LOGPART('P2')", Headers: map[string]string{"Content-Type": "application/json"}, Body: json.RawMessage(`{"BARCODE":"123"}`)},
		}
	}
	tests := []struct {
		version string
		quirk   bool
		want    string
	}{
		{"21.0", true, "g1-r1:201 :200 g3-r1:200"},
		{"21.0", false, "g1:201 g2:200 g3:200"},
		{"22.1", true, "g1:201 g2:200 g3:200"},
	}
	for _, tt := range tests {
		c := start(t, sandbox.Options{SystemVersion: tt.version, Quirks: quirkIf(tt.quirk, sandbox.QuirkMultipartIDs)})
		c.seed()
		_, rs := c.batch("json", reqs(c))
		if got := statuses(rs); got != tt.want {
			t.Errorf("%s quirk %v: %s, want %s", tt.version, tt.quirk, got, tt.want)
		}
		if tt.quirk && tt.version == "21.0" {
			// The write's answer is a changeset of its own.
			raw := c.must(200, "POST", "/$batch", jsonBatch(t, reqs(c)[1:2]), "Content-Type", "application/json")
			_, params, _ := mime.ParseMediaType(raw.header.Get("Content-Type"))
			if !strings.HasPrefix(raw.header.Get("Content-Type"), "multipart/mixed") || params["boundary"] == "" {
				t.Errorf("before 22.1 the answer is multipart: %s", raw.header.Get("Content-Type"))
			}
			if bytes.Contains(raw.body, []byte("Content-ID")) {
				t.Errorf("a GET's part has no Content-ID:\n%s", raw.body)
			}
			raw = c.must(200, "POST", "/$batch", jsonBatch(t, []odata.BatchRequest{post("w1", "FAMILY_LOG", `{"FAMILYNAME":"F3","FAMILYDESC":"x"}`)}), "Content-Type", "application/json")
			if !bytes.Contains(raw.body, []byte("Content-Type: multipart/mixed;boundary=changeset_")) || !bytes.Contains(raw.body, []byte("Content-ID: w1-r1")) {
				t.Errorf("a write's answer in a changeset as w1-r1:\n%s", raw.body)
			}
		}
	}
}

// Screen errors are JSON from 19.1 with the quirk (23.0 without), the
// parts of a message a list of texts.
func TestQuirkJSONErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		version string
		quirk   bool
		json    bool
	}{
		{"19.0", true, false},
		{"19.1", true, true},
		{"19.1", false, false},
		{"23.0", false, true},
		{"25.1", true, true},
	}
	for _, tt := range tests {
		c := start(t, sandbox.Options{SystemVersion: tt.version, Quirks: quirkIf(tt.quirk, sandbox.QuirkJSONErrors)})
		r := c.must(400, "POST", "/FAMILY_LOG", map[string]any{"FAMILYNAME": "F9", "FAMILYDESC": "x", "DEBITFLAG": "Q"})
		isJSON := strings.HasPrefix(r.header.Get("Content-Type"), "application/json")
		if isJSON != tt.json {
			t.Errorf("%s quirk %v: %s %s, want JSON %v", tt.version, tt.quirk, r.header.Get("Content-Type"), r, tt.json)
			continue
		}
		e := odata.ParseError(r.status, r.header, r.body)
		if e.Entity != "FAMILY_LOG" || !strings.Contains(e.Error(), `Line 1- DEBITFLAG: the value "Q" is not allowed; use`) {
			t.Errorf("%s quirk %v: read as %v", tt.version, tt.quirk, e)
		}
		if tt.quirk && tt.json {
			var doc struct {
				FORM struct {
					InterfaceErrors struct{ Text []string }
				}
			}
			if err := json.Unmarshal(r.body, &doc); err != nil || len(doc.FORM.InterfaceErrors.Text) != 2 {
				t.Errorf("%s: text is not a list of the message's parts: %v %s", tt.version, err, r)
			}
		}
	}
}

// The first request to a form since the start answers 404, whatever its
// method, and changes nothing; the second is served; each form is cold on
// its own.
func TestQuirkColdForms(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{Quirks: map[string]bool{sandbox.QuirkColdForms: true}})
	c.must(404, "GET", "/CUSTOMERS?$top=1", nil)
	c.must(200, "GET", "/CUSTOMERS?$top=1", nil)
	c.must(404, "POST", "/FAMILY_LOG", map[string]any{"FAMILYNAME": "F1", "FAMILYDESC": "Fasteners"})
	if fams := c.sb.Snapshot()["FAMILY_LOG"]; len(fams) != 0 {
		t.Errorf("a cold form's 404 to a POST stored %v", fams)
	}
	c.must(201, "POST", "/FAMILY_LOG", map[string]any{"FAMILYNAME": "F1", "FAMILYDESC": "Fasteners"})
	c.must(200, "GET", "/FAMILY_LOG('F1')", nil)
	c.must(404, "GET", "/LOGPART('P1')", nil)
	c.must(404, "GET", "/LOGPART('P1')", nil) // now it is the truth
	c.must(201, "POST", "/LOGPART", map[string]any{"PARTNAME": "P1", "PARTDES": "Bolt"})
	c.must(200, "GET", "/LOGPART('P1')", nil)
	// After a restart, a write that addresses a record of a cold set: 404,
	// and nothing done.
	state := sandbox.Options{Quirks: map[string]bool{sandbox.QuirkColdForms: true}, StatePath: filepath.Join(t.TempDir(), "state.json")}
	c = start(t, state)
	c.must(404, "GET", "/CUSTOMERS?$top=1", nil) // the warm-ups
	c.must(404, "GET", "/LOGPART?$top=1", nil)
	c.must(201, "POST", "/CUSTOMERS", map[string]any{"CUSTNAME": "C1", "CUSTDES": "Acme"})
	c.must(201, "POST", "/LOGPART", map[string]any{"PARTNAME": "P1", "PARTDES": "Bolt"})
	if err := c.sb.Close(); err != nil {
		t.Fatal(err)
	}
	c = start(t, state)
	c.must(404, "DELETE", "/CUSTOMERS('C1')", nil)
	c.must(404, "PATCH", "/LOGPART('P1')", map[string]any{"PARTDES": "Nut"})
	if parts, custs := c.sb.Snapshot()["LOGPART"], c.sb.Snapshot()["CUSTOMERS"]; len(custs) != 1 || parts[0]["PARTDES"] != "Bolt" {
		t.Errorf("a cold form's 404 changed something: %v %v", custs, parts)
	}
	c.must(204, "DELETE", "/CUSTOMERS('C1')", nil)
	c.must(200, "PATCH", "/LOGPART('P1')", map[string]any{"PARTDES": "Nut"})

	plain := start(t, sandbox.Options{})
	plain.must(200, "GET", "/CUSTOMERS?$top=1", nil)
}

// Texts read back normalised: a style block, a <p dir=rtl> wrapper, no
// whitespace before <br>; what is stored (and appended to) is the text.
func TestQuirkNormalisedTexts(t *testing.T) {
	t.Parallel()
	for _, quirk := range []bool{false, true} {
		c := start(t, sandbox.Options{Quirks: quirkIf(quirk, sandbox.QuirkNormalisedTexts)})
		c.seed()
		r := c.must(201, "POST", "/ORDERS", map[string]any{"CUSTNAME": "C100"})
		ord := r.json(t)["ORDNAME"].(string)
		c.must(200, "POST", "/ORDERS('"+ord+"')/ORDERSTEXT_SUBFORM", map[string]any{"TEXT": "Deliver the order. <br> There", "APPEND": true})
		got := c.must(200, "GET", "/ORDERS('"+ord+"')/ORDERSTEXT_SUBFORM", nil).json(t)["TEXT"].(string)
		want := "Deliver the order. <br> There"
		if quirk {
			want = `<p dir=rtl>Deliver the order.<br> There</p>`
		}
		if !strings.HasPrefix(got, "<style>") || !strings.HasSuffix(got, want) {
			t.Errorf("quirk %v: read back %q, want the style block and %q", quirk, got, want)
		}
		stored := c.sb.Snapshot()["ORDERS"][0]["ORDERSTEXT_SUBFORM"].(map[string]any)["TEXT"]
		if stored != "Deliver the order. <br> There" {
			t.Errorf("quirk %v: stored %q", quirk, stored)
		}
	}
}

// GetMetadataFor of an entity not read yet answers another entity's
// type; once the entity was read, its own.
func TestQuirkMetadataWrongType(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{Quirks: map[string]bool{sandbox.QuirkMetadataWrongType: true}})
	name := func(r resp) string {
		typ, err := odata.ParseEntityType(bytes.NewReader(r.body))
		if err != nil {
			t.Fatalf("%v\n%s", err, r)
		}
		return typ.Name
	}
	if got := name(c.must(200, "GET", "/GetMetadataFor(entity='ORDERS')", nil)); got == "ORDERS" {
		t.Errorf("cold: answered ORDERS, want another entity's type")
	}
	if _, err := odata.ParseEntityTypeNamed(bytes.NewReader(c.must(200, "GET", "/GetMetadataFor(entity='ORDERS')", nil).body), "ORDERS"); err == nil {
		t.Errorf("cold: the answer holds ORDERS")
	}
	c.must(200, "GET", "/ORDERS?$top=1", nil)
	if got := name(c.must(200, "GET", "/GetMetadataFor(entity='ORDERS')", nil)); got != "ORDERS" {
		t.Errorf("warm: answered %s, want ORDERS", got)
	}
}

// A $filter the server cannot apply (a field it does not know, a field the
// user may not read) is ignored silently under ignored-filters: 200 and
// every row; a 400, as the contract has it, without it. Hidden fields
// (field-level permissions) are missing from every read answer, quirk or not.
func TestQuirkIgnoredFilters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		quirk  bool
		path   string
		status int
		parts  string // PARTNAME of the rows answered
	}{
		{"unknown field, quirk", true, "/LOGPART?$filter=ZZZNOPE%20eq%20'x'", 200, "P1,P2"},
		{"unknown field, spec", false, "/LOGPART?$filter=ZZZNOPE%20eq%20'x'", 400, ""},
		{"hidden field, quirk", true, "/LOGPART?$filter=PARTDES%20eq%20'Nut%20M6'", 200, "P1,P2"},
		{"hidden field, spec", false, "/LOGPART?$filter=PARTDES%20eq%20'Nut%20M6'", 400, ""},
		{"hidden field in an and, quirk", true, "/LOGPART?$filter=PARTNAME%20eq%20'P2'%20and%20PARTDES%20eq%20'x'", 200, "P1,P2"},
		{"readable field, quirk", true, "/LOGPART?$filter=PARTNAME%20eq%20'P2'", 200, "P2"},
		{"hidden field in $select", true, "/LOGPART?$select=PARTDES", 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := start(t, sandbox.Options{HiddenFields: []string{"LOGPART.PARTDES"}, Quirks: quirkIf(tt.quirk, sandbox.QuirkIgnoredFilters)})
			c.seed()
			r := c.must(tt.status, "GET", tt.path, nil)
			if tt.status != 200 {
				return
			}
			var got []string
			for _, row := range r.json(t)["value"].([]any) {
				m := row.(map[string]any)
				if _, ok := m["PARTDES"]; ok {
					t.Errorf("a hidden field came back: %v", m)
				}
				if _, ok := m["BARCODE"]; !ok {
					t.Errorf("a readable field is missing: %v", m)
				}
				got = append(got, m["PARTNAME"].(string))
			}
			if strings.Join(got, ",") != tt.parts {
				t.Errorf("rows %v, want %s", got, tt.parts)
			}
		})
	}
	// One entity, and the store keeps what was written.
	c := start(t, sandbox.Options{HiddenFields: []string{"LOGPART.PARTDES"}})
	c.seed()
	if m := c.must(200, "GET", "/LOGPART('P2')", nil).json(t); m["PARTNAME"] != "P2" || m["PARTDES"] != nil {
		t.Errorf("LOGPART('P2') = %v, want it without PARTDES", m)
	}
	if parts := c.sb.Snapshot()["LOGPART"]; len(parts) != 2 || parts[1]["PARTDES"] != "Nut M6" {
		t.Errorf("the store lost a hidden field: %v", parts)
	}
	for _, bad := range []string{"LOGPART", "LOGPART.NOPE", "NOPE.PARTDES", "LOGPART.PARTNAME"} {
		if _, err := sandbox.New(sandbox.Options{HiddenFields: []string{bad}}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("HiddenFields %q: %v", bad, err)
		}
	}
}

// Under numbers-as-strings every answer that carries an entity gives its
// Int64 and Decimal values as JSON strings, as a server honouring
// IEEE754Compatible=true does: a GET, a $batch's GET, a write's echo and
// an expanded line. Without it they are numbers; the store holds numbers
// either way.
func TestQuirkNumbersAsStrings(t *testing.T) {
	t.Parallel()
	for _, quirk := range []bool{true, false} {
		c := start(t, sandbox.Options{Quirks: quirkIf(quirk, sandbox.QuirkNumbersAsStrings)})
		c.seed()
		echo := c.must(201, "POST", "/ORDERS", map[string]any{"CUSTNAME": "C100",
			"ORDERITEMS_SUBFORM": []any{map[string]any{"PARTNAME": "P1", "TQUANT": json.Number("2"), "PRICE": json.Number("500.5")}}}).json(t)
		ord, _ := echo["ORDNAME"].(string)
		got := c.must(200, "GET", "/ORDERS('"+ord+"')?$expand=ORDERITEMS_SUBFORM", nil).json(t)
		line := got["ORDERITEMS_SUBFORM"].([]any)[0].(map[string]any)
		_, rs := c.batch("json", []odata.BatchRequest{{ID: "1", Method: "GET", URL: "LOGPART('P1')"}})
		part, err := odata.DecodeEntity(rs[0].Body)
		if err != nil {
			t.Fatal(err)
		}
		values := []struct {
			what string
			v    any
		}{
			{"a GET's expanded Int64 key", line["KLINE"]},
			{"a GET's expanded Decimal", line["TQUANT"]},
			{"a $batch GET's Decimal", part["PRICE"]},
		}
		for _, v := range values {
			_, isString := v.v.(string)
			if isString != quirk {
				t.Errorf("quirk %v: %s is %#v", quirk, v.what, v.v)
			}
		}
		if quirk && (line["KLINE"] != "1" || line["TQUANT"] != "2" || part["PRICE"] != "1.25") {
			t.Errorf("the strings hold other digits: KLINE %#v TQUANT %#v PRICE %#v", line["KLINE"], line["TQUANT"], part["PRICE"])
		}
		if _, isString := got["CUSTNAME"].(string); !isString {
			t.Errorf("quirk %v: a String field is %#v", quirk, got["CUSTNAME"])
		}
		lines, _ := echo["ORDERITEMS_SUBFORM"].([]any)
		if len(lines) != 1 {
			t.Fatalf("a write's echo without its line: %v", echo)
		}
		if q, isString := lines[0].(map[string]any)["TQUANT"].(string); isString != quirk || quirk && q != "2" {
			t.Errorf("quirk %v: a write's echo gives TQUANT %#v", quirk, lines[0].(map[string]any)["TQUANT"])
		}
		if parts := c.sb.Snapshot()["LOGPART"]; len(parts) == 0 || fmt.Sprintf("%T", parts[0]["PRICE"]) == "string" {
			t.Errorf("the store holds a number as text: %v", parts)
		}
	}
}
