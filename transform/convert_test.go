package transform

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/source"
)

var tenth, fifth, price = 0.1, 0.2, 19.99

func TestConvert(t *testing.T) {
	t.Parallel()
	jlm, _ := time.LoadLocation("Asia/Jerusalem")
	dot := &converter{loc: jlm, sep: '.', empty: EmptyOmit}
	comma := &converter{loc: jlm, sep: ',', empty: EmptyOmit}
	str := &odata.Property{Name: "CUSTDES", Type: odata.EdmString, MaxLength: 4}
	i64 := &odata.Property{Name: "QTY", Type: odata.EdmInt64}
	dec := &odata.Property{Name: "PRICE", Type: odata.EdmDecimal}
	dto := &odata.Property{Name: "CURDATE", Type: odata.EdmDateTimeOffset}
	boo := &odata.Property{Name: "FLAG", Type: odata.EdmBoolean}
	edmDate := &odata.Property{Name: "CURDATE", Type: odata.EdmDate}
	edmGuid := &odata.Property{Name: "ID", Type: odata.EdmGuid}
	// What real $metadata declares: Precision/Scale, DateType Date.
	scaled := &odata.Property{Name: "PRICE", Type: odata.EdmDecimal, Precision: 6, Scale: 2, HasScale: true}
	dateOnly := &odata.Property{Name: "CURDATE", Type: odata.EdmDateTimeOffset, DateOnly: true}
	kiritimati, _ := time.LoadLocation("Pacific/Kiritimati")
	farEast := &converter{loc: kiritimati, sep: '.', empty: EmptyOmit}
	farWest := &converter{loc: time.FixedZone("-11", -11*3600), sep: '.', empty: EmptyOmit}
	tests := []struct {
		name string
		c    *converter
		v    any
		prop *odata.Property
		want any
		omit bool
		err  string
	}{
		{name: "string", c: dot, v: "abcd", prop: str, want: "abcd"},
		{name: "hebrew max length counts characters", c: dot, v: "שלום", prop: str, want: "שלום"},
		{name: "hebrew too long", c: dot, v: "שלומי", prop: str, err: `"שלומי" is 5 characters, longer than the 4 of Edm.String(MaxLength 4)`},
		{name: "number as string", c: dot, v: source.Number("12.5"), prop: str, want: "12.5"},
		{name: "int as string", c: dot, v: 42, prop: str, want: "42"},
		{name: "float as string", c: dot, v: 2.5, prop: str, want: "2.5"},
		{name: "date as string", c: dot, v: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), prop: &odata.Property{Type: odata.EdmString}, want: "2024-01-02"},
		{name: "list as string", c: dot, v: []any{"a"}, prop: str, err: "a list of 1 is not text (Edm.String)"},
		{name: "int64 text", c: dot, v: "12", prop: i64, want: int64(12)},
		{name: "int64 spaces", c: dot, v: " -7 ", prop: i64, want: int64(-7)},
		{name: "int64 number cell", c: dot, v: source.Number("30"), prop: i64, want: int64(30)},
		{name: "int64 whole float", c: dot, v: 3.0, prop: i64, want: int64(3)},
		{name: "int64 fraction", c: dot, v: "12.5", prop: i64, err: `"12.5" is not a whole number (Edm.Int64)`},
		{name: "int64 float fraction", c: dot, v: 2.5, prop: i64, err: `number 2.5 is not a whole number (Edm.Int64)`},
		{name: "int64 bool", c: dot, v: true, prop: i64, err: `boolean true is not a whole number (Edm.Int64)`},
		// The standard's other types (docs/other-services.md, What differs).
		{name: "byte in range", c: dot, v: "255", prop: &odata.Property{Type: odata.EdmByte}, want: int64(255)},
		{name: "byte too big", c: dot, v: "256", prop: &odata.Property{Type: odata.EdmByte}, err: `256 is outside what Edm.Byte holds (0 to 255)`},
		{name: "sbyte too small", c: dot, v: "-129", prop: &odata.Property{Type: odata.EdmSByte}, err: `-129 is outside what Edm.SByte holds (-128 to 127)`},
		{name: "int16 too big", c: dot, v: source.Number("40000"), prop: &odata.Property{Type: odata.EdmInt16}, err: `40000 is outside what Edm.Int16 holds (-32768 to 32767)`},
		{name: "int32 too big", c: dot, v: "2147483648", prop: &odata.Property{Type: odata.EdmInt32}, err: `2147483648 is outside what Edm.Int32 holds (-2147483648 to 2147483647)`},
		{name: "int32 at its end", c: dot, v: "-2147483648", prop: &odata.Property{Type: odata.EdmInt32}, want: int64(-2147483648)},
		{name: "time of day text", c: dot, v: "9:30", prop: &odata.Property{Type: odata.EdmTimeOfDay}, want: "09:30:00"},
		{name: "time of day hh:mm", c: dot, v: "09:30", prop: &odata.Property{Type: odata.EdmTimeOfDay}, want: "09:30:00"},
		{name: "time of day fraction", c: dot, v: "23:59:59.25", prop: &odata.Property{Type: odata.EdmTimeOfDay}, want: "23:59:59.25"},
		{name: "time of day from a time cell", c: dot, v: time.Date(1899, 12, 31, 14, 5, 0, 0, time.UTC), prop: &odata.Property{Type: odata.EdmTimeOfDay}, want: "14:05:00"},
		{name: "time of day not", c: dot, v: "noon", prop: &odata.Property{Type: odata.EdmTimeOfDay}, err: `"noon" is not a time of day (write 15:04 or 15:04:05) (Edm.TimeOfDay)`},
		{name: "duration", c: dot, v: " P1DT2H30M ", prop: &odata.Property{Type: odata.EdmDuration}, want: "P1DT2H30M"},
		{name: "duration seconds", c: dot, v: "PT0.5S", prop: &odata.Property{Type: odata.EdmDuration}, want: "PT0.5S"},
		{name: "duration empty", c: dot, v: "PT", prop: &odata.Property{Type: odata.EdmDuration}, err: `"PT" is not a duration (write it as ISO 8601: P1DT2H30M, PT45S) (Edm.Duration)`},
		{name: "duration a number", c: dot, v: source.Number("90"), prop: &odata.Property{Type: odata.EdmDuration}, err: `"90" is not a duration (write it as ISO 8601: P1DT2H30M, PT45S) (Edm.Duration)`},
		{name: "decimal dot", c: dot, v: "12.50", prop: dec, want: mustDec("12.50")},
		{name: "decimal comma source", c: comma, v: "12,5", prop: dec, want: mustDec("12.5")},
		{name: "decimal comma in dot source", c: dot, v: "12,5", prop: dec, err: `"12,5" is not a decimal (Edm.Decimal); set decimal_separator: ","`},
		{name: "decimal dot in comma source", c: comma, v: "12.5", prop: dec, err: `"12.5" is not a decimal (Edm.Decimal); set decimal_separator: "."`},
		{name: "decimal number cell ignores comma", c: comma, v: source.Number("12.5"), prop: dec, want: mustDec("12.5")},
		{name: "decimal from int", c: dot, v: 7, prop: dec, want: mustDec("7")},
		{name: "decimal from float arithmetic", c: dot, v: tenth + fifth, prop: dec, want: mustDec("0.3")},
		{name: "decimal from price times quantity", c: dot, v: price * 3, prop: dec, want: mustDec("59.97")},
		{name: "decimal from NaN", c: dot, v: math.NaN(), prop: dec, err: "number NaN is not a decimal (Edm.Decimal)"},
		{name: "decimal garbage", c: dot, v: "1,23.5", prop: dec, err: `"1,23.5" is not a decimal (Edm.Decimal)`},
		// Thousands grouped as spreadsheets write them.
		{name: "thousands comma under dot", c: dot, v: "1,234.5", prop: dec, want: mustDec("1234.5")},
		{name: "thousands dot under comma", c: comma, v: "1.234,50", prop: dec, want: mustDec("1234.50")},
		{name: "millions dot under comma", c: comma, v: "-1.234.567", prop: dec, want: mustDec("-1234567")},
		{name: "thousands space", c: comma, v: "1 234,5", prop: dec, want: mustDec("1234.5")},
		{name: "thousands no-break space", c: dot, v: "12\u00a0345.25", prop: dec, want: mustDec("12345.25")},
		{name: "thousands narrow no-break space", c: comma, v: "1\u202f000\u202f000", prop: dec, want: mustDec("1000000")},
		{name: "thousands mixed marks", c: comma, v: "1.234 567,5", prop: dec, err: `"1.234 567,5" is not a decimal (Edm.Decimal)`},
		{name: "thousands group of two", c: comma, v: "1.23,5", prop: dec, err: `"1.23,5" is not a decimal (Edm.Decimal)`},
		{name: "thousands in the fraction", c: comma, v: "1,234.5", prop: dec, err: `"1,234.5" is not a decimal (Edm.Decimal); set decimal_separator: "."`},
		{name: "leading zero group is a decimal", c: comma, v: "0.250", prop: dec, err: `"0.250" is not a decimal (Edm.Decimal); set decimal_separator: "."`},
		{name: "one group reads two ways", c: comma, v: "1.234", prop: dec, err: `"1.234" reads two ways under decimal_separator: ",": 1234 with "." between thousands, or 1,234; write it as 1234 or 1,234, or set decimal_separator: "." if the file writes decimals with "." (Edm.Decimal)`},
		{name: "one group reads two ways under dot", c: dot, v: "12,500", prop: dec, err: `"12,500" reads two ways under decimal_separator: ".": 12500 with "," between thousands, or 12.500; write it as 12500 or 12.500, or set decimal_separator: "," if the file writes decimals with "," (Edm.Decimal)`},
		{name: "date text", c: dot, v: "2024-12-31", prop: dto, want: time.Date(2024, 12, 31, 0, 0, 0, 0, jlm)},
		{name: "datetime text", c: dot, v: "2024-12-31T08:30:00", prop: dto, want: time.Date(2024, 12, 31, 8, 30, 0, 0, jlm)},
		{name: "datetime with offset keeps instant", c: dot, v: "2024-12-31T08:30:00+00:00", prop: dto, want: time.Date(2024, 12, 31, 10, 30, 0, 0, jlm)},
		{name: "typed cell is wall clock", c: dot, v: time.Date(2024, 6, 1, 9, 0, 0, 0, time.UTC), prop: dto, want: time.Date(2024, 6, 1, 9, 0, 0, 0, jlm)},
		{name: "date text bad", c: dot, v: "31/12/2024", prop: dto, err: `"31/12/2024" is not a date (Edm.DateTimeOffset); write it as 2006-01-02 or 2006-01-02T15:04:05, or use date(x, layout)`},
		{name: "date from number", c: dot, v: source.Number("45657"), prop: dto, err: `number 45657 is not a date (Edm.DateTimeOffset); use date(x) to read it`},
		{name: "scale fits", c: dot, v: "1234.5", prop: scaled, want: mustDec("1234.5")},
		{name: "scale trailing zeros fit", c: dot, v: "12.5000", prop: scaled, want: mustDec("12.5000")},
		{name: "scale too many decimals", c: dot, v: "12.345", prop: scaled, err: `12.345 has 3 digits after the point; PRICE takes 2 (Scale 2), and the server would round it: round it in the source or in the plan`},
		{name: "scale float arithmetic", c: dot, v: price / 3, prop: scaled, err: `6.66333333333333 has 14 digits after the point; PRICE takes 2 (Scale 2), and the server would round it: round it in the source or in the plan`},
		{name: "precision too many whole digits", c: dot, v: "-12345", prop: scaled, err: `-12345 has 5 digits before the point; PRICE takes 4 (Precision 6, Scale 2)`},
		{name: "date-only far east keeps its day", c: farEast, v: "2026-03-01", prop: dateOnly, want: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
		{name: "date-only far west keeps its day", c: farWest, v: "2026-03-01", prop: dateOnly, want: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
		{name: "date-only typed cell", c: farEast, v: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), prop: dateOnly, want: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
		{name: "date-only moment takes the plan zone's day", c: farEast, v: "2026-03-01T20:00:00Z", prop: dateOnly, want: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)},
		{name: "moment keeps the plan zone", c: farEast, v: "2026-03-01", prop: dto, want: time.Date(2026, 3, 1, 0, 0, 0, 0, kiritimati)},
		// Types of other services (docs/other-services.md).
		{name: "Edm.Date is the plan zone's day", c: farEast, v: "2026-03-01T20:00:00Z", prop: edmDate, want: odata.Date("2026-03-02")},
		{name: "Edm.Date typed cell", c: dot, v: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), prop: edmDate, want: odata.Date("2026-03-01")},
		{name: "Edm.Date bad", c: dot, v: "31/12/2024", prop: edmDate, err: `"31/12/2024" is not a date (Edm.Date); write it as 2006-01-02 or 2006-01-02T15:04:05, or use date(x, layout)`},
		{name: "Edm.Guid", c: dot, v: " 3A943E5E-C925-4FAE-B2D5-9E2F0A36C6D8 ", prop: edmGuid, want: odata.Guid("3A943E5E-C925-4FAE-B2D5-9E2F0A36C6D8")},
		{name: "Edm.Guid bad", c: dot, v: "C1001", prop: edmGuid, err: `"C1001" is not a Guid (8-4-4-4-12 hexadecimal digits) (Edm.Guid)`},
		{name: "Edm.Guid from a number", c: dot, v: source.Number("12"), prop: edmGuid, err: `"12" is not a Guid (8-4-4-4-12 hexadecimal digits) (Edm.Guid)`},
		{name: "bool Y", c: dot, v: "Y", prop: boo, want: true},
		{name: "bool n", c: dot, v: "n", prop: boo, want: false},
		{name: "bool 1", c: dot, v: source.Number("1"), prop: boo, want: true},
		{name: "bool true", c: dot, v: true, prop: boo, want: true},
		{name: "bool int 0", c: dot, v: 0, prop: boo, want: false},
		{name: "bool bad", c: dot, v: "maybe", prop: boo, err: `"maybe" is not a boolean (Edm.Boolean); use true/false, Y/N or 1/0`},
		{name: "no metadata keeps value", c: dot, v: source.Number("1.50"), prop: nil, want: source.Number("1.50")},
		{name: "no metadata refuses a map", c: dot, v: map[string]any{}, prop: nil, err: "a row or map cannot be written as a field value"},
		{name: "empty omitted", c: dot, v: "", prop: str, omit: true},
		{name: "nil omitted", c: dot, v: nil, prop: dec, omit: true},
		{name: "blank decimal omitted", c: dot, v: "  ", prop: dec, omit: true},
		{name: "blank string kept as is", c: dot, v: "  ", prop: str, want: "  "},
		{name: "empty null", c: &converter{loc: time.UTC, sep: '.', empty: EmptyNull}, v: "", prop: dec, want: nil},
		{name: "empty keep string", c: &converter{loc: time.UTC, sep: '.', empty: EmptyKeep}, v: nil, prop: str, want: ""},
		{name: "empty keep decimal omitted", c: &converter{loc: time.UTC, sep: '.', empty: EmptyKeep}, v: "", prop: dec, omit: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, omit, err := tt.c.convert(tt.v, tt.prop)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				if _, ok := err.(*convError); !ok {
					t.Fatalf("error is %T, want *convError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if omit != tt.omit {
				t.Fatalf("omit = %v, want %v", omit, tt.omit)
			}
			if !tt.omit && !equalValue(got, tt.want) {
				t.Fatalf("= %#v (%T), want %#v", got, got, tt.want)
			}
		})
	}
}

// TestConvertGolden runs a grid of cell values through every Edm type with
// both separators; testdata/convert.golden holds the outcome (-update).
func TestConvertGolden(t *testing.T) {
	t.Parallel()
	jlm, _ := time.LoadLocation("Asia/Jerusalem")
	values := []any{
		"12", "12.5", "12,5", "-0,50", "+3", "1e3", "1 000", " 7 ", "abc", "", "שלום עולם",
		"2024-02-29", "2024-02-30", "2024-12-31T23:59:59", "2024-12-31T23:59:59+02:00", "Y", "no", "TRUE",
		source.Number("45657"), source.Number("0.1"), int64(9007199254740993), 1.25, true, nil,
		time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), mustDec("3.14"),
	}
	types := []odata.EdmType{odata.EdmString, odata.EdmInt64, odata.EdmDecimal, odata.EdmDateTimeOffset, odata.EdmBoolean}
	var b strings.Builder
	for _, sep := range []byte{'.', ','} {
		c := &converter{loc: jlm, sep: sep, empty: EmptyOmit}
		for _, typ := range types {
			fmt.Fprintf(&b, "## %s, decimal_separator %q\n", typ, string(sep))
			prop := &odata.Property{Name: "F", Type: typ, MaxLength: 8}
			for _, v := range values {
				got, omit, err := c.convert(v, prop)
				switch {
				case err != nil:
					fmt.Fprintf(&b, "%-34s error: %v\n", describe(v), err)
				case omit:
					fmt.Fprintf(&b, "%-34s omitted\n", describe(v))
				default:
					fmt.Fprintf(&b, "%-34s %T %s\n", describe(v), got, wire(got))
				}
			}
		}
	}
	golden.Check(t, "testdata/convert.golden", []byte(b.String()))
}

func wire(v any) string {
	switch x := v.(type) {
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case odata.Decimal:
		return x.String()
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}
