package executor

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/sandbox"
)

// seedCustomers posts n customers C00000.. to the sandbox, plus O'Brien.
func seedCustomers(t *testing.T, env *sandboxEnv, n int) {
	t.Helper()
	var reqs []odata.BatchRequest
	add := func(name string) {
		reqs = append(reqs, odata.BatchRequest{ID: strconv.Itoa(len(reqs) + 1), Method: "POST", URL: "CUSTOMERS",
			Headers: map[string]string{"content-type": "application/json"},
			Body:    []byte(fmt.Sprintf(`{"CUSTNAME":%q,"CUSTDES":"Customer %s"}`, name, name))})
	}
	flush := func() {
		resps, err := env.client.Batch(context.Background(), reqs, BatchOptions)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resps {
			if r.Status != 201 {
				t.Fatalf("seed: %d %s", r.Status, r.Body)
			}
		}
		reqs = nil
	}
	add("O'Brien & Co")
	for i := 0; i < n; i++ {
		add(fmt.Sprintf("C%05d", i))
		if len(reqs) == 100 {
			flush()
		}
	}
	if len(reqs) > 0 {
		flush()
	}
}

func TestReadKeysCostsAtMostOneCallPer2000(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	seedCustomers(t, env, 5000)
	keys := []string{odata.EntityKey(env.md.Type("CUSTOMERS"), map[string]any{"CUSTNAME": "O'Brien & Co"}), "'NOPE1'"}
	for i := 0; i < 5000; i += 1 {
		keys = append(keys, fmt.Sprintf("'C%05d'", i))
	}
	keys = append(keys, "'NOPE2'")
	before := env.sb.Stats().Batches
	rd := &read.Keys{Send: read.Via(env.client), Set: "CUSTOMERS", Type: env.md.Type("CUSTOMERS"), Select: []string{"CUSTDES"}}
	got, err := rd.ReadKeys(context.Background(), keys)
	if err != nil {
		t.Fatal(err)
	}
	calls := env.sb.Stats().Batches - before
	if limit := int64((len(keys) + 1999) / 2000); calls > limit || int64(rd.Calls) != calls {
		t.Errorf("%d keys took %d calls (reader counted %d), want at most %d", len(keys), calls, rd.Calls, limit)
	}
	for _, k := range keys {
		f := got[k]
		switch {
		case strings.HasPrefix(k, "'NOPE"):
			if f.Status != 404 {
				t.Errorf("%s: status %d, want 404", k, f.Status)
			}
		case f.Status != 200:
			t.Errorf("%s: status %d %s", k, f.Status, f.Body)
		default:
			e, _ := odata.DecodeEntity(f.Body)
			if odata.EntityKey(rd.Type, e) != odata.CanonicalKey(rd.Type, k) || !strings.HasPrefix(fmt.Sprint(e["CUSTDES"]), "Customer ") {
				t.Errorf("%s: got %s", k, f.Body)
			}
			if _, ok := e["PHONE"]; ok {
				t.Errorf("%s: $select not applied: %s", k, f.Body)
			}
		}
	}
}

// A server that ignores the filter (docs/servers.md, Reading) answers with
// rows not asked for: the keys are then read one by one, never taken as
// absent.
func TestReadKeysFilterIgnoredFallsBackToKeyedGETs(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	seedCustomers(t, env, 30)
	ignore := func(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
		for i := range reqs {
			if set, q, ok := strings.Cut(reqs[i].URL, "?"); ok {
				v, _ := url.ParseQuery(q)
				v.Del("$filter")
				reqs[i].URL = set + "?" + v.Encode()
			}
		}
		return read.Via(env.client)(ctx, reqs)
	}
	rd := &read.Keys{Send: ignore, Set: "CUSTOMERS", Type: env.md.Type("CUSTOMERS")}
	got, err := rd.ReadKeys(context.Background(), []string{"'C00003'", "'GONE'", "'C00029'"})
	if err != nil {
		t.Fatal(err)
	}
	if got["'C00003'"].Status != 200 || got["'C00029'"].Status != 200 || got["'GONE'"].Status != 404 {
		t.Errorf("got %v", got)
	}
	if rd.Calls != 2 {
		t.Errorf("calls %d, want 2 (the chain, then the keyed GETs)", rd.Calls)
	}
}

func TestKeyFilter(t *testing.T) {
	t.Parallel()
	md := sandbox.DemoMetadata()
	for _, c := range []struct{ set, key, want string }{
		{"CUSTOMERS", "'C1'", "CUSTNAME eq 'C1'"},
		{"CUSTOMERS", "'O''Brien%20&%20Co'", "CUSTNAME eq 'O''Brien & Co'"},
		{"AINVOICES", "IVNUM='IV1',IVTYPE='A',DEBIT='D'", "(IVNUM eq 'IV1' and IVTYPE eq 'A' and DEBIT eq 'D')"},
	} {
		got, err := read.KeyFilter(md.Type(c.set), c.key)
		if err != nil || got != c.want {
			t.Errorf("%s %s: %q %v, want %q", c.set, c.key, got, err, c.want)
		}
	}
	if _, err := read.KeyFilter(md.Type("AINVOICES"), "'IV1'"); err == nil {
		t.Error("a single value for a composite key was taken")
	}
}
