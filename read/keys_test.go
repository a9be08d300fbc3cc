package read

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
)

// TestReadKeysPaged: a server that pages at fewer rows than a chain asks
// for (CAP with a page size) answers with a next link; the keys on that
// page are found, the others are read one GET each, and only a GET's 404
// makes a key absent.
func TestReadKeysPaged(t *testing.T) {
	t.Parallel()
	typ := &odata.EntityType{Name: "T", Key: []string{"K"}, Properties: []*odata.Property{{Name: "K", Type: odata.EdmString}}}
	held := map[string]bool{"'A'": true, "'B'": true, "'C'": true}
	var singles []string
	send := func(_ context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
		out := make([]odata.BatchResponse, len(reqs))
		for i, r := range reqs {
			out[i].ID = r.ID
			if key, ok := strings.CutPrefix(r.URL, "T("); ok {
				key = strings.TrimSuffix(key, ")")
				singles = append(singles, key)
				if held[key] {
					out[i].Status, out[i].Body = 200, json.RawMessage(fmt.Sprintf(`{"K":%q}`, strings.Trim(key, "'")))
				} else {
					out[i].Status = 404
				}
				continue
			}
			// The chain: one row a page, with the next link.
			out[i].Status, out[i].Body = 200, json.RawMessage(`{"value":[{"K":"A"}],"@odata.nextLink":"T?$skiptoken=1"}`)
		}
		return out, nil
	}
	kr := &Keys{Send: send, Set: "T", Type: typ}
	got, err := kr.ReadKeys(context.Background(), []string{"'A'", "'B'", "'C'", "'D'"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"'A'": 200, "'B'": 200, "'C'": 200, "'D'": 404}
	for k, st := range want {
		if got[k].Status != st {
			t.Errorf("%s: status %d, want %d", k, got[k].Status, st)
		}
	}
	if strings.Join(singles, " ") != "'B' 'C' 'D'" {
		t.Errorf("read one by one: %v, want the keys not on the first page", singles)
	}
}
