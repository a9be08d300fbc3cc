package executor

import "testing"

// TestCause: problems that differ only in the value they name, or the key
// the server quotes, are one cause; other text is kept.
func TestCause(t *testing.T) {
	t.Parallel()
	tests := []struct{ message, value, want string }{
		{`PARTNAME "X-999" is not in LOGPART on the target`, "X-999", `PARTNAME … is not in LOGPART on the target`},
		{`a value of 24 characters, longer than MaxLength 16`, "", `a value of 24 characters, longer than MaxLength 16`},
		{`LOGPART: Line 1- A record with key ('B-100') already exists. (HTTP 409)`, "", `LOGPART: Line 1- A record with key (…) already exists. (HTTP 409)`},
		{`A record with key ('SO1', 2) already exists. (HTTP 409)`, "", `A record with key (…) already exists. (HTTP 409)`},
		{`the customer's phone isn't valid`, "", `the customer's phone isn't valid`},
	}
	for _, tt := range tests {
		if got := Cause(tt.message, tt.value); got != tt.want {
			t.Errorf("Cause(%q, %q) = %q, want %q", tt.message, tt.value, got, tt.want)
		}
	}
}
