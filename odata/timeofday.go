package odata

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"
)

// Integer says whether t is an integer type.
func (t EdmType) Integer() bool {
	switch t {
	case EdmInt64, EdmInt32, EdmInt16, EdmByte, EdmSByte:
		return true
	}
	return false
}

// Numeric says whether t is a number: an integer, Edm.Decimal, or a
// floating point type.
func (t EdmType) Numeric() bool {
	return t.Integer() || t == EdmDecimal || t == "Edm.Double" || t == "Edm.Single"
}

// IntRange is the values an integer type holds; ok is false for a type
// that is not a bounded integer (Edm.Int64 holds every int64).
func IntRange(t EdmType) (lo, hi int64, ok bool) {
	switch t {
	case EdmInt32:
		return -1 << 31, 1<<31 - 1, true
	case EdmInt16:
		return -1 << 15, 1<<15 - 1, true
	case EdmByte:
		return 0, 255, true
	case EdmSByte:
		return -128, 127, true
	}
	return 0, 0, false
}

// TimeOfDayLayout is how the standard writes an Edm.TimeOfDay: 15:04:05,
// with the fraction of a second when there is one.
const TimeOfDayLayout = "15:04:05.999999999"

// ParseTimeOfDay reads a time of day written 15:04, 15:04:05 or with a
// fraction of a second (15:04:05.25), as the standard and spreadsheets
// write one.
func ParseTimeOfDay(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"15:04:05.999999999", "15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time of day (write 15:04 or 15:04:05)", s)
}

// durationText is an ISO 8601 duration as the standard writes one:
// [-]P[nD][T[nH][nM][n[.n]S]], at least one part.
var durationText = regexp.MustCompile(`^(-?)P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// ParseDuration reads an Edm.Duration (P1DT2H30M, PT0.5S, -P3D) as the
// seconds it lasts, exactly.
func ParseDuration(s string) (*big.Rat, error) {
	s = strings.TrimSpace(s)
	m := durationText.FindStringSubmatch(s)
	if m == nil || strings.HasSuffix(s, "P") || strings.HasSuffix(s, "T") {
		return nil, fmt.Errorf("%q is not a duration (write it as ISO 8601: P1DT2H30M, PT45S)", s)
	}
	total := new(big.Rat)
	for i, unit := range []int64{86400, 3600, 60} {
		if m[i+2] != "" {
			n, _ := new(big.Rat).SetString(m[i+2])
			total.Add(total, n.Mul(n, big.NewRat(unit, 1)))
		}
	}
	if m[5] != "" {
		n, _ := new(big.Rat).SetString(m[5])
		total.Add(total, n)
	}
	if m[1] == "-" {
		total.Neg(total)
	}
	return total, nil
}
