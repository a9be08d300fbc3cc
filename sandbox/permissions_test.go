package sandbox_test

import (
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
)

// A user without permission on a form: 403 by default, a 400 screen error
// in the installation's language on real servers; granted back, the write
// goes through.
func TestUnpermittedForm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		quirk  bool
		path   string
		status int
		want   string
	}{
		{"spec", false, "/CUSTOMERS", 403, `"code":"Forbidden"`},
		{"real English", true, "/CUSTOMERS", 400, `Line 1- Insufficient permissions for the form CUSTOMERS.`},
		{"real Hebrew", true, "http:HEBREW/CUSTOMERS", 400, `אין לך הרשאות מספיקות למסך CUSTOMERS`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := start(t, sandbox.Options{Unpermitted: []string{"CUSTOMERS"}, Quirks: quirkIf(tt.quirk, sandbox.QuirkPermission400)})
			path := strings.Replace(tt.path, "http:HEBREW", c.srv.URL+strings.Replace(sandbox.BasePath, "tabula.ini", "tabula.ini,2", 1), 1)
			r := c.must(tt.status, "POST", path, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Acme"})
			if !strings.Contains(r.String(), tt.want) {
				t.Errorf("body %s, want %s", r, tt.want)
			}
			c.must(200, "GET", "/CUSTOMERS", nil) // reading stays allowed
			c.must(201, "POST", "/FAMILY_LOG", map[string]any{"FAMILYNAME": "F1", "FAMILYDESC": "Fasteners"})
			c.sb.SetUnpermitted()
			c.must(201, "POST", path, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Acme"})
		})
	}
}
