package captest

import (
	"context"
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
