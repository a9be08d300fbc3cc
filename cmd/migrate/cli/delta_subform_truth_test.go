package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
)

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
