package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// undo --json gives docs/cli.md's document: its own lower-case names, every
// list [] when empty; the preview's actions are what the run created, and
// with --yes each is done and the sandbox holds none of it.
func TestUndoJSON(t *testing.T) {
	t.Parallel()
	sb, target, journal, _ := quickstartLoaded(t)
	held := 0
	for _, set := range []string{"FAMILY_LOG", "LOGPART", "CUSTOMERS", "ORDERS"} {
		held += len(sb.Snapshot()[set])
	}
	// The document as documented, and nothing else: an unknown or
	// capitalised name fails the decoding.
	type doc struct {
		Target  string `json:"target"`
		Actions []struct {
			Step   string `json:"step"`
			Record string `json:"record"`
			Method string `json:"method"`
			URL    string `json:"url"`
			What   string `json:"what"`
			Done   bool   `json:"done"`
			Error  string `json:"error"`
		} `json:"actions"`
		Done     int      `json:"done"`
		Failed   int      `json:"failed"`
		Skipped  []string `json:"skipped"`
		Warnings []string `json:"warnings"`
		InDoubt  []string `json:"in_doubt"`
		With     []string `json:"with_documents"`
	}
	undo := func(args ...string) (doc, string) {
		t.Helper()
		var out, errb bytes.Buffer
		a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
			getenv: func(k string) string {
				return map[string]string{"MIGRATE_USER": "demo", "MIGRATE_PASSWORD": "demo", "MIGRATE_TARGET": target, "HOME": t.TempDir()}[k]
			}}
		if code := a.main(t.Context(), append([]string{"undo", journal, "--json"}, args...)); code != ExitOK {
			t.Fatalf("undo %v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
		dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
		dec.DisallowUnknownFields()
		var d doc
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("undo %v --json: %v\n%s", args, err, out.String())
		}
		return d, out.String()
	}

	preview, raw := undo()
	for _, empty := range []string{`"skipped": []`, `"warnings": []`, `"in_doubt": []`, `"with_documents": []`} {
		if !strings.Contains(raw, empty) {
			t.Errorf("the preview lacks %s\n%s", empty, raw)
		}
	}
	if preview.Target != target || len(preview.Actions) != held || preview.Done != 0 {
		t.Errorf("preview: target %q, %d actions, %d done; want %q, one action for each of the %d entities the run created, none done",
			preview.Target, len(preview.Actions), preview.Done, target, held)
	}
	for _, a := range preview.Actions {
		if a.Done || a.Method != "DELETE" || a.Step == "" || a.Record == "" || a.URL == "" || a.What == "" {
			t.Errorf("preview action %+v", a)
		}
	}

	done, _ := undo("--yes")
	if done.Done != held || done.Failed != 0 || len(done.Actions) != held {
		t.Errorf("undo --yes: %d done, %d failed, %d actions; want %d done", done.Done, done.Failed, len(done.Actions), held)
	}
	for _, a := range done.Actions {
		if !a.Done || a.Error != "" {
			t.Errorf("undo --yes action %+v", a)
		}
	}
	for _, set := range []string{"FAMILY_LOG", "LOGPART", "CUSTOMERS", "ORDERS"} {
		if n := len(sb.Snapshot()[set]); n != 0 {
			t.Errorf("after undo the sandbox holds %d of %s", n, set)
		}
	}
}
