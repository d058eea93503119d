package stdlib

import (
	"math"
	"strconv"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
)

// FuzzParseNum checks num's reader: no panic, never NaN, and any number written the way
// JavaScript writes it (optionally with a currency sign in front and a unit after) reads back
// exactly.
func FuzzParseNum(f *testing.F) {
	for _, s := range []string{"¥1,234.50元", "60人", " -3.5e2kg", "1,2", "12,345,678", ".5", "abc", "$ +7", "￥", "1e", "-0"} {
		f.Add(s, 1.5)
	}
	f.Fuzz(func(t *testing.T, s string, x float64) {
		if v, ok := ParseNum(s); ok && math.IsNaN(v) {
			t.Fatalf("ParseNum(%q) = NaN", s)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		for _, text := range []string{expr.FormatNumber(x), "¥" + expr.FormatNumber(x) + "元", strconv.FormatFloat(x, 'f', -1, 64) + "%"} {
			v, ok := ParseNum(text)
			if !ok || v != x && !(v == 0 && x == 0) {
				t.Fatalf("ParseNum(%q) = %v, %v; want %v", text, v, ok, x)
			}
		}
	})
}
