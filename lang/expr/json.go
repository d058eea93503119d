package expr

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth bounds the nesting of decoded JSON so a hostile reply cannot exhaust the stack.
const maxJSONDepth = 512

// FromJSON decodes one JSON document into the value model, keeping object keys in document
// order (docs/DECISIONS.md §1): numbers become float64, objects *Object (a repeated key keeps its
// first place and its last value, as JSON.parse does). Errors carry the line and column in data,
// e.g. "json: 3:7: unexpected ','". Nesting is limited to 512 levels.
func FromJSON(data []byte) (any, error) {
	return DecodeJSON(data, nil)
}

// JSONContainerUnits and JSONScalarUnits are what a decoded list or object and a decoded
// scalar weigh, in WalkNodesPerOp-ths of an operation: a container is several allocations (its
// header, its entries), a scalar at most one.
const (
	JSONContainerUnits = 4
	JSONScalarUnits    = 1
)

// DecodeJSON is FromJSON that charges ch for the values it creates, before creating them: a
// list or an object JSONContainerUnits/WalkNodesPerOp of an operation, any other value
// JSONScalarUnits/WalkNodesPerOp. A text of many small values ("[{},{},…]") thus pays for its
// memory, not only for its length. ch nil charges nothing.
func DecodeJSON(data []byte, ch Charger) (any, error) {
	d := jsonDecoder{data: data}
	d.m.ch = ch
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.off < len(d.data) {
		return nil, d.errorf("unexpected %s after the JSON value", d.quoteAt())
	}
	return v, nil
}

type jsonDecoder struct {
	data []byte
	off  int
	m    meter
	keys map[string]string // interned object keys: replies repeat the same keys row after row
}

// maxInternedKeys bounds the key table of one decode.
const maxInternedKeys = 1024

// key reads an object key, sharing one string per distinct key.
func (d *jsonDecoder) key() (string, error) {
	start := d.off + 1
	end := start
	for end < len(d.data) && d.data[end] != '"' && d.data[end] != '\\' && d.data[end] >= 0x20 {
		end++
	}
	if end < len(d.data) && d.data[end] == '"' {
		raw := d.data[start:end]
		if k, ok := d.keys[string(raw)]; ok { // no allocation for the lookup
			d.off = end + 1
			return k, nil
		}
	}
	k, err := d.str()
	if err != nil {
		return "", err
	}
	if d.keys == nil {
		d.keys = make(map[string]string, 16)
	}
	if len(d.keys) < maxInternedKeys && len(k) <= 32 {
		d.keys[k] = k
	}
	return k, nil
}

func (d *jsonDecoder) errorf(format string, args ...any) error {
	p := posAt(string(d.data[:min(d.off, len(d.data))]), d.off)
	return fmt.Errorf("json: %s: %s", p, fmt.Sprintf(format, args...))
}

func (d *jsonDecoder) quoteAt() string {
	if d.off >= len(d.data) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(d.data[d.off:])
	return strconv.QuoteRune(r)
}

func (d *jsonDecoder) skipSpace() {
	for d.off < len(d.data) {
		switch d.data[d.off] {
		case ' ', '\t', '\n', '\r':
			d.off++
		default:
			return
		}
	}
}

func (d *jsonDecoder) value(depth int) (any, error) {
	if d.off >= len(d.data) {
		return nil, d.errorf("unexpected end of input")
	}
	if depth > maxJSONDepth {
		return nil, d.errorf("nested more than %d levels", maxJSONDepth)
	}
	c := d.data[d.off]
	units := JSONScalarUnits
	if c == '{' || c == '[' {
		units = JSONContainerUnits
	}
	if d.m.ch != nil {
		if err := d.m.nodesN(units); err != nil {
			return nil, err
		}
	}
	switch {
	case c == '{':
		d.off++
		o := NewObject(4)
		d.skipSpace()
		if d.off < len(d.data) && d.data[d.off] == '}' {
			d.off++
			return o, nil
		}
		for {
			d.skipSpace()
			if d.off >= len(d.data) || d.data[d.off] != '"' {
				return nil, d.errorf("expected a string key, found %s", d.quoteAt())
			}
			k, err := d.key()
			if err != nil {
				return nil, err
			}
			d.skipSpace()
			if d.off >= len(d.data) || d.data[d.off] != ':' {
				return nil, d.errorf("expected ':' after key, found %s", d.quoteAt())
			}
			d.off++
			d.skipSpace()
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			o.Set(k, v)
			d.skipSpace()
			if d.off < len(d.data) && d.data[d.off] == ',' {
				d.off++
				continue
			}
			if d.off < len(d.data) && d.data[d.off] == '}' {
				d.off++
				return o, nil
			}
			return nil, d.errorf("expected ',' or '}', found %s", d.quoteAt())
		}
	case c == '[':
		d.off++
		l := make([]any, 0, 4)
		d.skipSpace()
		if d.off < len(d.data) && d.data[d.off] == ']' {
			d.off++
			return l, nil
		}
		for {
			d.skipSpace()
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
			d.skipSpace()
			if d.off < len(d.data) && d.data[d.off] == ',' {
				d.off++
				continue
			}
			if d.off < len(d.data) && d.data[d.off] == ']' {
				d.off++
				return l, nil
			}
			return nil, d.errorf("expected ',' or ']', found %s", d.quoteAt())
		}
	case c == '"':
		return d.str()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 't':
		return d.literal("true", true)
	case c == 'f':
		return d.literal("false", false)
	case c == 'n':
		return d.literal("null", nil)
	}
	return nil, d.errorf("unexpected %s", d.quoteAt())
}

func (d *jsonDecoder) literal(word string, v any) (any, error) {
	if len(d.data)-d.off >= len(word) && string(d.data[d.off:d.off+len(word)]) == word {
		d.off += len(word)
		return v, nil
	}
	return nil, d.errorf("unexpected %s", d.quoteAt())
}

func (d *jsonDecoder) number() (any, error) {
	start := d.off
	if d.data[d.off] == '-' {
		d.off++
	}
	digits := func() int {
		n := 0
		for d.off < len(d.data) && d.data[d.off] >= '0' && d.data[d.off] <= '9' {
			d.off++
			n++
		}
		return n
	}
	if d.off < len(d.data) && d.data[d.off] == '0' {
		d.off++
	} else if digits() == 0 {
		return nil, d.errorf("invalid number")
	}
	if d.off < len(d.data) && d.data[d.off] == '.' {
		d.off++
		if digits() == 0 {
			return nil, d.errorf("invalid number: no digits after '.'")
		}
	}
	if d.off < len(d.data) && (d.data[d.off] == 'e' || d.data[d.off] == 'E') {
		d.off++
		if d.off < len(d.data) && (d.data[d.off] == '+' || d.data[d.off] == '-') {
			d.off++
		}
		if digits() == 0 {
			return nil, d.errorf("invalid number: no digits in the exponent")
		}
	}
	f, err := strconv.ParseFloat(string(d.data[start:d.off]), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, d.errorf("invalid number %q", d.data[start:d.off])
	}
	return boxNumber(f), nil // out of range reads as ±Inf, as JSON.parse does
}

func (d *jsonDecoder) str() (string, error) {
	d.off++ // opening quote
	start := d.off
	// Fast path: no escapes.
	for d.off < len(d.data) {
		c := d.data[d.off]
		if c == '"' {
			s := d.data[start:d.off]
			d.off++
			if utf8.Valid(s) {
				return string(s), nil
			}
			return string([]rune(string(s))), nil // replaces invalid bytes with U+FFFD
		}
		if c == '\\' || c < 0x20 {
			break
		}
		d.off++
	}
	buf := append([]byte(nil), d.data[start:d.off]...)
	for d.off < len(d.data) {
		c := d.data[d.off]
		switch {
		case c == '"':
			d.off++
			if !utf8.Valid(buf) {
				return string([]rune(string(buf))), nil
			}
			return string(buf), nil
		case c < 0x20:
			return "", d.errorf("control character in string")
		case c == '\\':
			if d.off+1 >= len(d.data) {
				return "", d.errorf("unterminated string")
			}
			e := d.data[d.off+1]
			d.off += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return "", d.errorf("invalid \\u escape")
				}
				if utf16.IsSurrogate(r) {
					if d.off+1 < len(d.data) && d.data[d.off] == '\\' && d.data[d.off+1] == 'u' {
						save := d.off
						d.off += 2
						r2, ok := d.hex4()
						if ok {
							if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
								buf = utf8.AppendRune(buf, p)
								continue
							}
						}
						d.off = save
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
			default:
				d.off -= 2
				return "", d.errorf("invalid escape '\\%c' in string", e)
			}
		default:
			buf = append(buf, c)
			d.off++
		}
	}
	return "", d.errorf("unterminated string")
}

func (d *jsonDecoder) hex4() (rune, bool) {
	if len(d.data)-d.off < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(d.data[d.off:d.off+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	d.off += 4
	return rune(n), true
}

// ErrNodeInJSON is returned (wrapped) by ToJSON when a value holds an HTML node.
var ErrNodeInJSON = errors.New("an HTML node cannot be part of a result; use htmlText(...) or attr(...) to read text from it")

// ToJSON encodes v as JSON.stringify(v, null, indent) would (docs/DECISIONS.md §1): object keys in
// insertion order, NaN and ±Infinity as null, integers without a fraction, non-ASCII text as is.
// indent "" gives compact output. An HTML node or a function anywhere in v is an error naming
// where it is (e.g. "rows[3].cell: an HTML node cannot be part of a result; use htmlText(...)
// or attr(...) …"). The output is at most MaxText bytes: past that the encoding stops with a
// *SizeError, so a value whose sub-values are shared (2^n nodes built in n steps) cannot make it
// run long. Code that has a budget uses EncodeJSON, which charges for the walk.
func ToJSON(v any, indent string) ([]byte, error) {
	return EncodeJSON(v, indent, MaxText, nil)
}

// EncodeJSON is ToJSON that stops with a *SizeError as soon as the output passes limit bytes
// and charges ch as it walks (docs/DECISIONS.md §2 costs): one operation per WalkNodesPerOp values
// visited and one per WalkBytesPerOp bytes written, each charged before the work it pays for.
// ch nil charges nothing; limit ≤ 0 means MaxText.
func EncodeJSON(v any, indent string, limit int, ch Charger) ([]byte, error) {
	e := jsonEncoder{indent: indent}
	e.m.init(ch, limit)
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	if err := e.grow(0); err != nil { // the escapes of the last string
		return nil, err
	}
	return e.buf, nil
}

// JSONSize returns the length of v's compact JSON without keeping the text: it encodes in
// small pieces, stops with a *SizeError as soon as the length passes limit, and charges ch as
// EncodeJSON does. It is the result-size check of a run (seed 004 "1 MB result").
func JSONSize(v any, limit int, ch Charger) (int, error) {
	e := jsonEncoder{sizeOnly: true}
	e.m.init(ch, limit)
	if err := e.value(v, 0); err != nil {
		return 0, err
	}
	if err := e.grow(0); err != nil {
		return 0, err
	}
	return e.flushed + len(e.buf), nil
}

type jsonEncoder struct {
	buf      []byte
	indent   string
	m        meter
	sizeOnly bool // only the length matters: buf is emptied into flushed as it fills
	flushed  int
	path     []pathElem // where the walk is, for error messages
}

// pathElem is one step of the path to the value being encoded: a key, or an index when key
// is "" and isIndex.
type pathElem struct {
	key     string
	idx     int
	isIndex bool
}

func (e *jsonEncoder) pathString() string {
	var b []byte
	for _, p := range e.path {
		if p.isIndex {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(p.idx), 10)
			b = append(b, ']')
			continue
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, p.key...)
	}
	return string(b)
}

// size is how many bytes have been written so far.
func (e *jsonEncoder) size() int { return e.flushed + len(e.buf) }

// grow pays for the output so far plus n more bytes and refuses it past the limit; it is
// called before writing anything whose size is not bounded by a constant.
func (e *jsonEncoder) grow(n int) error {
	total := e.size() + n
	if total > e.m.limit {
		return &SizeError{Limit: e.m.limit}
	}
	if e.sizeOnly && len(e.buf) > 32<<10 {
		e.flushed += len(e.buf)
		e.buf = e.buf[:0]
	}
	if err := e.m.paidBytes(total); err != nil {
		return err
	}
	// Grow by doubling, so that all the buffers of one encoding add up to at most twice the
	// output (append grows large slices by a quarter, which would allocate several times it).
	if need := len(e.buf) + n + 64; need > cap(e.buf) {
		nb := make([]byte, len(e.buf), max(2*cap(e.buf), need))
		copy(nb, e.buf)
		e.buf = nb
	}
	return nil
}

// jsonStringLen is the length of appendJSONString's output for s.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c != '"' && c != '\\':
				n++
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			default:
				n += 6
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += 3 // U+FFFD
		} else {
			n += size
		}
		i += size
	}
	return n
}

func (e *jsonEncoder) newline(depth int) {
	if e.indent == "" {
		return
	}
	e.buf = append(e.buf, '\n')
	for i := 0; i < depth; i++ {
		e.buf = append(e.buf, e.indent...)
	}
}

func (e *jsonEncoder) value(v any, depth int) error {
	if depth > maxJSONDepth {
		return fmt.Errorf("%s: nested more than %d levels", shortPath(e.pathString()), maxJSONDepth)
	}
	if err := e.m.node(); err != nil {
		return err
	}
	// What one value writes besides its strings is bounded (punctuation, a number, one
	// indented line), so paying here, before it, keeps the output within the limit.
	if err := e.grow(0); err != nil {
		return err
	}
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case float64:
		e.buf = appendJSONNumber(e.buf, x)
	case string:
		if err := e.grow(jsonStringLen(x)); err != nil {
			return err
		}
		e.buf = appendJSONString(e.buf, x)
	case []any:
		if len(x) == 0 {
			e.buf = append(e.buf, "[]"...)
			return nil
		}
		e.buf = append(e.buf, '[')
		e.path = append(e.path, pathElem{isIndex: true})
		for i, el := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.newline(depth + 1)
			e.path[len(e.path)-1].idx = i
			if err := e.value(el, depth+1); err != nil {
				return err
			}
		}
		e.path = e.path[:len(e.path)-1]
		e.newline(depth)
		e.buf = append(e.buf, ']')
	case *Object:
		if x.Len() == 0 {
			e.buf = append(e.buf, "{}"...)
			return nil
		}
		e.buf = append(e.buf, '{')
		e.path = append(e.path, pathElem{})
		for i, ent := range x.ents {
			k := ent.key
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.newline(depth + 1)
			if err := e.grow(jsonStringLen(k) + 2); err != nil {
				return err
			}
			e.buf = appendJSONString(e.buf, k)
			e.buf = append(e.buf, ':')
			if e.indent != "" {
				e.buf = append(e.buf, ' ')
			}
			e.path[len(e.path)-1].key = k
			if err := e.value(ent.val, depth+1); err != nil {
				return err
			}
		}
		e.path = e.path[:len(e.path)-1]
		e.newline(depth)
		e.buf = append(e.buf, '}')
	case *Node:
		return fmt.Errorf("%s%w", pathPrefix(e.pathString()), ErrNodeInJSON)
	case *Func:
		return fmt.Errorf("%sa function cannot be part of a result; call it instead", pathPrefix(e.pathString()))
	default:
		g, err := FromGo(v)
		if err != nil {
			return fmt.Errorf("%s%v", pathPrefix(e.pathString()), err)
		}
		return e.value(g, depth)
	}
	return nil
}

// shortPath is pathOrRoot cut to its first and last characters when it is long, as the path of
// a value nested hundreds of levels deep is ("[0][0]…[0]").
func shortPath(p string) string {
	const head, tail = 40, 40
	if len(p) <= head+tail+1 {
		return pathOrRoot(p)
	}
	i, j := head, len(p)-tail
	for i > 0 && !utf8.RuneStart(p[i]) {
		i--
	}
	for j < len(p) && !utf8.RuneStart(p[j]) {
		j++
	}
	return p[:i] + "…" + p[j:]
}

// pathPrefix is "PATH: " for a value inside the one being written, and nothing for the value
// itself: the caller names that ("result: an HTML node …", "toJson: an HTML node …").
func pathPrefix(p string) string {
	if p == "" {
		return ""
	}
	return p + ": "
}

func pathOrRoot(p string) string {
	if p == "" {
		return "result"
	}
	return p
}

func appendJSONNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0')
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return appendNumber(b, f)
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as JSON.stringify does: `"` `\` and control characters escaped,
// everything else (non-ASCII included) as is; lone invalid bytes become U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
