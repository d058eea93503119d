package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/expr"
)

// maxDiffLines caps a diff; the last line then says how many differences were left out.
const maxDiffLines = 20

// Diff explains how got differs from want, one line per difference, each naming the path from
// the root `$`: `$.rooms[2].seats: got 40, want 50`, `$.rooms: got 3 items, want 4`,
// `$.extra: got 1, not expected`, `$.name: missing, want "一教"`. Object keys are compared
// regardless of order. Both sides are compared as the JSON a result is written as (docs/DECISIONS.md
// §1): NaN and ±Infinity are null, so `expect: null` matches a result of 0/0. It returns nil when
// the two values are then equal by expr.Equal.
func Diff(got, want any) []string {
	got, want = asJSON(got), asJSON(want)
	if expr.Equal(got, want) {
		return nil
	}
	var lines []string
	diffAt(&lines, "$", got, want)
	if len(lines) == 0 {
		// Values that are never equal to themselves (NaN) or differ in a way the walk cannot name.
		lines = append(lines, fmt.Sprintf("$: got %s, want %s", Show(got), Show(want)))
	}
	if len(lines) > maxDiffLines {
		n := len(lines) - maxDiffLines
		more := fmt.Sprintf("… and %d more differences", n)
		if n >= 1000-maxDiffLines {
			more = "… and many more differences"
		}
		lines = append(lines[:maxDiffLines], more)
	}
	return lines
}

// asJSON returns v with every NaN and ±Infinity replaced by null, as the result's JSON writes
// them; v itself is never changed, and is returned as it is when it holds none.
func asJSON(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	case []any:
		var out []any
		for i, el := range x {
			if n := asJSON(el); out != nil || !sameValue(n, el) {
				if out == nil {
					out = append(make([]any, 0, len(x)), x[:i]...)
				}
				out = append(out, n)
			}
		}
		if out != nil {
			return out
		}
	case *expr.Object:
		var out *expr.Object
		for i, k := range x.Keys() {
			el, _ := x.Get(k)
			n := asJSON(el)
			if out == nil && !sameValue(n, el) {
				out = expr.NewObject(x.Len())
				for _, k0 := range x.Keys()[:i] {
					v0, _ := x.Get(k0)
					out.Set(k0, v0)
				}
			}
			if out != nil {
				out.Set(k, n)
			}
		}
		if out != nil {
			return out
		}
	}
	return v
}

// sameValue reports whether asJSON left a value as it was: a changed number became nil, a changed
// list or object is a new one.
func sameValue(n, old any) bool {
	switch o := old.(type) {
	case float64:
		return n != nil
	case []any:
		m, ok := n.([]any)
		return ok && len(m) == len(o) && (len(o) == 0 || &m[0] == &o[0])
	case *expr.Object:
		m, ok := n.(*expr.Object)
		return ok && m == o
	}
	return true
}

func diffAt(lines *[]string, at string, got, want any) {
	if len(*lines) >= 1000 { // enough to count; Diff shows the first maxDiffLines
		return
	}
	switch w := want.(type) {
	case *expr.Object:
		g, ok := got.(*expr.Object)
		if !ok {
			break
		}
		for _, k := range w.Keys() {
			wv, _ := w.Get(k)
			gv, has := g.Get(k)
			if !has {
				*lines = append(*lines, fmt.Sprintf("%s: missing, want %s", member(at, k), Show(wv)))
				continue
			}
			diffAt(lines, member(at, k), gv, wv)
		}
		for _, k := range g.Keys() {
			if _, has := w.Get(k); !has {
				gv, _ := g.Get(k)
				*lines = append(*lines, fmt.Sprintf("%s: got %s, not expected", member(at, k), Show(gv)))
			}
		}
		return
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		if len(g) != len(w) {
			*lines = append(*lines, fmt.Sprintf("%s: got %d items, want %d", at, len(g), len(w)))
		}
		for i := 0; i < len(g) || i < len(w); i++ {
			item := fmt.Sprintf("%s[%d]", at, i)
			switch {
			case i >= len(g):
				*lines = append(*lines, fmt.Sprintf("%s: missing, want %s", item, Show(w[i])))
			case i >= len(w):
				*lines = append(*lines, fmt.Sprintf("%s: got %s, not expected", item, Show(g[i])))
			default:
				diffAt(lines, item, g[i], w[i])
			}
		}
		return
	}
	if expr.Equal(got, want) {
		return
	}
	gt, wt := expr.TypeOf(got), expr.TypeOf(want)
	if gt != wt {
		*lines = append(*lines, fmt.Sprintf("%s: got %s (%s), want %s (%s)", at, Show(got), gt, Show(want), wt))
		return
	}
	if gs, ok := got.(string); ok {
		if ws := want.(string); len(gs) > stringWindow || len(ws) > stringWindow {
			*lines = append(*lines, diffStrings(at, gs, ws))
			return
		}
	}
	*lines = append(*lines, fmt.Sprintf("%s: got %s, want %s", at, Show(got), Show(want)))
}

// stringWindow is how many characters of two long differing strings a diff shows around the
// first difference.
const stringWindow = 60

// diffStrings shows two long strings around their first difference, which Show's cut could
// hide: `$.text: strings differ at character 131: got "…abc…", want "…abd…"`.
func diffStrings(at, got, want string) string {
	g, w := []rune(got), []rune(want)
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	start := max(i-stringWindow/3, 0)
	excerpt := func(r []rune) string {
		end := min(start+stringWindow, len(r))
		s := quoteJSON(string(r[min(start, len(r)):end]))
		if start > 0 {
			s = "…" + s
		}
		if end < len(r) {
			s += "…"
		}
		return s
	}
	return fmt.Sprintf("%s: strings differ at character %d (lengths %d and %d): got %s, want %s",
		at, i+1, len(g), len(w), excerpt(g), excerpt(w))
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// member is the path of key k inside the object at `at`: `at.k`, or `at["a b"]`.
func member(at, k string) string {
	if identRE.MatchString(k) {
		return at + "." + k
	}
	return at + "[" + strconv.Quote(k) + "]"
}

// maxShow is the longest value text Show prints before cutting it with "…".
const maxShow = 120

// Show prints a value for a message: compact JSON (object keys in their order), NaN and
// infinities as in JavaScript, cut to 120 characters.
func Show(v any) string {
	var b strings.Builder
	show(&b, v)
	s := b.String()
	if len(s) > maxShow {
		cut := maxShow
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func show(b *strings.Builder, v any) {
	if b.Len() > maxShow {
		return
	}
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case float64:
		b.WriteString(expr.FormatNumber(v))
	case string:
		b.WriteString(quoteJSON(v))
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			show(b, e)
		}
		b.WriteByte(']')
	case *expr.Object:
		b.WriteByte('{')
		for i, k := range v.Keys() {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quoteJSON(k))
			b.WriteByte(':')
			e, _ := v.Get(k)
			show(b, e)
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "<%s>", expr.TypeOf(v))
	}
}

// quoteJSON writes s as a JSON string without escaping <, > and & (messages are read by people).
func quoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
