package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

func TestApplyDemoLoad(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := demoLoad()
	o := env.opts(t, p, f)
	sum := o.apply(t)
	if !sum.Complete || len(sum.Errors) != 0 {
		t.Fatalf("summary: %+v", sum)
	}
	want := map[string]StepSummary{
		"parts":     {Name: "parts", Entity: "LOGPART", Records: 2, Committed: 2},
		"customers": {Name: "customers", Entity: "CUSTOMERS", Records: 1, Committed: 1, Skipped: 1}, // a skipped row is no record
		"orders":    {Name: "orders", Entity: "ORDERS", Records: 1, Children: 4, Committed: 1},      // two lines, a text, an attachment
	}
	for _, s := range sum.Steps {
		if s != want[s.Name] {
			t.Errorf("step %s: got %+v, want %+v", s.Name, s, want[s.Name])
		}
	}
	orders := env.sb.Snapshot()["ORDERS"]
	if len(orders) != 1 {
		t.Fatalf("orders: %v", orders)
	}
	ord := orders[0]
	if ord["CUSTNAME"] != "C1" || ord["DETAILS"] != "first" || !strings.HasPrefix(fmt.Sprint(ord["ORDNAME"]), "SO") {
		t.Errorf("order: %v", ord)
	}
	items := lines(ord, "ORDERITEMS_SUBFORM")
	if len(items) != 2 || items[0]["PARTNAME"] != "P1" || items[1]["PARTNAME"] != "P2" || fmt.Sprint(items[0]["PRICE"]) != "1.5" {
		t.Errorf("items: %#v", ord["ORDERITEMS_SUBFORM"])
	}
	if txt := fmt.Sprint(ord["ORDERSTEXT_SUBFORM"]); !strings.Contains(txt, "Deliver fast") {
		t.Errorf("text: %s", txt)
	}
	if att := fmt.Sprint(ord["EXTFILES_SUBFORM"]); !strings.Contains(att, "drawing") {
		t.Errorf("attachment: %s", att)
	}
	// The server-assigned order number is journaled, so ref() finds it.
	st := loadJournal(t, o.Journal)
	if k := st.Record("orders", "O1").Key; k != "'"+fmt.Sprint(ord["ORDNAME"])+"'" {
		t.Errorf("journaled key %q, order %v", k, ord["ORDNAME"])
	}
	// One batch per step here: 2 + 1 + 5 sub-requests; the calls are
	// those the server saw (the batches, each form's warm-up before its
	// first write, the orders' watermark read).
	if sum.Requests != int(env.sb.Stats().Calls) || sum.Subrequests != 8 {
		t.Errorf("requests %d (the server saw %d) subrequests %d", sum.Requests, env.sb.Stats().Calls, sum.Subrequests)
	}
	// A second apply finds everything done and sends nothing.
	before := env.client.Calls.Load()
	sum, err := runApply(context.Background(), o)
	if err != nil || !sum.Complete || env.client.Calls.Load() != before {
		t.Fatalf("rerun: %v %+v calls %d→%d", err, sum, before, env.client.Calls.Load())
	}
	// No secret in the journal.
	data, _ := os.ReadFile(o.Journal)
	for _, s := range []string{"Authorization", "demo:demo", "ZGVtbzpkZW1v", "password"} {
		if strings.Contains(string(data), s) {
			t.Errorf("journal contains %q", s)
		}
	}
}

func TestApplyRefs(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := demoLoad()
	// A step after orders reads the server-assigned order number via ref().
	p.Steps = append(p.Steps, step("more", "ORDERS", "orders"))
	var got any
	f.Build = map[string]func(transform.Refs) []transform.Result{"more": func(refs transform.Refs) []transform.Result {
		got, _ = refs.Ref("orders", "O1")
		return nil
	}}
	env.opts(t, p, f).apply(t)
	ord := env.sb.Snapshot()["ORDERS"][0]
	if got != ord["ORDNAME"] {
		t.Fatalf("ref gave %v, order %v", got, ord["ORDNAME"])
	}
}

var _ = errors.Is
var _ = json.Marshal
