package genui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/diag"
)

// Limits of the JSON walk. A widget is a small document; these bound the work on hostile input.
const (
	MaxDocumentBytes = 256 << 10 // a document is at most 256 KB
	MaxDepth         = 64        // nesting of JSON objects and lists
)

// jkind is the kind of a JSON value in the position-keeping tree.
type jkind int

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jObject
	jArray
)

func (k jkind) String() string {
	return [...]string{"null", "boolean", "number", "string", "object", "list"}[k]
}

// jvalue is one JSON value with the byte offset where its token starts.
type jvalue struct {
	kind   jkind
	off    int // byte offset of the first byte of the token
	end    int // byte offset just after the token (after the closing bracket for containers)
	str    string
	num    json.Number
	b      bool
	fields []jfield  // objects, in source order
	items  []*jvalue // lists
}

// jfield is one member of a JSON object; keyOff is the offset of the key's opening quote.
type jfield struct {
	key    string
	keyOff int
	val    *jvalue
}

// get returns the value of key, or nil.
func (v *jvalue) get(key string) *jvalue {
	if v == nil || v.kind != jObject {
		return nil
	}
	for _, f := range v.fields {
		if f.key == key {
			return f.val
		}
	}
	return nil
}

// syntaxError is a JSON error at a byte offset.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// parseJSON decodes src into a position-keeping tree with a json.Decoder token walk: before
// each token, the offset of its first byte is found by skipping whitespace and the ',' and ':'
// the decoder consumes silently. Duplicate keys, depth past MaxDepth and trailing data are
// errors.
func parseJSON(src []byte) (*jvalue, error) {
	if !utf8.Valid(src) {
		return nil, &syntaxError{off: firstInvalidUTF8(src), msg: "the file is not UTF-8"}
	}
	p := &jparser{src: src, dec: json.NewDecoder(bytes.NewReader(src))}
	p.dec.UseNumber()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	// Only white space may follow; skip would also pass over a stray ',' or ':'.
	rest := int(p.dec.InputOffset())
	for rest < len(src) && (src[rest] == ' ' || src[rest] == '\t' || src[rest] == '\n' || src[rest] == '\r') {
		rest++
	}
	if rest < len(src) {
		return nil, &syntaxError{off: rest, msg: "unexpected data after the document"}
	}
	return v, nil
}

type jparser struct {
	src []byte
	dec *json.Decoder
}

// skip returns the offset of the next token at or after off.
func (p *jparser) skip(off int) int {
	for off < len(p.src) {
		switch p.src[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

func (p *jparser) token() (json.Token, int, error) {
	start := p.skip(int(p.dec.InputOffset()))
	tok, err := p.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, start, &syntaxError{off: start, msg: "unexpected end of JSON"}
		}
		// The decoder reads ahead, so its SyntaxError.Offset can lie past the bad token; the
		// token's own start is the better place to point at.
		return nil, start, &syntaxError{off: start, msg: err.Error()}
	}
	return tok, start, nil
}

func clampOff(off, n int) int {
	if off < 0 {
		return 0
	}
	if off > n {
		return n
	}
	return off
}

func (p *jparser) value(depth int) (*jvalue, error) {
	tok, start, err := p.token()
	if err != nil {
		return nil, err
	}
	return p.valueFrom(tok, start, depth)
}

func (p *jparser) valueFrom(tok json.Token, start, depth int) (*jvalue, error) {
	v := &jvalue{off: start}
	switch t := tok.(type) {
	case nil:
		v.kind = jNull
	case bool:
		v.kind, v.b = jBool, t
	case json.Number:
		v.kind, v.num = jNumber, t
	case string:
		v.kind, v.str = jString, t
	case json.Delim:
		if depth >= MaxDepth {
			return nil, &syntaxError{off: start, msg: fmt.Sprintf("nesting deeper than %d levels", MaxDepth)}
		}
		switch t {
		case '{':
			v.kind = jObject
			seen := map[string]bool{}
			for {
				tok, koff, err := p.token()
				if err != nil {
					return nil, err
				}
				if d, ok := tok.(json.Delim); ok && d == '}' {
					break
				}
				key, ok := tok.(string)
				if !ok {
					return nil, &syntaxError{off: koff, msg: "expected an object key"}
				}
				if seen[key] {
					return nil, &syntaxError{off: koff, msg: fmt.Sprintf("duplicate key %q", key)}
				}
				seen[key] = true
				val, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.fields = append(v.fields, jfield{key: key, keyOff: koff, val: val})
			}
		case '[':
			v.kind = jArray
			for {
				tok, ioff, err := p.token()
				if err != nil {
					return nil, err
				}
				if d, ok := tok.(json.Delim); ok && d == ']' {
					break
				}
				item, err := p.valueFrom(tok, ioff, depth+1)
				if err != nil {
					return nil, err
				}
				v.items = append(v.items, item)
			}
		default:
			return nil, &syntaxError{off: start, msg: fmt.Sprintf("unexpected %q", rune(t))}
		}
	}
	v.end = int(p.dec.InputOffset())
	return v, nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// lineIndex converts byte offsets to 1-based line and column; the column counts Unicode code
// points, as diag.Pos does.
type lineIndex struct {
	src   []byte
	lines []int // offset of the first byte of each line
}

func newLineIndex(src []byte) *lineIndex {
	li := &lineIndex{src: src, lines: []int{0}}
	for i, c := range src {
		if c == '\n' {
			li.lines = append(li.lines, i+1)
		}
	}
	return li
}

// pos returns the position of byte offset off.
func (li *lineIndex) pos(off int) diag.Pos {
	off = clampOff(off, len(li.src))
	lo, hi := 0, len(li.lines)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if li.lines[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	col := utf8.RuneCount(li.src[li.lines[lo]:off]) + 1
	return diag.Pos{Line: lo + 1, Col: col, Offset: off}
}

// stringOffsets maps each byte offset of a decoded JSON string to the byte offset in src of
// the source text it came from. raw starts at the opening quote. The result has one entry per
// decoded byte plus one for the end. It returns nil when raw is not a well-formed string
// literal (the caller then points at the string's start).
func stringOffsets(src []byte, start int) []int {
	if start >= len(src) || src[start] != '"' {
		return nil
	}
	var m []int
	i := start + 1
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"':
			return append(m, i)
		case c == '\\':
			if i+1 >= len(src) {
				return nil
			}
			if src[i+1] == 'u' {
				if i+6 > len(src) {
					return nil
				}
				r := decodeHex4(src[i+2 : i+6])
				n := 6
				if r >= 0xD800 && r < 0xDC00 && i+12 <= len(src) && src[i+6] == '\\' && src[i+7] == 'u' {
					lo := decodeHex4(src[i+8 : i+12])
					if lo >= 0xDC00 && lo < 0xE000 {
						r = (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000
						n = 12
					}
				}
				if r < 0 {
					return nil
				}
				size := utf8.RuneLen(rune(r))
				if size < 0 {
					size = 3 // U+FFFD
				}
				for k := 0; k < size; k++ {
					m = append(m, i)
				}
				i += n
				continue
			}
			m = append(m, i)
			i += 2
		default:
			m = append(m, i)
			i++
		}
	}
	return nil
}

func decodeHex4(b []byte) int {
	r := 0
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= int(c - '0')
		case c >= 'a' && c <= 'f':
			r |= int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= int(c-'A') + 10
		default:
			return -1
		}
	}
	return r
}
