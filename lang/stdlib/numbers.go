package stdlib

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/expr"
)

// registerNumbers adds num, int, round, floor, ceil, abs, clamp and fixed (docs/DECISIONS.md §5,
// §10).
func registerNumbers(env *expr.Env) {
	m := expr.Method()
	env.Register("num", fnNum(false), m, expr.Args(1, 2))
	env.Register("int", fnNum(true), m, expr.Args(1, 2))
	env.Register("round", fnRound, m, expr.Args(1, 2))
	env.Register("floor", mathFn(math.Floor), m, expr.Args(1, 1))
	env.Register("ceil", mathFn(math.Ceil), m, expr.Args(1, 1))
	env.Register("abs", mathFn(math.Abs), m, expr.Args(1, 1))
	env.Register("clamp", fnClamp, m, expr.Args(3, 3))
	env.Register("fixed", fnFixed, m, expr.Args(2, 2))
}

// ParseNum reads a number the way num does (docs/DECISIONS.md §10): optional spaces and a currency
// sign (¥ ￥ $), then a number with an optional sign and thousands commas (groups of three
// digits), then any trailing text (a unit such as 元, 人, %), which is ignored. It reports false
// when there is no number where one must start.
func ParseNum(s string) (float64, bool) {
	i := 0
	skipSpace := func() {
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsSpace(r) && r != '\u00a0' && r != '\u3000' {
				return
			}
			i += size
		}
	}
	skipSpace()
	neg := false
	sign := func() {
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			neg = s[i] == '-'
			i++
		}
	}
	sign()
	for _, cur := range []string{"¥", "￥", "$"} {
		if strings.HasPrefix(s[i:], cur) {
			i += len(cur)
			skipSpace()
			if !neg {
				sign()
			}
			break
		}
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	var digits []byte // only when thousands commas must be removed
	if n := i - start; n >= 1 && n <= 3 {
		for i < len(s) && s[i] == ',' && isDigits(s, i+1, 3) && (i+4 == len(s) || s[i+4] < '0' || s[i+4] > '9') {
			if digits == nil {
				digits = append(make([]byte, 0, 16), s[start:i]...)
			}
			digits = append(digits, s[i+1:i+4]...)
			i += 4
		}
	}
	intEnd := i
	frac := 0
	if i < len(s) && s[i] == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			frac++
		}
	}
	if intEnd == start && frac == 0 {
		return 0, false
	}
	if i+1 < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if s[j] == '+' || s[j] == '-' {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			i = j
		}
	}
	text := s[start:i]
	if digits != nil {
		digits = append(digits, s[intEnd:i]...)
		text = string(digits)
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func isDigits(s string, at, n int) bool {
	if at+n > len(s) {
		return false
	}
	for k := at; k < at+n; k++ {
		if s[k] < '0' || s[k] > '9' {
			return false
		}
	}
	return true
}

// fnNum is num(x, default?) and int(x, default?) (truncated): a number from a number or a
// string; default (else null) when there is none.
func fnNum(trunc bool) expr.Builtin {
	return func(c *expr.Call, args []any) (any, error) {
		var def any
		if len(args) > 1 {
			def = args[1]
		}
		var f float64
		switch x := args[0].(type) {
		case float64:
			f = x
		case string:
			if err := c.Charge(len(x) / 1024); err != nil {
				return nil, err
			}
			v, ok := ParseNum(x)
			if !ok {
				return def, nil
			}
			f = v
		default:
			return def, nil
		}
		if math.IsNaN(f) {
			return def, nil
		}
		if trunc {
			f = math.Trunc(f)
		}
		return expr.NumberValue(f), nil
	}
}

func mathFn(f func(float64) float64) expr.Builtin {
	return func(c *expr.Call, args []any) (any, error) {
		x, err := argNumber(args, 0)
		if err != nil {
			return nil, err
		}
		return f(x), nil
	}
}

// fnRound is round(x, digits = 0): halves round up (toward +∞) as JavaScript's Math.round does;
// digits may be negative (round(1234, -2) is 1200).
func fnRound(c *expr.Call, args []any) (any, error) {
	x, err := argNumber(args, 0)
	if err != nil {
		return nil, err
	}
	d, err := optInt(args, 1, 0)
	if err != nil {
		return nil, err
	}
	if d < -20 || d > 20 {
		return nil, fmt.Errorf("digits must be between -20 and 20, got %d", d)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x, nil
	}
	if d == 0 {
		return math.Floor(x + 0.5), nil
	}
	// Round the decimal spelling, not x·10^d, so round(1.005, 2) is 1.01 as people expect.
	p := math.Pow10(d)
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if v, err := strconv.ParseFloat(s+"e"+strconv.Itoa(d), 64); err == nil {
		return math.Floor(v+0.5) / p, nil
	}
	return math.Floor(x*p+0.5) / p, nil
}

// fnClamp is clamp(x, lo, hi).
func fnClamp(c *expr.Call, args []any) (any, error) {
	x, err := argNumber(args, 0)
	if err != nil {
		return nil, err
	}
	lo, err := argNumber(args, 1)
	if err != nil {
		return nil, err
	}
	hi, err := argNumber(args, 2)
	if err != nil {
		return nil, err
	}
	if lo > hi {
		return nil, fmt.Errorf("lo (%s) is greater than hi (%s)", expr.FormatNumber(lo), expr.FormatNumber(hi))
	}
	return math.Max(lo, math.Min(hi, x)), nil
}

// fnFixed is fixed(x, digits) → a string with exactly digits decimals (toFixed), 0 ≤ digits ≤
// 20.
func fnFixed(c *expr.Call, args []any) (any, error) {
	x, err := argNumber(args, 0)
	if err != nil {
		return nil, err
	}
	d, err := argInt(args, 1)
	if err != nil {
		return nil, err
	}
	if d < 0 || d > 20 {
		return nil, fmt.Errorf("digits must be between 0 and 20, got %d", d)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= 1e21 {
		return expr.FormatNumber(x), nil
	}
	s := strconv.FormatFloat(x, 'f', d, 64)
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-") // (-0.001).toFixed(2) is "-0.00" in JS; we print "0.00"
	}
	return s, nil
}

// registerTypes adds the type tests of docs/DECISIONS.md §5.
func registerTypes(env *expr.Env) {
	is := func(kind string) expr.Builtin {
		return func(c *expr.Call, args []any) (any, error) { return expr.TypeOf(args[0]) == kind, nil }
	}
	one := expr.Args(1, 1)
	env.Register("isList", is("list"), one)
	env.Register("isObject", is("object"), one)
	env.Register("isString", is("string"), one)
	env.Register("isNumber", is("number"), one)
	env.Register("isBool", is("boolean"), one)
	env.Register("isNull", is("null"), one)
	env.Register("typeOf", func(c *expr.Call, args []any) (any, error) { return expr.TypeOf(args[0]), nil }, one)
}
