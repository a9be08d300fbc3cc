package profile

import (
	"strings"
	"testing"
)

func TestParseDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // the layout's name, with the column's other values unknown; "" for not a date
	}{
		{"2026-01-05", "yyyy-mm-dd"},
		{"2026/1/5", "yyyy/m/d"},
		{"05/01/2026", "dd/mm/yyyy or mm/dd/yyyy"},
		{"13/01/2026", "dd/mm/yyyy"},
		{"01/13/2026", "mm/dd/yyyy"},
		{"5.1.26", "d.m.yy or m.d.yy"},
		{"2026-01-05T10:30:00", "yyyy-mm-ddThh:mm:ss"},
		{"2026-01-05T10:30:00.123Z", "yyyy-mm-ddThh:mm:ss.fffZ"},
		{"2026-01-05T10:30:00+02:00", "yyyy-mm-ddThh:mm:ss±hh:mm"},
		{"05/01/2026 10:30", "dd/mm/yyyy hh:mm or mm/dd/yyyy hh:mm"},
		// Not dates: part numbers, numbers, versions, impossible days.
		{"12-34-56", ""},
		{"B-100", ""},
		{"12.5", ""},
		{"1.2.3", ""},
		{"2026-13-01", ""},
		{"32/01/2026", ""},
		{"13/13/2026", ""},
		{"2026-01-05 10", ""},
		{"2026-01-05T10:30:00+0200", ""},
		{"05/01-2026", ""},
		{"05//2026", ""},
		{"2026-01-", ""},
		{"", ""},
	}
	for _, tt := range tests {
		sh, a, b, ok := parseDate(tt.in)
		got := ""
		if ok {
			s := &shapeAcc{shape: sh, firstOver12: a > 12, secondOver12: b > 12}
			got = s.name()
		}
		if got != tt.want {
			t.Errorf("parseDate(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A column that holds both orders says so.
func TestDateLayoutMixed(t *testing.T) {
	t.Parallel()
	s := &shapeAcc{}
	for _, v := range []string{"13/01/2026", "01/13/2026"} {
		sh, a, b, _ := parseDate(v)
		s.shape = sh
		s.firstOver12 = s.firstOver12 || a > 12
		s.secondOver12 = s.secondOver12 || b > 12
	}
	if got, want := s.name(), "dd/mm/yyyy and mm/dd/yyyy"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2026-01-05", "05/01/2026", "5.1.26 10:30", "2026-01-05T10:30:00.5+02:00", "1/2/3", "T", " "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, a, b, ok := parseDate(s)
		if !ok {
			return
		}
		// A date is digits and its separators: never longer than its text,
		// its day and month in range, and its layout names every group.
		if a < 0 || a > 31 || b < 0 || b > 31 {
			t.Fatalf("parseDate(%q): groups %d, %d out of range", s, a, b)
		}
		name := (&shapeAcc{shape: sh}).name()
		if !strings.Contains(name, "yy") || (!strings.Contains(name, "d") || !strings.Contains(name, "m")) {
			t.Fatalf("parseDate(%q): layout %q", s, name)
		}
		if len(strings.TrimSpace(s)) != len(s) && sh.time == "" {
			t.Fatalf("parseDate(%q): spaces taken for a date", s)
		}
	})
}

func FuzzIsNumber(f *testing.F) {
	for _, s := range []string{"12", "-1.5", "1,5", "+3", ".5", "5.", "1e3", ""} {
		f.Add(s, byte('.'))
	}
	f.Fuzz(func(t *testing.T, s string, dec byte) {
		if dec != ',' {
			dec = '.'
		}
		if !isNumber(s, dec) {
			return
		}
		// What it takes is what number() takes: digits, one separator
		// between digits, a sign first.
		body := strings.TrimLeft(s, "+-")
		if len(s)-len(body) > 1 || body == "" || body[0] == dec || body[len(body)-1] == dec || strings.Count(body, string(dec)) > 1 {
			t.Fatalf("isNumber(%q, %q) = true", s, dec)
		}
		for _, c := range strings.ReplaceAll(body, string(dec), "") {
			if c < '0' || c > '9' {
				t.Fatalf("isNumber(%q, %q) = true", s, dec)
			}
		}
	})
}
