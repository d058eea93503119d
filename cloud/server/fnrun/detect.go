package fnrun

import (
	"encoding/base64"
	"encoding/hex"
	"math"
	"strings"
)

// A needle is one secret text to look for (a value, or a stand-in's random part) in its
// normal form: ASCII lower case, letters and digits only.
type needle struct {
	name string // the secret's name, for errors
	norm string // normal(text)
	raw  string // the text itself, lower case: used when norm is too short to be telling
}

func newNeedle(name, text string) needle {
	return needle{name: name, norm: normal(text), raw: strings.ToLower(text)}
}

// minNorm is the shortest normal form matched in any shape; a shorter one is matched only as
// it is (case aside), since its letters alone would turn up in ordinary text.
const minNorm = 6

// normal folds s to ASCII lower-case letters and digits: separators, punctuation, quotes and
// non-ASCII characters go, so split/join, per-character lists, case changes and JSON quoting
// all fold to the same text.
func normal(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteByte(c)
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		}
	}
	return b.String()
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// viewBudget bounds the bytes of decoded views made of one text; deepViews is the size up to
// which a second layer of encoding is looked through.
const (
	viewBudget = 32 << 20
	deepViews  = 64 << 10
)

// views returns s as it is and as it reads once undone: percent-decoded, reversed, and every
// run of base64 or hex characters decoded (at each alignment); for a text up to deepViews,
// those views' own runs are decoded once more (hex of base64, base64 of base64, …).
func views(s string) []string {
	out := []string{s}
	if d := percentDecode(s); d != s {
		out = append(out, d)
	}
	out = append(out, reverse(s))
	budget := viewBudget
	first := len(out)
	for _, v := range out[:first] {
		out = appendDecoded(out, v, &budget)
	}
	if len(s) <= deepViews {
		for _, v := range out[first:] {
			out = appendDecoded(out, v, &budget)
		}
	}
	return out
}

// appendDecoded appends the decodings of the base64 and hex runs of s, within budget bytes:
// all of them in one view, so that a text of many short runs costs one view, not thousands.
func appendDecoded(out []string, s string, budget *int) []string {
	const minRun = 8
	var b strings.Builder
	add := func(d []byte) {
		if len(d) > 0 && *budget >= len(d)+1 {
			*budget -= len(d) + 1
			b.Write(d)
			b.WriteByte('\n')
		}
	}
	for _, run := range runs(s, isB64) {
		if len(run) < minRun {
			continue
		}
		run = strings.NewReplacer("-", "+", "_", "/").Replace(run)
		for off := 0; off < 4 && len(run)-off >= minRun; off++ {
			r := run[off:]
			r = r[:len(r)/4*4]
			if d, err := base64.StdEncoding.DecodeString(r); err == nil {
				add(d)
			}
		}
	}
	for _, run := range runs(s, isHex) {
		for off := 0; off < 2 && len(run)-off >= minRun; off++ {
			r := run[off:]
			r = r[:len(r)/2*2]
			if d, err := hex.DecodeString(r); err == nil {
				add(d)
			}
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

func isB64(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

func isHex(c byte) bool {
	return c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c >= '0' && c <= '9'
}

// runs splits s into its maximal runs of bytes in.
func runs(s string, in func(byte) bool) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && in(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	return out
}

// percentDecode undoes %XX escapes (and + as space) wherever they are well formed.
func percentDecode(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v, _ := hex.DecodeString(s[i+1 : i+3])
			b.Write(v)
			i += 2
		case s[i] == '+':
			b.WriteByte(' ')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// found returns the name of the first needle that text holds in some form, or "". The forms:
// the text as it is (any case); its normal form holding the needle's normal form, forwards or
// backwards (so split/join with any separator that is not a letter or digit, per-character
// lists, case changes, reversal); the same through one or two layers of percent, base64 or hex
// encoding (see views); and pieces (see pieces).
func found(text string, ns []needle) string {
	if text == "" || len(ns) == 0 {
		return ""
	}
	lower := strings.ToLower(text)
	for _, n := range ns {
		if n.raw != "" && strings.Contains(lower, n.raw) {
			return n.name
		}
	}
	for _, v := range views(text) {
		nv := normal(v)
		for _, n := range ns {
			if len(n.norm) < minNorm {
				continue
			}
			if strings.Contains(nv, n.norm) || strings.Contains(nv, reverse(n.norm)) || pieces(nv, n.norm) {
				return n.name
			}
		}
	}
	return ""
}

// pieces reports whether hay (a normal form) holds more than half of needle's characters in
// pieces of at least w characters, forwards or backwards, in any order. w is 4 for a short
// text and grows with the text, so that a random text of that length holds any one piece
// with a chance under 1 in 1,000: a needle of 32 letters and digits is caught in pieces of 4
// in a text up to about 1.6 KB, of 5 up to 60 KB, of 6 up to 2 MB.
func pieces(hay, needle string) bool {
	l := len(needle)
	if l < 2*4 {
		return false
	}
	a := 36.0
	if strings.Trim(needle, "0123456789abcdef") == "" {
		a = 16
	}
	w := 4
	for float64(len(hay))/math.Pow(a, float64(w)) > 1e-3 {
		w++
	}
	if 2*w > l || len(hay) < w {
		return false
	}
	grams := map[string][]int{}
	for i := 0; i+w <= l; i++ {
		g := needle[i : i+w]
		grams[g] = append(grams[g], i)
		r := reverse(g)
		grams[r] = append(grams[r], i)
	}
	covered := make([]bool, l)
	n := 0
	for j := 0; j+w <= len(hay); j++ {
		at, ok := grams[hay[j:j+w]]
		if !ok {
			continue
		}
		for _, i := range at {
			for k := i; k < i+w; k++ {
				if !covered[k] {
					covered[k] = true
					n++
				}
			}
		}
		if 2*n > l {
			return true
		}
	}
	return false
}
