package transform

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/source"
)

// Layouts tried for text dates when no layout is given: with an offset the
// text keeps it; without one the plan's timezone applies.
var (
	offsetLayouts = []string{
		time.RFC3339Nano,
		"2006-01-02T15:04Z07:00",
		"2006-01-02 15:04:05Z07:00",
	}
	localLayouts = []string{
		"2006-01-02",
		"2006-01-02T15:04:05",
		"2006-01-02T15:04:05.999999999",
		"2006-01-02T15:04",
		"2006-01-02 15:04:05",
		"2006-01-02 15:04",
	}
)

// excelEpoch is day 0 of Excel's 1900 date system as it counts in practice
// (it believes 1900 was a leap year, so serials from 61 on count from here).
var excelEpoch = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

// maxExcelSerial is 9999-12-31, the last day Excel can show.
const maxExcelSerial = 2958465

// fromExcelSerial turns an Excel serial day number (with a fraction for the
// time of day) into a wall-clock time in loc.
func fromExcelSerial(f float64, loc *time.Location) (time.Time, error) {
	if math.IsNaN(f) || f < 1 || f >= maxExcelSerial+1 {
		return time.Time{}, fmt.Errorf("%s is not an Excel date serial number (1 to %d)", strconv.FormatFloat(f, 'f', -1, 64), maxExcelSerial)
	}
	days := math.Floor(f)
	if days < 61 {
		days++ // serials 1..60 count from 1899-12-31 (60 is the phantom 1900-02-29)
	}
	secs := math.Round((f - math.Floor(f)) * 86400)
	t := excelEpoch.AddDate(0, 0, int(days)).Add(time.Duration(secs) * time.Second)
	return wallClock(t, loc), nil
}

// wallClock reads t's date and clock as they are written and places them in loc.
func wallClock(t time.Time, loc *time.Location) time.Time {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), loc)
}

// inZone places a time value in the plan's timezone: a typed cell (UTC
// wall-clock, as the workbook shows it) keeps its wall clock; a moment that
// carries an offset keeps its instant.
func inZone(t time.Time, loc *time.Location) time.Time {
	if t.Location() == time.UTC {
		return wallClock(t, loc)
	}
	return t.In(loc)
}

// parseTimeText reads text by the given layouts, or by the common ISO
// layouts when none is given. A layout without an offset reads the text in loc.
func parseTimeText(s string, layouts []string, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(layouts) == 0 {
		// Only text with a zone after its date can match an offset layout;
		// trying them on the rest would cost an error value per cell.
		if len(s) > 10 && strings.ContainsAny(s[10:], "Z+-") {
			for _, l := range offsetLayouts {
				if t, err := time.Parse(l, s); err == nil {
					return t.In(loc), true
				}
			}
		}
		layouts = localLayouts
	}
	for _, l := range layouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t.In(loc), true
		}
	}
	return time.Time{}, false
}

// toTime implements date() and datetime(): x is a typed date cell, text, or
// an Excel serial number. It returns nil for an empty x.
func toTime(fn string, x any, layouts []string, loc *time.Location, dateOnly bool) (any, error) {
	var t time.Time
	switch v := x.(type) {
	case nil:
		return nil, nil
	case time.Time:
		t = inZone(v, loc)
	case string:
		if strings.TrimSpace(v) == "" {
			return nil, nil
		}
		var ok bool
		t, ok = parseTimeText(v, layouts, loc)
		if !ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && len(layouts) == 0 {
				var serr error
				if t, serr = fromExcelSerial(f, loc); serr != nil {
					return nil, fmt.Errorf("%s: %w", fn, serr)
				}
				break
			}
			if len(layouts) == 0 {
				return nil, fmt.Errorf("%s: %s is not a date in a known layout (2006-01-02, 2006-01-02T15:04:05); give its layout, e.g. %s(x, \"02/01/2006\")", fn, quote(v), fn)
			}
			return nil, fmt.Errorf("%s: %s does not match the layout %s", fn, quote(v), layoutList(layouts))
		}
	case source.Number, odata.Decimal, int, int64, float64:
		s, _ := asText(v)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s is not an Excel date serial number", fn, describe(v))
		}
		if t, err = fromExcelSerial(f, loc); err != nil {
			return nil, fmt.Errorf("%s: %w", fn, err)
		}
	default:
		return nil, fmt.Errorf("%s: argument 1 must be a date, text or an Excel serial number, got %s", fn, describe(x))
	}
	if dateOnly {
		y, m, d := t.Date()
		t = time.Date(y, m, d, 0, 0, 0, 0, loc)
	}
	return t, nil
}

func layoutList(layouts []string) string {
	q := make([]string, len(layouts))
	for i, l := range layouts {
		q[i] = strconv.Quote(l)
	}
	return strings.Join(q, " or ")
}
