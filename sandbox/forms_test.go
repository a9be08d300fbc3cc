package sandbox_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
)

// docs/service.md, Text sub-forms: HTML text sub-forms with APPEND and
// SIGNATURE.
func TestSpec2_9TextSubform(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	c.seed()
	c.must(201, "POST", "/ORDERS", map[string]any{"ORDNAME": "O1", "CUSTNAME": "C100"})
	empty := c.must(200, "GET", "/ORDERS('O1')/ORDERSTEXT_SUBFORM", nil).json(t)
	if v, ok := empty["TEXT"]; !ok || v != nil {
		t.Errorf("empty text: %v", empty)
	}
	r := c.must(200, "POST", "/ORDERS('O1')/ORDERSTEXT_SUBFORM", map[string]any{"TEXT": "<p>first</p>", "APPEND": false, "SIGNATURE": false}).json(t)
	if !strings.HasSuffix(r["TEXT"].(string), "<p>first</p>") || r["APPEND"] != nil || r["SIGNATURE"] != nil {
		t.Errorf("answer %v", r)
	}
	c.must(200, "PATCH", "/ORDERS('O1')/ORDERSTEXT_SUBFORM", map[string]any{"TEXT": "<p>second</p>", "APPEND": true, "SIGNATURE": true})
	got := c.must(200, "GET", "/ORDERS('O1')/ORDERSTEXT_SUBFORM", nil).json(t)
	text := got["TEXT"].(string)
	if !strings.HasPrefix(text, "<style>") || !strings.HasSuffix(text, "<p>first</p><p>second</p><p>demo</p>") || got["APPEND"] != nil || got["SIGNATURE"] != nil {
		t.Errorf("read: %v", got)
	}
	c.must(200, "POST", "/ORDERS('O1')/ORDERSTEXT_SUBFORM", map[string]any{"TEXT": "<p>new</p>"})
	snap := c.sb.Snapshot()["ORDERS"][0]["ORDERSTEXT_SUBFORM"].(map[string]any)
	if snap["TEXT"] != "<p>new</p>" {
		t.Errorf("APPEND absent replaces: %v", snap)
	}
	// docs/service.md, Text sub-forms and Versions: from 20.0 brackets are
	// refused.
	c.must(400, "GET", "/ORDERS('O1')/[ORDERSTEXT_SUBFORM]", nil)
	c.must(400, "POST", "/ORDERS('O1')/ORDERSTEXT_SUBFORM", map[string]any{"TEXT": "x", "APPEND": "yes"})
}

// docs/service.md, Text sub-forms: a text-only form: plain text, SIGNATURE
// always false.
func TestSpec2_9TextOnlySubform(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	c.seed()
	c.must(200, "POST", "/CUSTOMERS('C100')/CUSTOMERSTEXT_SUBFORM", map[string]any{"TEXT": "line one", "SIGNATURE": true})
	c.must(200, "PATCH", "/CUSTOMERS('C100')/CUSTOMERSTEXT_SUBFORM", map[string]any{"TEXT": "line two", "APPEND": true})
	got := c.must(200, "GET", "/CUSTOMERS('C100')/CUSTOMERSTEXT_SUBFORM", nil).json(t)
	if got["TEXT"] != "line one\nline two" {
		t.Errorf("text-only read: %q", got["TEXT"])
	}
	r := c.must(400, "POST", "/CUSTOMERS('C100')/CUSTOMERSTEXT_SUBFORM", map[string]any{"TEXT": "<b>bold</b>"})
	if !strings.Contains(r.String(), "plain text") {
		t.Errorf("HTML into a text-only form: %s", r)
	}
	// The single-object ship-to sub-form.
	c.must(200, "POST", "/CUSTOMERS('C100')/SHIPTO2_SUBFORM", map[string]any{"ADDRESS": "1 Main St", "ZIP": "12345"})
	c.must(200, "PATCH", "/CUSTOMERS('C100')/SHIPTO2_SUBFORM", map[string]any{"STATE": "Haifa"})
	ship := c.must(200, "GET", "/CUSTOMERS('C100')/SHIPTO2_SUBFORM", nil).json(t)
	if ship["ADDRESS"] != "1 Main St" || ship["STATE"] != "Haifa" {
		t.Errorf("ship-to %v", ship)
	}
	if s := c.sb.Snapshot()["CUSTOMERS"][0]["SHIPTO2_SUBFORM"].(map[string]any); s["ZIP"] != "12345" {
		t.Errorf("snapshot single sub-form %v", s)
	}
	c.must(201, "POST", "/CUSTOMERS('C100')/GENCUSTNOTES_SUBFORM", map[string]any{"SUBJECT": "call back"})
	c.must(200, "GET", "/CUSTOMERS('C100')/GENCUSTNOTES_SUBFORM(1)", nil)
}

// docs/service.md, Attachments: attachments as data URIs, SUFFIX with a
// period on write and without on read, FILESIZE computed.
func TestSpec2_8Attachments(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{Now: newClock().Now})
	c.seed()
	c.must(201, "POST", "/ORDERS", map[string]any{"ORDNAME": "O1", "CUSTNAME": "C100"})
	data := "data:application/pdf;base64," + base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 hello"))
	a := c.must(201, "POST", "/ORDERS('O1')/EXTFILES_SUBFORM", map[string]any{"EXTFILEDES": "scan", "EXTFILENAME": data}).json(t)
	if a["EXTFILENUM"] != float64(1) || a["SUFFIX"] != "pdf" || a["FILESIZE"] != float64(14) || a["EXTFILENAME"] != data ||
		a["USERLOGIN"] != "demo" || a["CURDATE"] != "2026-03-14T09:30:00+00:00" {
		t.Errorf("attachment %v", a)
	}
	for _, k := range []string{"NOSEND", "STATUS", "EI_COND", "UDATE", "LUSERLOGIN"} {
		if _, ok := a[k]; !ok {
			t.Errorf("field %s missing", k)
		}
	}
	b := c.must(201, "POST", "/ORDERS('O1')/EXTFILES_SUBFORM", map[string]any{"EXTFILENAME": "data:text/plain;base64,aGk=", "SUFFIX": ".log"}).json(t)
	if b["EXTFILENUM"] != float64(2) || b["SUFFIX"] != "log" || b["FILESIZE"] != float64(2) {
		t.Errorf("second attachment %v", b)
	}
	c.must(400, "POST", "/ORDERS('O1')/EXTFILES_SUBFORM", map[string]any{"EXTFILENAME": "data:text/plain;base64,aGk=", "SUFFIX": "log"})
	c.must(400, "POST", "/ORDERS('O1')/EXTFILES_SUBFORM", map[string]any{"EXTFILENAME": "C:\\files\\a.pdf"})
	c.must(400, "POST", "/ORDERS('O1')/EXTFILES_SUBFORM", map[string]any{"EXTFILENAME": "data:text/plain;base64,!!!"})
	c.must(400, "POST", "/ORDERS('O1')/EXTFILES_SUBFORM", map[string]any{"EXTFILEDES": "no file"})
	c.must(204, "DELETE", "/ORDERS('O1')/EXTFILES_SUBFORM(1)", nil)
	if n := len(c.sb.Snapshot()["ORDERS"][0]["EXTFILES_SUBFORM"].([]map[string]any)); n != 1 {
		t.Errorf("%d attachments left", n)
	}
}

// docs/service.md, Writes, at the third level: a line's text sub-form; DELETE
// of single sub-forms; methods a target does not take.
func TestSpec4_4EveryLevel(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	c.seed()
	c.must(201, "POST", "/ORDERS", map[string]any{"ORDNAME": "O1", "CUSTNAME": "C100",
		"ORDERITEMS_SUBFORM": []any{map[string]any{"PARTNAME": "P1", "TQUANT": 1}}})
	line := "/ORDERS('O1')/ORDERITEMS_SUBFORM(1)"
	c.must(200, "POST", line+"/ORDERITEMSTEXT_SUBFORM", map[string]any{"TEXT": "<p>handle with care</p>"})
	got := c.must(200, "GET", line+"/ORDERITEMSTEXT_SUBFORM", nil).json(t)
	if !strings.HasSuffix(got["TEXT"].(string), "<p>handle with care</p>") {
		t.Errorf("line text %v", got)
	}
	snap := c.sb.Snapshot()["ORDERS"][0]["ORDERITEMS_SUBFORM"].([]map[string]any)[0]
	if txt := snap["ORDERITEMSTEXT_SUBFORM"].(map[string]any)["TEXT"]; txt != "<p>handle with care</p>" {
		t.Errorf("snapshot of the line's text: %v", snap)
	}
	c.must(204, "DELETE", line+"/ORDERITEMSTEXT_SUBFORM", nil)
	c.must(404, "DELETE", line+"/ORDERITEMSTEXT_SUBFORM", nil)
	c.must(200, "POST", "/CUSTOMERS('C100')/SHIPTO2_SUBFORM", map[string]any{"ADDRESS": "x"})
	c.must(204, "DELETE", "/CUSTOMERS('C100')/SHIPTO2_SUBFORM", nil)
	c.must(404, "GET", "/CUSTOMERS('C100')/SHIPTO2_SUBFORM", nil)
	// PATCH of a parent with lines: the keyed line changes, the other is added.
	c.must(200, "PATCH", "/ORDERS('O1')", map[string]any{"DETAILS": "d",
		"ORDERITEMS_SUBFORM": []any{map[string]any{"KLINE": 1, "TQUANT": 4}, map[string]any{"PARTNAME": "P2", "TQUANT": 1}}})
	lines := c.sb.Snapshot()["ORDERS"][0]["ORDERITEMS_SUBFORM"].([]map[string]any)
	if len(lines) != 2 || lines[0]["TQUANT"] != float64(4) || lines[1]["PDES"] != "Nut M6" {
		t.Errorf("lines after PATCH %v", lines)
	}
	c.must(405, "DELETE", "/ORDERS('O1')/ORDERITEMS_SUBFORM", nil)
	c.must(405, "DELETE", "/ORDERS", nil)
	c.must(405, "PUT", "/ORDERS('O1')", map[string]any{"DETAILS": "x"})
	c.must(405, "PATCH", "/ORDERS", map[string]any{"DETAILS": "x"})
	c.must(400, "POST", "/ORDERS", "[1,2]")
	c.must(400, "POST", "/ORDERS", `{"CUSTNAME":"C100"} {}`)
	c.must(400, "GET", "/ORDERS/ORDERITEMS_SUBFORM", nil)
	c.must(404, "GET", "/ORDERS('O1')/NOPE", nil)
	c.must(400, "GET", "/ORDERS('O1')/ORDERITEMS_SUBFORM('x')", nil)
	c.must(400, "GET", "/ORDERS('O1')/ORDERSTEXT_SUBFORM(1)", nil)
}
