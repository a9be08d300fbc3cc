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

func TestCompanyJournal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		plan, pattern, company string
		sandbox                bool
		want                   string
	}{
		{"dir/plan.yaml", "", "test", false, "dir/plan.test.journal"},
		{"plan.yml", "runs/{company}.journal", "prod", false, "runs/prod.journal"},
		{"plan.yaml", "", "test", true, ""}, // --sandbox: a temporary one
		{"plan.yaml", "x-{company}.journal", "test", true, "x-test.journal"},
	}
	for _, tt := range tests {
		if got := companyJournal(tt.plan, tt.pattern, tt.company, tt.sandbox); got != tt.want {
			t.Errorf("companyJournal(%q, %q, %q, %v) = %q, want %q", tt.plan, tt.pattern, tt.company, tt.sandbox, got, tt.want)
		}
	}
}
