package captest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestStart starts the service and reads what it holds: the entities of
// the model, empty.
func TestStart(t *testing.T) {
	s := Require(t)
	if !strings.HasSuffix(s.Root, ServicePath) {
		t.Fatalf("root %q does not end in %s", s.Root, ServicePath)
	}
	got, err := Dump(context.Background(), s.Root, "ORDERS", "ORDERITEMS_SUBFORM")
	if err != nil {
		t.Fatal(err)
	}
	if want := "ORDERS: []\n"; string(got) != want {
		t.Fatalf("Dump = %q, want %q", got, want)
	}
}

func TestSteady(t *testing.T) {
	in := map[string]any{
		"ID": "3a943e5e-c925-4fae-b2d5-9e2f0a36c6d8", "@odata.etag": `W/"x"`, "modifiedAt": "2026-11-27T15:10:37.128Z",
		"NAME": "3a943e5e", "LINES": []any{map[string]any{"N": "b"}, map[string]any{"N": "a"}},
	}
	got := steady(in).(map[string]any)
	if got["ID"] != "<guid>" || got["modifiedAt"] != "<time>" || got["NAME"] != "3a943e5e" {
		t.Errorf("steady = %v", got)
	}
	if _, ok := got["@odata.etag"]; ok {
		t.Errorf("annotation kept: %v", got)
	}
	if l := got["LINES"].([]any); l[0].(map[string]any)["N"] != "a" {
		t.Errorf("lines not in order: %v", l)
	}
}

// TestPool takes a service from a pool, writes to it and gives it back:
// the next test that takes one gets the same service, holding nothing.
func TestPool(t *testing.T) {
	if err := Installed(); err != nil && !Required() {
		t.Skipf("%v (under CI=true this fails)", err)
	}
	ctx := context.Background()
	var p Pool
	defer p.Close()
	s, err := p.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	post(t, s.Root+"/CUSTOMERS", `{"CUSTNAME":"C1","GENCUSTNOTES_SUBFORM":[{"NOTE":"n"}],"CUSTOMERSTEXT_SUBFORM":{"TEXT":"t"}}`)
	post(t, s.Root+"/ORDERS", `{"CUSTNAME":"C1","ORDERITEMS_SUBFORM":[{"PARTNAME":"P1"}],"ORDERSTEXT_SUBFORM":{"TEXT":"t"}}`)
	post(t, s.Root+"/SHIFTS", `{"CODE":"S1"}`)
	held := dumpAll(t, s.Root)
	if !strings.Contains(held, "C1") || !strings.Contains(held, "P1") || !strings.Contains(held, "S1") {
		t.Fatalf("what was written is not there:\n%s", held)
	}
	p.Put(s)
	again, err := p.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again != s || p.Started() != 1 {
		t.Errorf("Get after Put started another service (%d started)", p.Started())
	}
	var empty strings.Builder
	for _, set := range allSets {
		empty.WriteString(set + ": []\n")
	}
	if got := dumpAll(t, again.Root); got != empty.String() {
		t.Errorf("the service given back holds\n%s\nwant, as a new one, nothing", got)
	}
}

// allSets are the entity sets of testdata/cap/srv/service.cds.
var allSets = []string{"FAMILY_LOG", "LOGPART", "CUSTOMERS", "CUSTOMERS_GENCUSTNOTES_SUBFORM", "CUSTOMERS_CUSTOMERSTEXT_SUBFORM",
	"ORDERS", "ORDERITEMS", "ORDERS_ORDERSTEXT_SUBFORM", "SHIFTS"}

// dumpAll is every entity set of the service, steadied.
func dumpAll(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	for _, set := range allSets {
		out, err := Dump(context.Background(), root, set, "")
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
	}
	return b.String()
}

func post(t *testing.T, url, body string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %s: %s", url, resp.Status, b)
	}
}
