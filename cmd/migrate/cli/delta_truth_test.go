package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// TestOneTruthOfADelta is TestOneTruth's case of a delta load: the
// quickstart loaded, then its sources changed (a customer's name and a
// part's price changed, a customer and an order for it added, a customer
// deleted, an order's line's quantity changed, a line added to another
// order) and a changed customer's field changed on the server too. The
// dry run (`plan --delta --out`) writes the batches `apply --delta` sends,
// body for body, and counts its calls, sub-requests and API transactions;
// `diff --delta` counts its creates, updates and conflicts; what apply
// sends is exactly the new records' creates, a PATCH of the changed
// fields, a PATCH of the line's quantity and a POST of the new line;
// `apply --delta --overwrite` sends the conflict; a last `apply --delta`
// makes no call; verify then finds nothing, and undo leaves nothing of
// the load and its deltas.
func TestOneTruthOfADelta(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join("..", "..", "..", "examples", "plans")
	for _, f := range []string{"quickstart.yaml", "data/families.csv", "data/parts.csv", "data/customers.csv", "data/orders.csv"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb, rec, env, run := deltaTarget(t, dir)
	planPath, jpath := filepath.Join(dir, "quickstart.yaml"), filepath.Join(dir, "run.journal")
	if code, out := run("apply", planPath, "--journal", jpath); code != ExitOK {
		t.Fatalf("the load: exit %d\n%s", code, out)
	}
	edit := func(file, old, now string) {
		t.Helper()
		p := filepath.Join(dir, "data", file)
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), old) {
			t.Fatalf("%s has no %q (%v)", file, old, err)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, now, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("customers.csv", "Galil Engineering Ltd", "Galil Engineering 2026 Ltd")
	edit("customers.csv", "+972-8-6000002", "+972-8-6000099")
	edit("customers.csv", "C1004,Carmel Machines,+972-4-6000004,7 Port Ave Haifa\n", "")
	edit("customers.csv", "Code,Name,Phone,Address\n", "Code,Name,Phone,Address\nC1009,Golan Farms,+972-4-6000009,1 Ridge Rd Katzrin\n")
	edit("parts.csv", "b-101;Hex bolt M8x30;BOLT;7290000000024;0,52", "b-101;Hex bolt M8x30;BOLT;7290000000024;0,61")
	edit("orders.csv", "OrderNo,Customer,Date,Part,Qty,Price,Remarks\n", "OrderNo,Customer,Date,Part,Qty,Price,Remarks\n9,C1009,05/11/2026,B-100,10,0.35,\n")
	// Order 2's first line's quantity changes; order 4 gets a line more.
	edit("orders.csv", "2,C1002,04/11/2026,B-102,120,1.10,", "2,C1002,04/11/2026,B-102,130,1.10,Ring first")
	// Texts: order 1's is rewritten (replaced, not appended), order 2 gets
	// one (above), and order 3's changes in the source and on the server.
	for range 3 {
		edit("orders.csv", ",Deliver to gate 2", ",Deliver to gate 5")
	}
	edit("orders.csv", ",Call before delivery", ",Call before delivery and after")
	edit("orders.csv", "4,C1004,06/11/2026,T-401,1,24.50,", "4,C1004,06/11/2026,T-401,1,24.50,\n4,C1004,06/11/2026,B-100,7,0.35,")
	// Someone changes C1002's phone on the server: the delta's conflict.
	cl, err := odata.NewClient(odata.Config{BaseURL: env["MIGRATE_TARGET"], Auth: odata.BasicAuth{User: "demo", Password: "demo"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Patch(context.Background(), "CUSTOMERS('C1002')", []byte(`{"PHONE":"+972-8-1234567"}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := cl.Patch(context.Background(), "ORDERS('SO26000003')/ORDERSTEXT_SUBFORM", []byte(`{"TEXT":"Call the site manager","APPEND":false}`), nil); err != nil {
		t.Fatal(err)
	}
	// And someone made the part's new price there already: the server
	// holds what the source gives now, which is no conflict, and nothing
	// of it is sent.
	if err := cl.Patch(context.Background(), "LOGPART('B-101')", []byte(`{"PRICE":0.61}`), nil); err != nil {
		t.Fatal(err)
	}

	dr := deltaRuns{t: t, run: run, rec: rec, plan: planPath, journal: jpath}
	predict, apply := dr.predict, dr.apply

	// apply without --delta lists it and sends nothing.
	rec.mu.Lock()
	rec.on = true
	rec.mu.Unlock()
	code, out := run("apply", planPath, "--journal", jpath, "--json")
	rec.mu.Lock()
	rec.on = false
	listed := len(rec.bodies)
	rec.mu.Unlock()
	if code != ExitOK || listed > 0 || !strings.Contains(out, `"sent": false`) {
		t.Fatalf("apply over the changed sources: exit %d, %d batches written\n%s", code, listed, out)
	}
	// A listing reads nothing: it counts no conflict, for it looks for none.
	if strings.Contains(out, `"conflicts"`) {
		t.Errorf("the listing counts conflicts it did not look for:\n%s", out)
	}
	if _, out := run("apply", planPath, "--journal", jpath); !strings.Contains(out, "1 gone (listed: nothing read or sent;") || strings.Contains(out, "conflict") {
		t.Errorf("the listing's text:\n%s", out)
	}
	// The dry run says what apply --delta would do of the journal's records
	// (20: the quickstart skips an obsolete part).
	page := filepath.Join(dir, "delta.html")
	if _, out := run("plan", planPath, "--journal", jpath, "--delta", "--html", page); !strings.Contains(out, "apply --delta would go on from "+jpath+": of the 20 records it holds loaded, it sends only what changed in the sources since.") ||
		!strings.Contains(out, "2 conflicts (apply --delta would send the new records and lines and patch the changed fields; not the conflicts, nor the 1 change the server holds already)") || strings.Contains(out, "left out") ||
		!strings.Contains(out, "apply would load 7 of 9 records; 2 would not (2 with a conflict apply --delta would not send)") ||
		!strings.Contains(out, "; the server holds it already, not sent: PRICE\n") {
		t.Errorf("plan --delta's text:\n%s", out)
	}
	// Its page says so, where it said "No problems".
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), `id="verdict">2 conflicts: apply --delta would not send them, and would end with exit 1`) {
		t.Errorf("plan --delta's page (%v):\n%s", err, b)
	}

	dry, planned := predict()
	code, out = run("diff", planPath, "--journal", jpath, "--json", "--delta")
	creates, updates, conflicts := diffCounts(t, code, out)
	// diff says the delta plan --delta says.
	var diffed deltaDoc
	if err := json.Unmarshal([]byte(firstJSON(out)), &diffed); err != nil || diffed.Delta != dry.Delta {
		t.Errorf("diff --delta's delta %+v (%v), plan --delta's %+v", diffed.Delta, err, dry.Delta)
	}
	if _, out := run("diff", planPath, "--journal", jpath); !strings.Contains(out, "1 gone (listed: nothing read or sent;") {
		t.Errorf("diff over the changed sources does not say they changed:\n%s", out)
	}
	// diff shows a text's change as its TEXT's: old (as the server holds
	// it, by its content) → new.
	for _, want := range []string{`"ORDERSTEXT_SUBFORM/TEXT": \{\s*"old": "Deliver to gate 2",\s*"new": "Deliver to gate 5"`,
		`"ORDERSTEXT_SUBFORM/TEXT": \{\s*"old": "",\s*"new": "Ring first"`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("diff --delta does not show %s:\n%s", want, out)
		}
	}
	applied, sent := apply(ExitData)
	if err := sameBatches(planned, sent); err != nil {
		t.Errorf("the dry run's batches are not apply --delta's: %v", err)
	}
	if dry.counts != applied.counts || dry.Delta != applied.Delta {
		t.Errorf("the dry run predicted %+v, apply --delta did %+v", dry, applied)
	}
	// New: C1009 and its order 9. Changed: C1001's name (sent), C1002's
	// phone (the conflict), part B-101's price (held by the server: diff
	// says unchanged, nothing sent), order 2's line (its
	// quantity patched) and text (added), order 4 (a line added), order 1's
	// text (replaced), order 3's text (the conflict). Gone: C1004.
	if d := applied.Delta; d.New != 2 || d.Changed != 7 || d.Gone != 1 || d.Conflicts != 2 || creates != 2 || updates != 4 || conflicts != 2 {
		t.Errorf("delta %+v; diff: %d creates, %d updates, %d conflicts", d, creates, updates, conflicts)
	}
	all := strings.Join(sent, "\n")
	for _, want := range []string{`"method":"PATCH","url":"CUSTOMERS('C1001')"`, `"body":{"CUSTDES":"Galil Engineering 2026 Ltd"}}`,
		`"CUSTNAME":"C1009"`,
		`"method":"PATCH","url":"ORDERS('SO26000002')/ORDERITEMS_SUBFORM(1)"`, `"body":{"TQUANT":130}}`,
		`"method":"POST","url":"ORDERS('SO26000004')/ORDERITEMS_SUBFORM"`, `"body":{"PARTNAME":"B-100","PRICE":0.35,"TQUANT":7}}`,
		`"method":"PATCH","url":"ORDERS('SO26000001')/ORDERSTEXT_SUBFORM"`, `"body":{"APPEND":false,"TEXT":"Deliver to gate 5"}}`,
		`"method":"POST","url":"ORDERS('SO26000002')/ORDERSTEXT_SUBFORM"`, `"body":{"APPEND":false,"TEXT":"Ring first"}}`} {
		if !strings.Contains(all, want) {
			t.Errorf("apply --delta did not send %s:\n%s", want, all)
		}
	}
	if strings.Count(all, `"method":"PATCH"`) != 3 || strings.Count(all, `"method":"POST"`) != 4 || strings.Contains(all, `"method":"DELETE"`) || strings.Contains(all, "C1002") || strings.Contains(all, "SO26000003") || strings.Contains(all, "B-101") {
		t.Errorf("apply --delta sent more than the creates, the new line and text and the three PATCHes:\n%s", all)
	}
	// The text the server held is the replaced text's before-image, for undo.
	if j, err := os.ReadFile(jpath); err != nil || !regexp.MustCompile(`"u":"ORDERS\('SO26000001'\)/ORDERSTEXT_SUBFORM",[^\n]*"bf":\{"APPEND":false,"TEXT":"[^"]*Deliver to gate 2"\}`).Match(j) {
		t.Errorf("the text's PATCH and its before-image are not journaled (%v)", err)
	}
	for key, want := range map[string]string{"SO26000001": "Deliver to gate 5", "SO26000002": "Ring first", "SO26000003": "Call the site manager"} {
		if got := textOf(t, sb, key); got != want {
			t.Errorf("after apply --delta ORDERS('%s') holds the text %q, want %q", key, got, want)
		}
	}

	// --overwrite: predicted and sent alike, the conflicts' PATCHes only.
	dry, planned = predict("--overwrite")
	applied, sent = apply(ExitOK, "--overwrite")
	all = strings.Join(sent, "\n")
	if err := sameBatches(planned, sent); err != nil || len(sent) != 2 || !strings.Contains(all, `"url":"CUSTOMERS('C1002')"`) || !strings.Contains(all, `"body":{"PHONE":"+972-8-6000099"}}`) ||
		!strings.Contains(all, `"url":"ORDERS('SO26000003')/ORDERSTEXT_SUBFORM"`) || !strings.Contains(all, `"body":{"APPEND":false,"TEXT":"Call before delivery and after"}}`) {
		t.Errorf("apply --delta --overwrite sent %v (predicted: %v)", sent, err)
	}
	if got := textOf(t, sb, "SO26000003"); got != "Call before delivery and after" {
		t.Errorf("after --overwrite ORDERS('SO26000003') holds the text %q", got)
	}
	if dry.counts != applied.counts {
		t.Errorf("the dry run predicted %+v, apply --delta --overwrite did %+v", dry.counts, applied.counts)
	}

	// The part's price changes again in the source: the PATCH is sent
	// over the price the server held (no conflict). Then again, and the
	// server holds that one already: nothing is sent. verify (below) finds
	// the last of them, whichever way it came, also after a delta of
	// another field.
	edit("parts.csv", "0,61", "0,66")
	if _, sent = apply(ExitOK); len(sent) != 1 || !strings.Contains(sent[0], `"url":"LOGPART('B-101')","headers":{"content-type":"application/json","odata-version":"4.0"},"body":{"PRICE":0.66}}`) {
		t.Errorf("apply --delta of a price the server held sent %v", sent)
	}
	edit("parts.csv", "0,66", "0,70")
	if err := cl.Patch(context.Background(), "LOGPART('B-101')", []byte(`{"PRICE":0.70}`), nil); err != nil {
		t.Fatal(err)
	}
	if applied, sent = apply(ExitOK); len(sent) != 0 || applied.Delta.Changed != 1 || applied.Delta.Conflicts != 0 {
		t.Errorf("apply --delta of a price the server holds already: %+v, sent %v", applied.Delta, sent)
	}
	// A later delta of its description alone: the price the server held
	// stays what verify expects of it.
	edit("parts.csv", "b-101;Hex bolt M8x30;", "b-101;Hex bolt M8x30 zinc;")
	if _, sent = apply(ExitOK); len(sent) != 1 || !strings.Contains(sent[0], `"body":{"PARTDES":"Hex bolt M8x30 zinc"}}`) {
		t.Errorf("apply --delta of the part's description sent %v", sent)
	}

	// Nothing changed since: no call.
	dry, _ = predict()
	applied, sent = apply(ExitOK)
	if len(sent) > 0 || applied.Requests != 0 || dry.Requests != 0 || applied.Delta.New+applied.Delta.Changed != 0 {
		t.Errorf("a delta with nothing changed: %d batches written, %+v (predicted %+v)", len(sent), applied, dry)
	}
	// The lines the journal holds loaded are those of the sources now (none
	// is gone from them): a line or text a delta patched is counted once,
	// as the dry run of a fresh load of the sources counts it.
	var held, fresh struct {
		Steps []struct {
			Name     string
			Children int
		}
	}
	for _, c := range []struct {
		doc  any
		args []string
	}{{&held, []string{"status", jpath, "--json"}}, {&fresh, []string{"plan", planPath, "--journal", filepath.Join(dir, "fresh.journal"), "--json"}}} {
		code, out := run(c.args...)
		if err := json.Unmarshal([]byte(firstJSON(out)), c.doc); err != nil || code != ExitOK {
			t.Fatalf("%v: exit %d, %v\n%s", c.args, code, err, out)
		}
	}
	if !reflect.DeepEqual(held, fresh) {
		t.Errorf("after the deltas the journal holds the lines %+v loaded; a fresh load of the sources builds %+v", held.Steps, fresh.Steps)
	}

	// verify finds what the load and the deltas left together, lines
	// patched and added included; undo takes it all back.
	if code, out := run("verify", jpath); code != ExitOK {
		t.Errorf("verify after the deltas: exit %d\n%s", code, out)
	}
	if code, out := run("undo", jpath, "--yes"); code != ExitOK {
		t.Fatalf("undo: exit %d\n%s", code, out)
	}
	for set, ents := range sb.Snapshot() {
		if len(ents) > 0 && set != "CURRENCIES" {
			t.Errorf("after undo %s holds %d entities", set, len(ents))
		}
	}
}

// TestOneTruthOfADeltaOfSubForms is TestOneTruthOfADelta's case of the
// single-object sub-forms: customers with a ship-to address, orders whose
// lines have their own texts. After the load the sources change (a
// ship-to's address, a ship-to new for a customer loaded without one, a
// line's text, a text new for a line loaded without one) and a ship-to's
// city changes on the server (the conflict, also changed in the source).
// The dry run's batches are apply --delta's, body for body; diff --delta
// counts the same records; what is sent is exactly the PATCHes of
// PARENT/NAV and of the line's text and the POSTs of the new ones; a
// second delta sends nothing but lists the conflict again; verify finds
// nothing once --overwrite sent it.
func TestOneTruthOfADeltaOfSubForms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"plan.yaml": `version: 1
name: subforms
sources:
  customers: {file: customers.csv}
  orders: {file: orders.csv}
steps:
  - name: customers
    entity: CUSTOMERS
    source: customers
    fields: {CUSTNAME: row.Code, CUSTDES: row.Name}
    subforms:
      - name: SHIPTO2_SUBFORM
        when: row.Ship != ""
        fields: {ADDRESS: row.Ship, STATE: row.City}
  - name: orders
    entity: ORDERS
    source: orders
    group_by: row.No
    id: row.No
    after: [customers]
    fields: {CUSTNAME: row.Customer}
    subforms:
      - name: ORDERITEMS_SUBFORM
        source: group
        fields: {PARTNAME: row.Part, TQUANT: row.Qty}
        subforms:
          - name: ORDERITEMSTEXT_SUBFORM
            when: row.Note != ""
            fields: {TEXT: row.Note}
`,
		"customers.csv": "Code,Name,Ship,City\nC1,One,1 Main St,Haifa\nC2,Two,2 Hill Rd,Haifa\nC3,Three,,\n",
		"orders.csv":    "No,Customer,Part,Qty,Note\n1,C1,P1,5,Fragile\n1,C1,P2,6,\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, rec, env, run := deltaTarget(t, dir)
	cl, err := odata.NewClient(odata.Config{BaseURL: env["MIGRATE_TARGET"], Auth: odata.BasicAuth{User: "demo", Password: "demo"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"P1", "P2"} {
		if err := cl.Post(context.Background(), "LOGPART", []byte(`{"PARTNAME":"`+p+`","PARTDES":"Part"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	planPath, jpath := filepath.Join(dir, "plan.yaml"), filepath.Join(dir, "run.journal")
	if code, out := run("apply", planPath, "--journal", jpath); code != ExitOK {
		t.Fatalf("the load: exit %d\n%s", code, out)
	}
	for name, body := range map[string]string{
		"customers.csv": "Code,Name,Ship,City\nC1,One,5 Harbour Rd,Haifa\nC2,Two,2 Hill Rd,Acre\nC3,Three,3 Lake Rd,Tiberias\n",
		"orders.csv":    "No,Customer,Part,Qty,Note\n1,C1,P1,5,Handle with care\n1,C1,P2,6,Top shelf\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.Patch(context.Background(), "CUSTOMERS('C2')/SHIPTO2_SUBFORM", []byte(`{"STATE":"Nazareth"}`), nil); err != nil {
		t.Fatal(err)
	}

	dr := deltaRuns{t: t, run: run, rec: rec, plan: planPath, journal: jpath}

	dry, planned := dr.predict()
	code, out := run("diff", planPath, "--journal", jpath, "--json", "--delta")
	for _, want := range []string{`"SHIPTO2_SUBFORM/ADDRESS"`, `"SHIPTO2_SUBFORM/STATE"`, `"ORDERITEMS_SUBFORM(1)/ORDERITEMSTEXT_SUBFORM/TEXT"`, `"ORDERITEMS_SUBFORM(2)/ORDERITEMSTEXT_SUBFORM/TEXT"`} {
		if !strings.Contains(out, want) {
			t.Errorf("diff --delta does not show %s:\n%s", want, out)
		}
	}
	applied, sent := dr.apply(ExitData)
	if err := sameBatches(planned, sent); err != nil {
		t.Errorf("the dry run's batches are not apply --delta's: %v", err)
	}
	if dry != applied {
		t.Errorf("the dry run predicted %+v, apply --delta did %+v", dry, applied)
	}
	creates, updates, conflicts := diffCounts(t, code, out)
	// Changed: C1's ship-to (patched), C2's (the conflict), C3's (added),
	// order 1 (a line's text replaced, another's added).
	if d := applied.Delta; d.New != 0 || d.Changed != 4 || d.Gone != 0 || d.Conflicts != 1 || creates != 0 || updates != 3 || conflicts != 1 {
		t.Errorf("delta %+v; diff: %d creates, %d updates, %d conflicts", d, creates, updates, conflicts)
	}
	all := strings.Join(sent, "\n")
	for _, want := range []string{
		`"method":"PATCH","url":"CUSTOMERS('C1')/SHIPTO2_SUBFORM"`, `"body":{"ADDRESS":"5 Harbour Rd"}}`,
		`"method":"POST","url":"CUSTOMERS('C3')/SHIPTO2_SUBFORM"`, `"body":{"ADDRESS":"3 Lake Rd","STATE":"Tiberias"}}`,
		`"method":"PATCH","url":"ORDERS('SO26000001')/ORDERITEMS_SUBFORM(1)/ORDERITEMSTEXT_SUBFORM"`, `"body":{"APPEND":false,"TEXT":"Handle with care"}}`,
		`"method":"POST","url":"ORDERS('SO26000001')/ORDERITEMS_SUBFORM(2)/ORDERITEMSTEXT_SUBFORM"`, `"body":{"APPEND":false,"TEXT":"Top shelf"}}`} {
		if !strings.Contains(all, want) {
			t.Errorf("apply --delta did not send %s:\n%s", want, all)
		}
	}
	if strings.Count(all, `"method":"PATCH"`) != 2 || strings.Count(all, `"method":"POST","url":"`) != 2 || strings.Contains(all, "C2") {
		t.Errorf("apply --delta sent more than the two PATCHes and two POSTs:\n%s", all)
	}

	// C2 is the conflict still; nothing else is sent again.
	dry, planned = dr.predict()
	applied, sent = dr.apply(ExitData)
	if err := sameBatches(planned, sent); err != nil || len(sent) != 0 || applied.Delta.Changed != 1 || applied.Delta.Conflicts != 1 || dry != applied {
		t.Errorf("a second delta: sent %v (%v), %+v (predicted %+v)", sent, err, applied, dry)
	}
	// --overwrite sends C2's city; then verify finds what the load and the
	// deltas left together.
	if applied, _ = dr.apply(ExitOK, "--overwrite"); applied.Delta.Conflicts != 0 {
		t.Fatalf("apply --delta --overwrite: %+v", applied)
	}
	if code, out := run("verify", jpath); code != ExitOK {
		t.Errorf("verify after the deltas: exit %d\n%s", code, out)
	}
}

// textOf is the text the sandbox holds of order key.
func textOf(t *testing.T, sb *sandbox.Server, key string) string {
	t.Helper()
	for _, o := range sb.Snapshot()["ORDERS"] {
		if o["ORDNAME"] != key {
			continue
		}
		txt, _ := o["ORDERSTEXT_SUBFORM"].(map[string]any)
		s, _ := txt["TEXT"].(string)
		return odata.TextContent(s)
	}
	t.Fatalf("the sandbox holds no order %s", key)
	return ""
}

// deltaDoc is what plan --delta and apply --delta say in JSON: their
// calls and the delta's counts.
type deltaDoc struct {
	counts
	Delta struct {
		Sent                                   bool
		New, Changed, Gone, Conflicts, Unknown int
	}
}

type counts struct{ Requests, Subrequests, Transactions int }

// deltaRuns runs the dry run and the delta of a plan over its journal,
// against a recorded target.
type deltaRuns struct {
	t             *testing.T
	run           func(args ...string) (int, string)
	rec           *writeRecorder
	plan, journal string
}

// predict runs plan --delta --out: what it says, and the batches it wrote.
func (d deltaRuns) predict(extra ...string) (deltaDoc, []string) {
	t := d.t
	t.Helper()
	planned := filepath.Join(t.TempDir(), "planned")
	code, out := d.run(append([]string{"plan", d.plan, "--journal", d.journal, "--out", planned, "--json", "--delta"}, extra...)...)
	var doc deltaDoc
	if err := json.Unmarshal([]byte(firstJSON(out)), &doc); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	// It exits as apply --delta would: 1 for a conflict left unsent.
	if want := map[bool]int{false: ExitOK, true: ExitData}[doc.Delta.Conflicts > 0]; code != want {
		t.Fatalf("plan --delta: exit %d, want %d\n%s", code, want, out)
	}
	return doc, batchesIn(t, planned)
}

// apply runs apply --delta, which must exit want: what it says, and the
// batches the target took.
func (d deltaRuns) apply(want int, extra ...string) (deltaDoc, []string) {
	t := d.t
	t.Helper()
	d.rec.mu.Lock()
	d.rec.on, d.rec.bodies = true, nil
	d.rec.mu.Unlock()
	code, out := d.run(append([]string{"apply", d.plan, "--journal", d.journal, "--json", "--delta"}, extra...)...)
	d.rec.mu.Lock()
	d.rec.on = false
	sent := slices.Clone(d.rec.bodies)
	d.rec.mu.Unlock()
	if code != want {
		t.Fatalf("apply --delta %v: exit %d, want %d\n%s", extra, code, want, out)
	}
	var doc deltaDoc
	if err := json.Unmarshal([]byte(firstJSON(out)), &doc); err != nil {
		t.Fatalf("apply --json: %v\n%s", err, out)
	}
	return doc, sent
}

// diffCounts adds up the creates, updates and conflicts of diff --delta
// --json (out), which exits 1 for its conflicts.
func diffCounts(t *testing.T, code int, out string) (creates, updates, conflicts int) {
	t.Helper()
	var diff struct {
		Steps []struct{ Create, Update, Unchanged, Conflict int }
	}
	if err := json.Unmarshal([]byte(firstJSON(out)), &diff); err != nil || code != ExitData {
		t.Fatalf("diff --delta (a conflict): exit %d, %v\n%s", code, err, out)
	}
	for _, s := range diff.Steps {
		creates, updates, conflicts = creates+s.Create, updates+s.Update, conflicts+s.Conflict
	}
	return creates, updates, conflicts
}

// deltaTarget serves a fresh sandbox for a test in dir, recording the
// writes it takes: the sandbox, the recorder, the environment that signs
// in to it and a runner of the tool in that environment.
func deltaTarget(t *testing.T, dir string) (*sandbox.Server, *writeRecorder, map[string]string, func(args ...string) (int, string)) {
	sb, err := sandbox.New(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, env := recordedTarget(t, sb, dir)
	return sb, rec, env, mainRunner(t, env)
}
