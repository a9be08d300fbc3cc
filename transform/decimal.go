package transform

import (
	"fmt"
	"math/big"
	"reflect"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/migrate-tool/migrate/odata"
)

// Arithmetic on decimals. number() gives an exact odata.Decimal; these
// overloads let + - * and the comparisons work on it (with another decimal,
// an int or a float from arithmetic) without going through float64, so
// number(row.Price) * int(row.Qty) is exact to the last digit:
//
//	PRICE: number(row.Price, ",") * 1.17
//	when:  number(row.Qty) > 0
//
// Division is left to floats (int(x) / 2 is a float); wrap a float result in
// number() to make it a decimal again.
var decimalOps = []struct {
	op, fn string
	calc   func(a, b *big.Rat, pa, pb int) (any, error)
}{
	{"+", "decimal_add", func(a, b *big.Rat, pa, pb int) (any, error) { return ratDecimal(new(big.Rat).Add(a, b), max(pa, pb)) }},
	{"-", "decimal_sub", func(a, b *big.Rat, pa, pb int) (any, error) { return ratDecimal(new(big.Rat).Sub(a, b), max(pa, pb)) }},
	{"*", "decimal_mul", func(a, b *big.Rat, pa, pb int) (any, error) { return ratDecimal(new(big.Rat).Mul(a, b), pa+pb) }},
	{"<", "decimal_lt", func(a, b *big.Rat, _, _ int) (any, error) { return a.Cmp(b) < 0, nil }},
	{"<=", "decimal_le", func(a, b *big.Rat, _, _ int) (any, error) { return a.Cmp(b) <= 0, nil }},
	{">", "decimal_gt", func(a, b *big.Rat, _, _ int) (any, error) { return a.Cmp(b) > 0, nil }},
	{">=", "decimal_ge", func(a, b *big.Rat, _, _ int) (any, error) { return a.Cmp(b) >= 0, nil }},
	{"==", "decimal_eq", func(a, b *big.Rat, _, _ int) (any, error) { return a.Cmp(b) == 0, nil }},
	{"!=", "decimal_ne", func(a, b *big.Rat, _, _ int) (any, error) { return a.Cmp(b) != 0, nil }},
}

// maxDecimalPlaces bounds the places a product may carry.
const maxDecimalPlaces = 64

func ratDecimal(r *big.Rat, places int) (any, error) {
	places = min(places, maxDecimalPlaces)
	return odata.ParseDecimal(r.FloatString(places), '.')
}

// decimalOperand reads one side of a decimal operation and its places.
func decimalOperand(op string, i int, v any) (*big.Rat, int, error) {
	switch v.(type) {
	case odata.Decimal, int, int64, float64:
	default:
		return nil, 0, fmt.Errorf("%s: operand %d must be a number, got %s", op, i, describe(v))
	}
	d, err := toDecimal(v, '.')
	if err != nil {
		return nil, 0, fmt.Errorf("%s: operand %d: %s is not a number", op, i, describe(v))
	}
	s := d.String()
	places := 0
	if j := strings.IndexByte(s, '.'); j >= 0 {
		places = len(s) - j - 1
	}
	return d.Rat(), places, nil
}

func (p *Program) decimalOperators() []expr.Option {
	var opts []expr.Option
	dec := odata.Decimal{}
	for _, o := range decimalOps {
		o := o
		var result any = dec
		if o.op != "+" && o.op != "-" && o.op != "*" {
			result = false
		}
		fnType := func(a, b any) any {
			return typedFunc(a, b, result)
		}
		types := []any{
			fnType(dec, dec), fnType(dec, 0), fnType(0, dec), fnType(dec, int64(0)), fnType(int64(0), dec),
			fnType(dec, 0.0), fnType(0.0, dec),
		}
		opts = append(opts,
			expr.Function(o.fn, func(params ...any) (any, error) {
				if err := arity(o.op, params, 2, 2); err != nil {
					return nil, err
				}
				a, pa, err := decimalOperand(o.op, 1, params[0])
				if err != nil {
					return nil, err
				}
				b, pb, err := decimalOperand(o.op, 2, params[1])
				if err != nil {
					return nil, err
				}
				return o.calc(a, b, pa, pb)
			}, types...),
			expr.Operator(o.op, o.fn))
	}
	return opts
}

// typedFunc is a *func(A, B) R, as expr.Function wants to declare a signature.
func typedFunc(a, b, result any) any {
	ft := reflect.FuncOf([]reflect.Type{reflect.TypeOf(a), reflect.TypeOf(b)}, []reflect.Type{reflect.TypeOf(result)}, false)
	return reflect.New(ft).Interface()
}
