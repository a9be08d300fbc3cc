package diag

import "testing"

func TestPrintable(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"Hebrew שלום and 12,5", "Hebrew שלום and 12,5"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab"},
		{"\x1b[2Jcleared", `\x1b[2Jcleared`},
		{"done\rforged", `done\rforged`},
		{"bell\x07 nul\x00 del\x7f", `bell\x07 nul\x00 del\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`},
		{"not utf-8 \xff\xfe", `not utf-8 \xff\xfe`},
		{"\u00e9 é and \x1b", `é é and \x1b`},
		{"a literal \\x1b stays", `a literal \x1b stays`},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestStringIsPrintable: a row problem carrying a server's message with an
// escape sequence and a carriage return shows them escaped.
func TestStringIsPrintable(t *testing.T) {
	t.Parallel()
	d := New(Error, Point("orders.csv", 3, 0), "the server said \x1b[2J\rrow ok")
	d.Field = "CUST\x1bNAME"
	if got, want := d.String(), `orders.csv:3: CUST\x1bNAME: the server said \x1b[2J\rrow ok`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
