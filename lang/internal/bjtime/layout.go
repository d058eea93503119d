package bjtime

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultLayout is formatDate's layout when none is given (docs/DECISIONS.md §5).
const DefaultLayout = "YYYY-MM-DD HH:mm"

// tokenKind is one layout token of docs/DECISIONS.md §5, or a literal.
type tokenKind uint8

const (
	tokLiteral tokenKind = iota
	tokYYYY              // four-digit year
	tokMM                // month, two digits
	tokM                 // month, one or two digits
	tokDD                // day of month, two digits
	tokD                 // day of month, one or two digits
	tokHH                // hour 00–23, two digits
	tokH                 // hour 0–23, one or two digits
	tokmm                // minute, two digits
	tokss                // second, two digits
	tokddd               // weekday 周一 … 周日
)

// tokenNames lists the tokens longest first, so that "MM" wins over "M".
var tokenNames = []struct {
	name string
	kind tokenKind
}{
	{"YYYY", tokYYYY}, {"ddd", tokddd}, {"MM", tokMM}, {"DD", tokDD}, {"HH", tokHH},
	{"mm", tokmm}, {"ss", tokss}, {"M", tokM}, {"D", tokD}, {"H", tokH},
}

type token struct {
	kind tokenKind
	lit  string // tokLiteral only
}

// Layout is a compiled date layout: the tokens YYYY MM M DD D HH H mm ss ddd of docs/DECISIONS.md §5,
// everything else literal. Text in square brackets is always literal ("[at] HH:mm"), as in
// day.js, so letters that would be tokens can be written.
type Layout struct {
	src    string
	tokens []token
}

// CompileLayout splits a layout into tokens. Every string is a valid layout.
func CompileLayout(layout string) Layout {
	var toks []token
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, token{kind: tokLiteral, lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(layout); {
		if layout[i] == '[' {
			if j := strings.IndexByte(layout[i+1:], ']'); j >= 0 {
				lit.WriteString(layout[i+1 : i+1+j])
				i += j + 2
				continue
			}
		}
		matched := false
		for _, tn := range tokenNames {
			if strings.HasPrefix(layout[i:], tn.name) {
				flush()
				toks = append(toks, token{kind: tn.kind})
				i += len(tn.name)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		_, size := utf8.DecodeRuneInString(layout[i:])
		lit.WriteString(layout[i : i+size])
		i += size
	}
	flush()
	return Layout{src: layout, tokens: toks}
}

// String returns the layout's source text.
func (l Layout) String() string { return l.src }

// weekdayNames are the ddd names, index 0 = Monday.
var weekdayNames = [7]string{"周一", "周二", "周三", "周四", "周五", "周六", "周日"}

// Format writes ms in Beijing time according to the layout (formatDate, docs/DECISIONS.md §5).
// YYYY is at least four digits (a year before 1 or after 9999 prints as Go's time package does).
func (l Layout) Format(ms int64) string {
	t := Time(ms)
	var b []byte
	for _, tk := range l.tokens {
		switch tk.kind {
		case tokLiteral:
			b = append(b, tk.lit...)
		case tokYYYY:
			y := t.Year()
			if y < 0 {
				b = append(b, '-')
				y = -y
			}
			b = appendPadded(b, y, 4)
		case tokMM:
			b = appendPadded(b, int(t.Month()), 2)
		case tokM:
			b = strconv.AppendInt(b, int64(t.Month()), 10)
		case tokDD:
			b = appendPadded(b, t.Day(), 2)
		case tokD:
			b = strconv.AppendInt(b, int64(t.Day()), 10)
		case tokHH:
			b = appendPadded(b, t.Hour(), 2)
		case tokH:
			b = strconv.AppendInt(b, int64(t.Hour()), 10)
		case tokmm:
			b = appendPadded(b, t.Minute(), 2)
		case tokss:
			b = appendPadded(b, t.Second(), 2)
		case tokddd:
			b = append(b, weekdayNames[PartsOf(ms).Weekday-1]...)
		}
	}
	return string(b)
}

func appendPadded(b []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// Format writes ms with the given layout; see Layout.Format.
func Format(ms int64, layout string) string { return CompileLayout(layout).Format(ms) }

// Parse reads s with the layout (date(x, layout), docs/DECISIONS.md §5) and returns Unix ms, or
// false when s does not match it or names a date that does not exist. The whole of s must match
// (spaces around it are ignored). Two-letter tokens and YYYY read exactly that many digits; M, D
// and H read one or two. ddd reads 周一…周日 (also 星期一…星期日/星期天) and is otherwise
// ignored. A space in the layout matches one or more spaces. Fields missing from the layout
// default to the year of now, January, the 1st, 00:00:00 — except that a layout with no year,
// month or day at all (such as "HH:mm") means the day of now.
func (l Layout) Parse(s string, now int64) (int64, bool) {
	s = trimSpace(s)
	year, month, day, hour, minute, second := -1, -1, -1, 0, 0, 0
	for i, tk := range l.tokens {
		var v int
		var ok bool
		switch tk.kind {
		case tokLiteral:
			lit := tk.lit
			if i == 0 { // the text's spaces at both ends are gone, so the layout's are too
				lit = trimSpaceLeft(lit)
			}
			if i == len(l.tokens)-1 {
				lit = trimSpaceRight(lit)
			}
			s, ok = matchLiteral(s, lit)
			if !ok {
				return 0, false
			}
			continue
		case tokddd:
			s, ok = skipWeekday(s)
			if !ok {
				return 0, false
			}
			continue
		case tokYYYY:
			v, s, ok = digits(s, 4, 4)
			year = v
		case tokMM:
			v, s, ok = digits(s, 2, 2)
			month = v
		case tokM:
			v, s, ok = digits(s, 1, 2)
			month = v
		case tokDD:
			v, s, ok = digits(s, 2, 2)
			day = v
		case tokD:
			v, s, ok = digits(s, 1, 2)
			day = v
		case tokHH:
			v, s, ok = digits(s, 2, 2)
			hour = v
		case tokH:
			v, s, ok = digits(s, 1, 2)
			hour = v
		case tokmm:
			v, s, ok = digits(s, 2, 2)
			minute = v
		case tokss:
			v, s, ok = digits(s, 2, 2)
			second = v
		}
		if !ok {
			return 0, false
		}
	}
	if s != "" {
		return 0, false
	}
	today := PartsOf(now)
	if year < 0 && month < 0 && day < 0 {
		year, month, day = today.Year, today.Month, today.Day
	}
	if year < 0 {
		year = today.Year
	}
	if month < 0 {
		month = 1
	}
	if day < 0 {
		day = 1
	}
	return fromFields(year, month, day, hour, minute, second, 0)
}

// ParseLayout reads s with the layout; see Layout.Parse.
func ParseLayout(s, layout string, now int64) (int64, bool) {
	return CompileLayout(layout).Parse(s, now)
}

// matchLiteral consumes lit from s; each run of spaces in lit matches one or more spaces.
func matchLiteral(s, lit string) (string, bool) {
	for lit != "" {
		if isSpaceByte(lit[0]) {
			lit = strings.TrimLeft(lit, " \t")
			n := len(s) - len(strings.TrimLeft(s, " \t"))
			if n == 0 {
				return s, false
			}
			s = s[n:]
			continue
		}
		_, size := utf8.DecodeRuneInString(lit)
		if !strings.HasPrefix(s, lit[:size]) {
			return s, false
		}
		s, lit = s[size:], lit[size:]
	}
	return s, true
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' }

// skipWeekday consumes a weekday name: 周X or 星期X, X in 一二三四五六日天.
func skipWeekday(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, "周")
	if !ok {
		rest, ok = strings.CutPrefix(s, "星期")
	}
	if !ok {
		return s, false
	}
	r, size := utf8.DecodeRuneInString(rest)
	if !strings.ContainsRune("一二三四五六日天", r) {
		return s, false
	}
	return rest[size:], true
}

// digits reads between lo and hi ASCII digits (greedily) from the front of s.
func digits(s string, lo, hi int) (int, string, bool) {
	n, v := 0, 0
	for n < len(s) && n < hi && s[n] >= '0' && s[n] <= '9' {
		v = v*10 + int(s[n]-'0')
		n++
	}
	if n < lo {
		return 0, s, false
	}
	return v, s[n:], true
}

// isTrimmed reports the characters trimmed from the ends of a date: ASCII white space, no-break
// spaces and ideographic spaces.
func isTrimmed(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v' ||
		r == '\u00a0' || r == '\u3000'
}

// trimSpace drops isTrimmed characters at both ends.
func trimSpace(s string) string { return strings.TrimFunc(s, isTrimmed) }

func trimSpaceLeft(s string) string  { return strings.TrimLeftFunc(s, isTrimmed) }
func trimSpaceRight(s string) string { return strings.TrimRightFunc(s, isTrimmed) }
