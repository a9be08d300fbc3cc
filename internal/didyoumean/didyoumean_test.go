package didyoumean

import "testing"

func TestClosest(t *testing.T) {
	t.Parallel()
	fields := []string{"CUSTNAME", "CUSTDES", "PHONE", "ADDRESS", "AGENTCODE"}
	tests := []struct {
		name string
		cand []string
		want string
	}{
		{"CUSTDESC", fields, "CUSTDES"},
		{"custdes", fields, "CUSTDES"},
		{"CUTSNAME", fields, "CUSTNAME"}, // a transposition is one edit
		{"PHONE", fields, ""},            // the name itself is never suggested
		{"XYZZY", fields, ""},            // nothing close
		{"CUSTDESCRIPTION", fields, "CUSTDES"},
		{"ab", []string{"abc"}, ""}, // too short to be a misspelling
		{"sorce", []string{"source", "sheet", "file"}, "source"},
		{"aply", []string{"apply", "plan", "status"}, "apply"},
		{"קוד", []string{"קוד לקוח", "שם"}, ""},
		{"שם לקוח", []string{"שם הלקוח", "טלפון"}, "שם הלקוח"},
		{"anything", nil, ""},
		{"PARTNAMEXXXXXXX", []string{"PARTNAME"}, "PARTNAME"}, // a long prefix match is still a plausible slip
		{"CDE", []string{"CUSTDES", "CDES"}, "CDES"},
		{"ORDNAEM", []string{"ORDNAME", "PARTNAME"}, "ORDNAME"},
	}
	for _, tt := range tests {
		if got := Closest(tt.name, tt.cand); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"שלום", "שלם", 1},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestNearest(t *testing.T) {
	t.Parallel()
	cands := []string{"KG", "EA", "BOLT", "NUT"}
	for name, want := range map[string]string{"kg": "KG", "KG": "KG", "bolts": "BOLT", "nutt": "NUT", "m": "", "barrel": ""} {
		if got := Nearest(name, cands); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestHint: every message words a suggestion one way, the name quoted;
// nothing when no name is close.
func TestHint(t *testing.T) {
	t.Parallel()
	if got, want := Hint("CUSTDESC", []string{"CUSTNAME", "CUSTDES"}), `; did you mean "CUSTDES"?`; got != want {
		t.Errorf("Hint = %s, want %s", got, want)
	}
	if got := Hint("XYZZY", []string{"CUSTNAME"}); got != "" {
		t.Errorf("Hint of nothing close = %q, want none", got)
	}
}
