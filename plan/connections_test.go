package plan

import "testing"

// TestConnectionsRefused: a connection whose name is no identifier, whose
// variables another connection or the target reads, or whose URL is wrong
// refuses the plan's connections, so that a command stops before anything
// connects (t and T both read MIGRATE_T_TOKEN: one token would go to both).
func TestConnectionsRefused(t *testing.T) {
	t.Parallel()
	const head = "version: 1\nconnections:\n"
	tests := []struct {
		name, conns string
		refused     bool
	}{
		{"distinct names", "  template: {url: \"https://a.example.com/odata/x\"}\n  test_co: {url: \"https://b.example.com/odata/y\"}\n", false},
		{"names differing in case", "  t: {url: \"https://a.example.com/odata/x\"}\n  T: {url: \"https://b.example.com/odata/y\"}\n", true},
		{"an underscore shifted", "  old: {url: \"https://a.example.com/odata/x\"}\n  old_client: {url: \"https://b.example.com/odata/y\"}\n", true},
		{"the target's variables", "  app: {url: \"https://a.example.com/odata/x\"}\n  client: {url: \"https://b.example.com/odata/y\"}\n", true},
		{"no identifier", "  \"test-co\": {url: \"https://a.example.com/odata/x\"}\n", true},
		{"empty name", "  \"\": {url: \"https://a.example.com/odata/x\"}\n", true},
		{"no scheme", "  template: {url: \"a.example.com/odata/x\"}\n", true},
	}
	for _, tt := range tests {
		p, ds := Decode("plan.yaml", []byte(head+tt.conns))
		if got := p.ConnectionsRefused(); got != tt.refused {
			t.Errorf("%s: ConnectionsRefused() = %v, want %v (%v)", tt.name, got, tt.refused, ds)
		}
	}
}
