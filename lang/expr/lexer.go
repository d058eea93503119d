package expr

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/diag"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tNumber
	tString
	tBacktick // the opening ` of a template literal; the parser scans the rest itself
	tPunct
	tInvalid
)

// token is one lexeme. For tPunct, text is the operator; for tIdent the name; for tString the
// decoded value; for tNumber num holds the value.
type token struct {
	kind tokKind
	text string
	num  float64
	pos  diag.Pos
	end  int // byte offset just past the token
}

// lexer scans src on demand from off. It tracks the line and the start of the line so that
// positions cost nothing until a token is made.
type lexer struct {
	src       string
	off       int
	line      int
	lineStart int
	errs      *ErrorList
}

func (l *lexer) posOf(off int) diag.Pos {
	col := off - l.lineStart
	if !isASCII(l.src[l.lineStart:off]) {
		col = utf8.RuneCountInString(l.src[l.lineStart:off])
	}
	return diag.Pos{Line: l.line, Col: col + 1, Offset: off}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// advance moves over src[l.off:to], counting newlines.
func (l *lexer) advance(to int) {
	for i := l.off; i < to; i++ {
		if l.src[i] == '\n' {
			l.line++
			l.lineStart = i + 1
		}
	}
	l.off = to
}

// skipSpace skips white space and comments; an unterminated block comment is an error.
func (l *lexer) skipSpace() {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == '\n':
			l.off++
			l.line++
			l.lineStart = l.off
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.off++
		case c == '/' && l.off+1 < len(l.src) && l.src[l.off+1] == '/':
			end := strings.IndexByte(l.src[l.off:], '\n')
			if end < 0 {
				l.off = len(l.src)
			} else {
				l.off += end
			}
		case c == '/' && l.off+1 < len(l.src) && l.src[l.off+1] == '*':
			end := strings.Index(l.src[l.off+2:], "*/")
			if end < 0 {
				l.errs.add(l.posOf(l.off), "unterminated comment: '/*' without '*/'")
				l.advance(len(l.src))
				return
			}
			l.advance(l.off + 2 + end + 2)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(l.src[l.off:])
			if r == 0xFEFF || unicode.IsSpace(r) {
				if r == '\u2028' || r == '\u2029' {
					l.line++
					l.lineStart = l.off + size
				}
				l.off += size
				continue
			}
			return
		default:
			return
		}
	}
}

// punctuators, longest first within each leading byte.
var punctuators = []string{
	">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=",
	"%=", "&=", "|=", "^=", "**", "<<", ">>",
	"(", ")", "[", "]", "{", "}", ",", ":", "?", ".", "+", "-", "*", "/", "%", "<", ">", "=",
	"!", "~", "&", "|", "^", ";",
}

// punctByFirst lists the punctuators by their first byte, longest first.
var punctByFirst = func() (t [256][]string) {
	for _, p := range punctuators {
		t[p[0]] = append(t[p[0]], p)
	}
	return t
}()

func isIdentStart(r rune) bool {
	return r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' ||
		r >= utf8.RuneSelf && unicode.IsLetter(r)
}

func isIdentPart(r rune) bool {
	return isIdentStart(r) || r >= '0' && r <= '9' ||
		r >= utf8.RuneSelf && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r))
}

// next scans the token at l.off.
func (l *lexer) next() token {
	l.skipSpace()
	start := l.off
	if start >= len(l.src) {
		return token{kind: tEOF, pos: l.posOf(start), end: start}
	}
	c := l.src[start]
	switch {
	case c >= '0' && c <= '9' || c == '.' && start+1 < len(l.src) && l.src[start+1] >= '0' && l.src[start+1] <= '9':
		return l.number()
	case c == '\'' || c == '"':
		return l.stringLit(c)
	case c == '`':
		l.off++
		return token{kind: tBacktick, text: "`", pos: l.posOf(start), end: l.off}
	}
	r, size := utf8.DecodeRuneInString(l.src[start:])
	if isIdentStart(r) {
		end := start + size
		for end < len(l.src) {
			r, size := utf8.DecodeRuneInString(l.src[end:])
			if !isIdentPart(r) {
				break
			}
			end += size
		}
		l.off = end
		return token{kind: tIdent, text: l.src[start:end], pos: l.posOf(start), end: end}
	}
	if c == '?' && start+2 < len(l.src) && l.src[start+1] == '.' && l.src[start+2] >= '0' && l.src[start+2] <= '9' {
		l.off++ // `a?.5:1` is a conditional, not optional chaining
		return token{kind: tPunct, text: "?", pos: l.posOf(start), end: l.off}
	}
	for _, p := range punctByFirst[c] {
		if strings.HasPrefix(l.src[start:], p) {
			l.off += len(p)
			return token{kind: tPunct, text: p, pos: l.posOf(start), end: l.off}
		}
	}
	l.off += size
	return token{kind: tInvalid, text: l.src[start:l.off], pos: l.posOf(start), end: l.off}
}

func (l *lexer) number() token {
	start := l.off
	s := l.src
	i := start
	if s[i] == '0' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X' || s[i+1] == 'b' || s[i+1] == 'B' || s[i+1] == 'o' || s[i+1] == 'O') {
		base := map[byte]int{'x': 16, 'b': 2, 'o': 8}[s[i+1]|0x20]
		i += 2
		j := i
		for j < len(s) && isDigitIn(s[j], base) {
			j++
		}
		l.off = j
		t := token{kind: tNumber, pos: l.posOf(start), end: j}
		n, err := strconv.ParseUint(s[i:j], base, 64)
		if err != nil || j == i {
			l.errs.add(t.pos, "invalid number %q", s[start:j])
		}
		t.num = float64(n)
		t.text = s[start:j]
		return l.noIdentAfter(t)
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			i = j
		}
	}
	l.off = i
	t := token{kind: tNumber, text: s[start:i], pos: l.posOf(start), end: i}
	f, err := strconv.ParseFloat(s[start:i], 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			l.errs.add(t.pos, "invalid number %q", s[start:i])
		}
	}
	t.num = f
	return l.noIdentAfter(t)
}

// noIdentAfter reports `3px` or `1_000`: a number runs straight into a name.
func (l *lexer) noIdentAfter(t token) token {
	if l.off < len(l.src) {
		r, _ := utf8.DecodeRuneInString(l.src[l.off:])
		if isIdentPart(r) {
			l.errs.add(l.posOf(l.off), "unexpected %q right after the number %s", r, t.text)
			for l.off < len(l.src) { // skip the rest of the name: one error is enough
				r, size := utf8.DecodeRuneInString(l.src[l.off:])
				if !isIdentPart(r) {
					break
				}
				l.off += size
			}
			t.end = l.off
		}
	}
	return t
}

func isDigitIn(c byte, base int) bool {
	var v int
	switch {
	case c >= '0' && c <= '9':
		v = int(c - '0')
	case c|0x20 >= 'a' && c|0x20 <= 'f':
		v = int(c|0x20-'a') + 10
	default:
		return false
	}
	return v < base
}

// stringLit scans a '…' or "…" literal. Escapes follow the seed: \\ \' \" \n \t \r (and \`, \$
// and \0, plus \uXXXX and \u{…} for code points), every other backslash is kept, so '\d+' is the
// regex \d+.
func (l *lexer) stringLit(quote byte) token {
	start := l.off
	pos := l.posOf(start)
	i := start + 1
	s := l.src
	var b []byte
	runStart := i
	for {
		if i >= len(s) || s[i] == '\n' {
			l.errs.add(pos, "unterminated string: missing closing %c", quote)
			l.advance(i)
			return token{kind: tString, text: string(append(b, s[runStart:i]...)), pos: pos, end: i}
		}
		c := s[i]
		if c == quote {
			var text string
			if b == nil {
				text = s[runStart:i]
			} else {
				text = string(append(b, s[runStart:i]...))
			}
			l.off = i + 1
			return token{kind: tString, text: text, pos: pos, end: l.off}
		}
		if c != '\\' {
			i++
			continue
		}
		b = append(b, s[runStart:i]...)
		n, out := unescape(s, i, quote)
		b = append(b, out...)
		i = n
		runStart = i
	}
}

// unescape decodes the escape starting at the backslash s[i] and returns the offset after it and
// the bytes it stands for. quote is the enclosing quote (or '`').
func unescape(s string, i int, quote byte) (int, []byte) {
	if i+1 >= len(s) {
		return i + 1, []byte{'\\'}
	}
	switch e := s[i+1]; e {
	case '\\', '\'', '"', '`':
		return i + 2, []byte{e}
	case 'n':
		return i + 2, []byte{'\n'}
	case 't':
		return i + 2, []byte{'\t'}
	case 'r':
		return i + 2, []byte{'\r'}
	case '$':
		if quote == '`' {
			return i + 2, []byte{'$'}
		}
	case 'u':
		if i+2 < len(s) && s[i+2] == '{' {
			if end := strings.IndexByte(s[i+3:], '}'); end > 0 && end <= 6 {
				if n, err := strconv.ParseUint(s[i+3:i+3+end], 16, 32); err == nil && n <= unicode.MaxRune {
					return i + 4 + end, utf8.AppendRune(nil, rune(n))
				}
			}
		} else if i+6 <= len(s) {
			if n, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
				return i + 6, utf8.AppendRune(nil, rune(n))
			}
		}
	case '\n':
		return i + 2, nil // line continuation
	}
	return i + 1, []byte{'\\'} // kept: the next byte is read as ordinary text
}
