package transform

import "testing"

// A row error reads as editors and CI parse it: the source cell first,
// then where the plan writes the field.
func TestRowErrorText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		e    RowError
		want string
	}{
		{RowError{Cell: "orders.xlsx!Lines!D17", Field: "PRICE", Plan: "plan.yaml:31:9", Message: `"12,5x" is not a decimal (Edm.Decimal)`},
			`orders.xlsx!Lines!D17 (plan.yaml:31:9 PRICE): "12,5x" is not a decimal (Edm.Decimal)`},
		{RowError{Cell: "orders.csv:4", Plan: "plan.yaml:12:11", Message: "when must be true or false, got text"},
			`orders.csv:4 (plan.yaml:12:11): when must be true or false, got text`},
		{RowError{Cell: "orders.csv:4", Field: "PRICE", Message: "refused"},
			`orders.csv:4: PRICE: refused`},
		{RowError{Cell: "orders.xlsx!Lines!C9", Message: "the cell holds #DIV/0!"},
			`orders.xlsx!Lines!C9: the cell holds #DIV/0!`},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
