package interp

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/lang/expr"
)

// fmtNum formats n as JavaScript's Number.prototype.toString does
// (SPEC-DECISIONS §1: integers print without a fraction).
func fmtNum(n float64) string {
	switch {
	case math.IsNaN(n):
		return "NaN"
	case math.IsInf(n, 1):
		return "Infinity"
	case math.IsInf(n, -1):
		return "-Infinity"
	case n == 0:
		return "0"
	}
	if a := math.Abs(n); a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(n, 'f', -1, 64)
	}
	s := strconv.FormatFloat(n, 'e', -1, 64) // 1.5e-07
	mant, exp, _ := strings.Cut(s, "e")
	sign := exp[0]
	exp = strings.TrimLeft(exp[1:], "0")
	return mant + "e" + string(sign) + exp
}

// toText renders a value as a template does (SPEC-DECISIONS §3): strings
// as they are, numbers as in JavaScript, null as empty, booleans as
// true/false, lists and objects as JSON.
func toText(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case float64:
		return fmtNum(v), nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	b, err := expr.ToJSON(v, "")
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func sortStrings(s []string) { slices.Sort(s) }

// objFields returns the keys of o in order and a getter, or false when v is
// not an object.
func asObject(v any) (*expr.Object, bool) {
	o, ok := v.(*expr.Object)
	return o, ok && o != nil
}
