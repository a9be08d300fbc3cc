package plan

import (
	"strings"
	"testing"
)

// TestEmptyNames: an empty name in fields, exists or totals is reported
// where it stands, and the entries beside it still read.
func TestEmptyNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		block, want string
	}{
		{`fields: {"": row.A, CUSTNAME: row.B}`, `plan.yaml:7:14: a field name in step "c" is empty`},
		{`exists: {"": LOGPART, CUSTNAME: CUSTOMERS}`, `plan.yaml:7:14: a field name in "exists" of step "c" is empty`},
		{`totals: {"": count(), rows: count()}`, `plan.yaml:7:14: a total's name in step "c" is empty`},
	} {
		src := "version: 1\nsources:\n  s: {file: s.csv}\nsteps:\n  - name: c\n    entity: CUSTOMERS\n    " + tc.block + "\n    source: s\n"
		_, ds := Decode("plan.yaml", []byte(src))
		var got []string
		for _, d := range ds {
			got = append(got, d.String())
		}
		if !strings.Contains(strings.Join(got, "\n"), tc.want) {
			t.Errorf("%s: diagnostics\n%s\nwant %s", tc.block, strings.Join(got, "\n"), tc.want)
		}
	}
}
