package cli

import "testing"

// Several journals or companies exit with the worst code: a file or
// command line that cannot be used, then a target that cannot be reached,
// then work pending, then data problems, then done.
func TestWorseCode(t *testing.T) {
	t.Parallel()
	tests := []struct{ a, b, want int }{
		{ExitOK, ExitOK, ExitOK},
		{ExitOK, ExitData, ExitData},
		{ExitData, ExitInterrupted, ExitInterrupted},
		{ExitInterrupted, ExitData, ExitInterrupted},
		{ExitInterrupted, ExitUnreachable, ExitUnreachable},
		{ExitUnreachable, ExitUsage, ExitUsage},
		{ExitUsage, ExitInterrupted, ExitUsage},
	}
	for _, tt := range tests {
		if got := worseCode(tt.a, tt.b); got != tt.want {
			t.Errorf("worseCode(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// A journal belongs to its company, however it was named: the URL's own
// company, named by --company or not, has PLAN.journal.
func TestJournalName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		plan, pattern, company, own string
		sandbox                     bool
		want                        string
	}{
		{"dir/plan.yaml", "", "", "demo", false, "dir/plan.journal"},
		{"dir/plan.yaml", "", "demo", "demo", false, "dir/plan.journal"}, // the URL's own company, named
		{"dir/plan.yaml", "", "test", "demo", false, "dir/plan.test.journal"},
		{"plan.yaml", "", "", "", false, "plan.journal"}, // no target yet: connecting says so
		{"plan.yml", "runs/{company}.journal", "prod", "demo", false, "runs/prod.journal"},
		{"plan.yml", "runs/{company}.journal", "", "demo", false, "runs/demo.journal"},
		{"plan.yaml", "one.journal", "demo", "demo", false, "one.journal"},
		{"plan.yaml", "", "test", "", true, ""}, // --sandbox: a temporary one
		{"plan.yaml", "x-{company}.journal", "test", "", true, "x-test.journal"},
	}
	for _, tt := range tests {
		if got := journalName(tt.plan, tt.pattern, tt.company, tt.own, tt.sandbox); got != tt.want {
			t.Errorf("journalName(%q, %q, %q, %q, %v) = %q, want %q", tt.plan, tt.pattern, tt.company, tt.own, tt.sandbox, got, tt.want)
		}
	}
}
