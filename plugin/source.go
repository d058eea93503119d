package plugin

import (
	"bytes"
	"sort"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/pkuinfo/harness/lang/diag"
)

// source is one loaded text file with a table of line starts, to turn YAML line:column marks
// into byte offsets and back.
type source struct {
	name  string // path relative to the plugin folder
	text  []byte
	lines []int // byte offset where each line starts; lines[0] == 0
}

func newSource(name string, text []byte) *source {
	lines := make([]int, 1, bytes.Count(text, nl)+1)
	for i := 0; ; {
		j := bytes.IndexByte(text[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		lines = append(lines, i)
	}
	return &source{name: name, text: text, lines: lines}
}

var nl = []byte{'\n'}

// offset returns the byte offset of a 1-based line and a 1-based column counted in code points,
// clamped to the text.
func (s *source) offset(line, col int) int {
	if line < 1 {
		return 0
	}
	if line > len(s.lines) {
		return len(s.text)
	}
	off := s.lines[line-1]
	for c := 1; c < col && off < len(s.text) && s.text[off] != '\n'; c++ {
		_, n := utf8.DecodeRune(s.text[off:])
		off += n
	}
	return off
}

// pos returns the line, column (code points, 1-based) and offset of a byte offset.
func (s *source) pos(off int) diag.Pos {
	if off < 0 {
		off = 0
	}
	if off > len(s.text) {
		off = len(s.text)
	}
	i := sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	col := 1 + utf8.RuneCount(s.text[s.lines[i]:off])
	return diag.Pos{Line: i + 1, Col: col, Offset: off}
}

// nodePos is the position of a YAML node in the source.
func (s *source) nodePos(n *yaml.Node) diag.Pos {
	line, col := n.Line, n.Column
	if line < 1 || line > len(s.lines) {
		return s.pos(s.offset(line, col))
	}
	// The common case, without pos's search: the column lies on the node's line, so the line and
	// column are the node's own (what pos(offset(line, col)) would find again).
	off := s.lines[line-1]
	c := 1
	for ; c < col && off < len(s.text) && s.text[off] != '\n'; c++ {
		if b := s.text[off]; b < utf8.RuneSelf {
			off++
		} else {
			_, n := utf8.DecodeRune(s.text[off:])
			off += n
		}
	}
	if c == col || col < 1 {
		if col < 1 {
			return s.pos(off)
		}
		return diag.Pos{Line: line, Col: col, Offset: off}
	}
	return s.pos(off)
}

// lineText returns the text of a 1-based line without its line break.
func (s *source) lineText(line int) string {
	if line < 1 || line > len(s.lines) {
		return ""
	}
	start := s.lines[line-1]
	end := len(s.text)
	if line < len(s.lines) {
		end = s.lines[line] - 1
	}
	if end > start && s.text[end-1] == '\r' {
		end--
	}
	if end < start {
		end = start
	}
	return string(s.text[start:end])
}

// Scalar is a YAML scalar that holds an expression or a template: its decoded text and what it
// takes to map a position inside that text back to the file, whatever the scalar's style (plain,
// single- or double-quoted with escapes, literal `|` or folded `>` block).
type Scalar struct {
	// Src is the scalar's decoded value: the expression or template source.
	Src string
	// File is the file it was read from, relative to the plugin folder.
	File string
	// Pos is the position in File of Src's first character.
	Pos diag.Pos

	src   *source
	start int // byte offset of the node (its quote or block indicator)
	style yaml.Style
}

func newScalar(s *source, n *yaml.Node) Scalar {
	sc := Scalar{Src: n.Value, File: s.name, src: s, start: s.offset(n.Line, n.Column), style: n.Style}
	sc.Pos = sc.FilePos(diag.Pos{Line: 1, Col: 1, Offset: 0})
	return sc
}

// FilePos maps a position inside Src (as expr reports it: Offset is a byte offset into Src) to
// the position in File. When the scalar cannot be aligned with its raw text, it returns the
// position of the scalar itself.
func (sc *Scalar) FilePos(p diag.Pos) diag.Pos {
	if sc.src == nil {
		return sc.Pos
	}
	off := alignScalar(sc.src.text, sc.start, sc.style, sc.Src, p.Offset)
	if off < 0 {
		return sc.src.pos(sc.start)
	}
	return sc.src.pos(off)
}

// alignScalar walks a scalar's raw text from start alongside its decoded value and returns the
// raw byte offset of value[target:], or -1 when the two cannot be aligned. Whitespace the YAML
// scanner dropped (indentation, folded line breaks), quote doubling and escapes are skipped or
// decoded; every other raw character must equal the next value character.
func alignScalar(raw []byte, start int, style yaml.Style, value string, target int) int {
	if start < 0 || start > len(raw) || target < 0 || target > len(value) {
		return -1
	}
	r := start
	quoted := style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0
	double := style&yaml.DoubleQuotedStyle != 0
	single := style&yaml.SingleQuotedStyle != 0
	switch {
	case style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		for r < len(raw) && raw[r] != '\n' {
			r++
		}
		r++
	case quoted:
		r++
	}
	v := 0
	for {
		if v == len(value) && target == v {
			return r
		}
		// Skip what the scanner dropped before the next value character.
		var vr rune = -1
		vn := 0
		if v < len(value) {
			vr, vn = utf8.DecodeRuneInString(value[v:])
		}
		for r < len(raw) {
			c := raw[r]
			if double && c == '\\' {
				er, n, cont := decodeEscape(raw[r:])
				if cont {
					r += n
					continue
				}
				if v == target {
					return r
				}
				if er != vr || n == 0 {
					return -1
				}
				r += n
				v += vn
				goto next
			}
			if single && c == '\'' && r+1 < len(raw) && raw[r+1] == '\'' {
				if v == target {
					return r
				}
				if vr != '\'' {
					return -1
				}
				r += 2
				v += vn
				goto next
			}
			rr, rn := utf8.DecodeRune(raw[r:])
			if rr == vr || (vr == ' ' && (rr == '\n' || rr == '\r')) {
				if v == target {
					return r
				}
				r += rn
				v += vn
				goto next
			}
			if rr == ' ' || rr == '\t' || rr == '\n' || rr == '\r' {
				r += rn
				continue
			}
			if v == target && v == len(value) {
				return r
			}
			return -1
		}
		if v == target {
			return r
		}
		return -1
	next:
	}
}

// decodeEscape decodes one YAML double-quoted escape at the start of b (b[0] == '\\'). It returns
// the rune, the number of raw bytes, and cont when the escape is a line continuation (a
// backslash before a line break), which stands for nothing.
func decodeEscape(b []byte) (r rune, n int, cont bool) {
	if len(b) < 2 {
		return -1, 0, false
	}
	switch b[1] {
	case '\n':
		return 0, 2, true
	case '\r':
		if len(b) > 2 && b[2] == '\n' {
			return 0, 3, true
		}
		return 0, 2, true
	case '0':
		return 0, 2, false
	case 'a':
		return '\a', 2, false
	case 'b':
		return '\b', 2, false
	case 't', '\t':
		return '\t', 2, false
	case 'n':
		return '\n', 2, false
	case 'v':
		return '\v', 2, false
	case 'f':
		return '\f', 2, false
	case 'r':
		return '\r', 2, false
	case 'e':
		return 0x1b, 2, false
	case ' ':
		return ' ', 2, false
	case '"':
		return '"', 2, false
	case '/':
		return '/', 2, false
	case '\\':
		return '\\', 2, false
	case 'N':
		return 0x85, 2, false
	case '_':
		return 0xa0, 2, false
	case 'L':
		return 0x2028, 2, false
	case 'P':
		return 0x2029, 2, false
	case 'x':
		return hexRune(b, 2)
	case 'u':
		return hexRune(b, 4)
	case 'U':
		return hexRune(b, 8)
	}
	return -1, 0, false
}

func hexRune(b []byte, digits int) (rune, int, bool) {
	if len(b) < 2+digits {
		return -1, 0, false
	}
	var v rune
	for _, c := range b[2 : 2+digits] {
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v*16 + rune(c-'A'+10)
		default:
			return -1, 0, false
		}
	}
	return v, 2 + digits, false
}
