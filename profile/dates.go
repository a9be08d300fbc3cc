package profile

import "strings"

// dateShape is the layout of a text that reads as a date, before the
// column's other values say which of two small numbers is the day:
// "NN/NN/NNNN" holds 02/01/2006 and 01/02/2006 alike.
type dateShape struct {
	// yearFirst: yyyy-mm-dd; else the year is last and the first two
	// groups are a day and a month in an order the column decides.
	yearFirst bool
	sep       byte
	lens      [3]int // digits in each group
	time      string // the time's layout after the date ("Thh:mm:ss"), or ""
}

// parseDate reads s as a date written in digits: three groups of digits
// with one separator (/ . -), the year four digits first or two or four
// digits last, and an optional time (hh:mm, hh:mm:ss, fractions, Z or an
// offset) after a space or a T. a and b are the first two groups of a
// year-last date, for telling the day from the month; ok is false for
// anything else, so a part number such as 12-34-56 with no year of four
// digits and no day is never taken for a date.
func parseDate(s string) (shape dateShape, a, b int, ok bool) {
	date, clock := s, ""
	if i := strings.IndexAny(s, " T"); i >= 0 {
		date, clock = s[:i], s[i:]
	}
	var groups [3]string
	n := 0
	for i := 0; i < len(date); {
		j := i
		for j < len(date) && date[j] >= '0' && date[j] <= '9' {
			j++
		}
		if j == i || n == 3 {
			return dateShape{}, 0, 0, false
		}
		groups[n] = date[i:j]
		n++
		if j == len(date) {
			break
		}
		sep := date[j]
		if sep != '/' && sep != '.' && sep != '-' || n > 2 || shape.sep != 0 && sep != shape.sep {
			return dateShape{}, 0, 0, false
		}
		shape.sep = sep
		i = j + 1
		if i == len(date) {
			return dateShape{}, 0, 0, false
		}
	}
	if n != 3 {
		return dateShape{}, 0, 0, false
	}
	for k, g := range groups {
		shape.lens[k] = len(g)
	}
	num := func(g string) int {
		v := 0
		for _, c := range g {
			v = v*10 + int(c-'0')
		}
		return v
	}
	x, y, z := num(groups[0]), num(groups[1]), num(groups[2])
	switch {
	case len(groups[0]) == 4 && len(groups[1]) <= 2 && len(groups[2]) <= 2:
		if y < 1 || y > 12 || z < 1 || z > 31 {
			return dateShape{}, 0, 0, false
		}
		shape.yearFirst = true
	case (len(groups[2]) == 4 || len(groups[2]) == 2) && len(groups[0]) <= 2 && len(groups[1]) <= 2:
		if x < 1 || y < 1 || x > 31 || y > 31 || x > 12 && y > 12 {
			return dateShape{}, 0, 0, false
		}
		a, b = x, y
	default:
		return dateShape{}, 0, 0, false
	}
	if clock != "" {
		t, ok := clockLayout(clock)
		if !ok {
			return dateShape{}, 0, 0, false
		}
		shape.time = t
	}
	return shape, a, b, true
}

// clockLayout names the layout of a time after a date: its first byte is
// the space or T that joins them.
func clockLayout(s string) (string, bool) {
	out := []byte{s[0]}
	s = s[1:]
	parts := 0
	for parts < 3 {
		if len(s) < 2 || !digit(s[0]) || !digit(s[1]) {
			return "", false
		}
		out = append(out, []string{"hh", "mm", "ss"}[parts]...)
		s = s[2:]
		parts++
		if len(s) == 0 || s[0] != ':' || parts == 3 {
			break
		}
		out = append(out, ':')
		s = s[1:]
	}
	if parts < 2 {
		return "", false
	}
	if len(s) > 0 && s[0] == '.' && parts == 3 {
		i := 1
		for i < len(s) && digit(s[i]) {
			i++
		}
		if i == 1 {
			return "", false
		}
		out = append(out, ".fff"...)
		s = s[i:]
	}
	switch {
	case s == "":
	case s == "Z":
		out = append(out, 'Z')
	case len(s) == 6 && (s[0] == '+' || s[0] == '-') && digit(s[1]) && digit(s[2]) && s[3] == ':' && digit(s[4]) && digit(s[5]):
		out = append(out, "±hh:mm"...)
	default:
		return "", false
	}
	return string(out), true
}

func digit(c byte) bool { return c >= '0' && c <= '9' }

// shapeAcc is what a column saw of one shape.
type shapeAcc struct {
	shape        dateShape
	firstOver12  bool // a first group above 12: the first is the day
	secondOver12 bool
	count        int
	cells        cells
}

// name spells the shape's layout for a person: yyyy-mm-dd, dd/mm/yyyy,
// mm/dd/yy, or "dd/mm/yyyy or mm/dd/yyyy" while every value seen could be
// either, and "dd/mm/yyyy and mm/dd/yyyy" when the column holds both.
func (s *shapeAcc) name() string {
	sh := s.shape
	group := func(letter byte, n int) string {
		if n == 1 {
			return string(letter)
		}
		return strings.Repeat(string(letter), n)
	}
	sep := string(sh.sep)
	if sh.yearFirst {
		return "yyyy" + sep + group('m', sh.lens[1]) + sep + group('d', sh.lens[2]) + sh.time
	}
	year := group('y', sh.lens[2])
	dm := group('d', sh.lens[0]) + sep + group('m', sh.lens[1]) + sep + year + sh.time
	md := group('m', sh.lens[0]) + sep + group('d', sh.lens[1]) + sep + year + sh.time
	switch {
	case s.firstOver12 && s.secondOver12:
		return dm + " and " + md
	case s.firstOver12:
		return dm
	case s.secondOver12:
		return md
	default:
		return dm + " or " + md
	}
}
