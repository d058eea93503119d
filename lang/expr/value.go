package expr

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/net/html"
)

// Object is an insertion-ordered string-keyed map, the value model's object (docs/DECISIONS.md §1).
// Objects are built once and then only read: every builtin returns a new Object rather than
// changing one, so an Object may be shared between goroutines once built. Keys such as
// "constructor" or "__proto__" are ordinary keys.
type Object struct {
	ents  []objEntry
	index map[string]int // built once the object grows past smallObject keys
}

type objEntry struct {
	key string
	val any
}

// smallObject is the size up to which Get scans keys linearly instead of hashing.
const smallObject = 8

// NewObject returns an empty object with room for capacity keys. Small objects take a single
// allocation.
func NewObject(capacity int) *Object {
	switch {
	case capacity <= 2:
		b := &struct {
			o Object
			e [2]objEntry
		}{}
		b.o.ents = b.e[:0:2]
		return &b.o
	case capacity <= 4:
		b := &struct {
			o Object
			e [4]objEntry
		}{}
		b.o.ents = b.e[:0:4]
		return &b.o
	case capacity <= 8:
		b := &struct {
			o Object
			e [8]objEntry
		}{}
		b.o.ents = b.e[:0:8]
		return &b.o
	}
	return &Object{ents: make([]objEntry, 0, capacity)}
}

func (o *Object) find(key string) int {
	if o.index != nil {
		if i, ok := o.index[key]; ok {
			return i
		}
		return -1
	}
	for i := range o.ents {
		if o.ents[i].key == key {
			return i
		}
	}
	return -1
}

// Get returns the value stored under key and whether the key is present.
func (o *Object) Get(key string) (any, bool) {
	if o == nil {
		return nil, false
	}
	if i := o.find(key); i >= 0 {
		return o.ents[i].val, true
	}
	return nil, false
}

// Set stores v under key: a new key is appended after the existing ones, an existing key keeps
// its place (as in JavaScript).
func (o *Object) Set(key string, v any) {
	if i := o.find(key); i >= 0 {
		o.ents[i].val = v
		return
	}
	o.ents = append(o.ents, objEntry{key, v})
	if o.index != nil {
		o.index[key] = len(o.ents) - 1
	} else if len(o.ents) > smallObject {
		o.reindex()
	}
}

func (o *Object) reindex() {
	o.index = make(map[string]int, len(o.ents)*2)
	for i, e := range o.ents {
		o.index[e.key] = i
	}
}

// Delete removes key, keeping the order of the others. Builtins use it on objects they are still
// building; it is never applied to a value a plugin can already see.
func (o *Object) Delete(key string) {
	i := o.find(key)
	if i < 0 {
		return
	}
	o.ents = append(o.ents[:i:i], o.ents[i+1:]...)
	if o.index != nil {
		o.reindex()
	}
}

// Keys returns the keys in insertion order, in a new slice.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	out := make([]string, len(o.ents))
	for i, e := range o.ents {
		out[i] = e.key
	}
	return out
}

// Values returns the values in key order, in a new slice.
func (o *Object) Values() []any {
	if o == nil {
		return nil
	}
	out := make([]any, len(o.ents))
	for i, e := range o.ents {
		out[i] = e.val
	}
	return out
}

// Entry returns the i-th key and value (0 ≤ i < Len()), for iterating without allocating.
func (o *Object) Entry(i int) (string, any) { return o.ents[i].key, o.ents[i].val }

// Len returns the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.ents)
}

// Clone returns a shallow copy with room for extra more keys; it may be extended without
// affecting o.
func (o *Object) Clone(extra int) *Object {
	c := NewObject(o.Len() + extra)
	c.ents = append(c.ents, o.ents...)
	if len(c.ents) > smallObject {
		c.reindex()
	}
	return c
}

// Node is an HTML node, the value model's opaque seventh kind (docs/DECISIONS.md §1). It may not
// appear in a tool result; ToJSON refuses it.
type Node struct{ N *html.Node }

// Func is a function value: an arrow function (with the arrow parameters it closed over), a user
// function from `functions:`/`shared:` (Env.Define), or a builtin used as a value. It is not
// JSON; builtins receive it and call it through Call.CallFunc.
type Func struct {
	name    string // user function or builtin name; "" for an anonymous arrow
	params  []string
	body    node
	frame   *frame // the arrow parameters in scope where the arrow was evaluated
	expr    *Expr  // where the body was parsed: its Env and the functions it may call
	builtin *builtin
	// noCapture: the body holds no arrow, so no closure can keep a call's frame, which may
	// then be reused.
	noCapture bool
}

// Name returns the function's name, or "" for an anonymous arrow function.
func (f *Func) Name() string { return f.name }

// Arity returns the number of declared parameters (-1 for a builtin).
func (f *Func) Arity() int {
	if f.builtin != nil {
		return -1
	}
	return len(f.params)
}

// TypeOf names the kind of v: "null", "boolean", "number", "string", "list", "object", "node",
// and "function" for a *Func (docs/DECISIONS.md §5 typeOf). Go values outside the model are
// "unknown".
func TypeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "list"
	case *Object:
		return "object"
	case *Node:
		return "node"
	case *Func:
		return "function"
	}
	return "unknown"
}

// Truthy reports JavaScript truthiness (docs/DECISIONS.md §2): null, false, 0, NaN and "" are
// false; everything else, empty lists and objects included, is true.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

// Equal is deep strict equality, what `==`/`===` and recorded tests compare: same kind and same
// value, lists element by element, objects with the same keys (in any order) and equal values.
// Unlike JavaScript, NaN equals NaN here so a recorded result can be compared with itself; nodes
// and functions are equal only to themselves.
func Equal(a, b any) bool {
	var m meter
	eq, _ := equal(a, b, true, &m)
	return eq
}

// EqualCount is Equal that also reports how many values it visited, so that a builtin can
// charge the budget for a deep comparison.
func EqualCount(a, b any) (bool, int) {
	var m meter
	eq, _ := equal(a, b, true, &m)
	return eq, m.nodes
}

// EqualCharged is Equal that charges ch as it walks (one operation per WalkNodesPerOp values
// visited and per WalkBytesPerOp bytes of text compared, before the work) and stops with ch's
// error, so that comparing values with shared sub-values cannot run past the budget.
func EqualCharged(a, b any, ch Charger) (bool, error) {
	m := meter{ch: ch}
	return equal(a, b, true, &m)
}

// strictEqual is `===`: Equal, except that NaN is unequal to everything as in JavaScript,
// charged to ch as EqualCharged is.
func strictEqual(a, b any, ch Charger) (bool, error) {
	m := meter{ch: ch}
	return equal(a, b, false, &m)
}

func equal(a, b any, nanEqual bool, m *meter) (bool, error) {
	if err := m.node(); err != nil {
		return false, err
	}
	switch x := a.(type) {
	case nil:
		return b == nil, nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y, nil
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || nanEqual && math.IsNaN(x) && math.IsNaN(y)), nil
	case string:
		y, ok := b.(string)
		if !ok || len(x) != len(y) {
			return false, nil
		}
		if len(x) >= WalkBytesPerOp {
			if err := m.nodesN(len(x) / WalkBytesPerOp * WalkNodesPerOp); err != nil {
				return false, err
			}
		}
		return x == y, nil
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false, nil
		}
		for i := range x {
			if eq, err := equal(x[i], y[i], nanEqual, m); !eq || err != nil {
				return false, err
			}
		}
		return true, nil
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.Len() != y.Len() {
			return false, nil
		}
		for _, e := range x.ents {
			w, ok := y.Get(e.key)
			if !ok {
				return false, nil
			}
			if eq, err := equal(e.val, w, nanEqual, m); !eq || err != nil {
				return false, err
			}
		}
		return true, nil
	case *Node:
		y, ok := b.(*Node)
		return ok && (x == y || x.N == y.N), nil
	case *Func:
		y, ok := b.(*Func)
		return ok && x == y, nil
	}
	return false, nil
}

// FromGo converts a Go value to the value model: nil, bool, all integer and float kinds, string,
// slices and arrays (to []any), maps with string keys (to *Object, keys sorted), structs are
// refused. Values already in the model (*Object, *Node, *Func, []any of model values) pass
// through. An error names the first unsupported type.
func FromGo(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, float64, string, *Object, *Node, *Func:
		return x, nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case float32:
		return float64(x), nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := FromGo(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = c
		}
		return out, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := NewObject(len(keys))
		for _, k := range keys {
			c, err := FromGo(x[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			o.Set(k, c)
		}
		return o, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return nil, nil
		}
		return FromGo(rv.Elem().Interface())
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return nil, nil
		}
		out := make([]any, rv.Len())
		for i := range out {
			c, err := FromGo(rv.Index(i).Interface())
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = c
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map keys must be strings, not %s", rv.Type().Key())
		}
		if rv.IsNil() {
			return nil, nil
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		o := NewObject(len(keys))
		for _, k := range keys {
			c, err := FromGo(rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key())).Interface())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			o.Set(k, c)
		}
		return o, nil
	}
	return nil, fmt.Errorf("unsupported Go type %T", v)
}

// FormatNumber prints f as JavaScript's Number.prototype.toString does: integers without a
// fraction, the shortest digits that read back exactly, exponent form below 1e-6 and from 1e21,
// and "NaN", "Infinity", "-Infinity".
func FormatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return string(appendNumber(nil, f))
}

// appendNumberText appends FormatNumber(f) without making a string.
func appendNumberText(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f), math.IsInf(f, 0), f == 0:
		return append(b, FormatNumber(f)...)
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		return strconv.AppendInt(b, int64(f), 10)
	}
	return appendNumber(b, f)
}

// appendNumber appends the JavaScript spelling of a finite, non-zero f.
func appendNumber(b []byte, f float64) []byte {
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(string(e), "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k, n := len(digits), x+1
	switch {
	case k <= n && n <= 21:
		b = append(b, digits...)
		for i := k; i < n; i++ {
			b = append(b, '0')
		}
	case 0 < n && n <= 21:
		b = append(b, digits[:n]...)
		b = append(b, '.')
		b = append(b, digits[n:]...)
	case -6 < n && n <= 0:
		b = append(b, "0."...)
		for i := 0; i < -n; i++ {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		b = append(b, digits[0])
		if k > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if n-1 >= 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(n-1), 10)
	}
	return b
}

// ToText is how a value reads inside text (docs/DECISIONS.md §3 and `str`): strings as they are,
// numbers as in JavaScript, null as "", booleans as "true"/"false", lists and objects as compact
// JSON. A node or function is an error saying what to use instead.
func ToText(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case float64:
		return FormatNumber(x), nil
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case *Node:
		return "", errors.New("an HTML node is not text; use htmlText(node) or attr(node, name)")
	case *Func:
		return "", errors.New("a function is not text; call it")
	}
	b, err := EncodeJSON(v, "", MaxText, nil)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// TextOf is ToText charged to ch as EncodeJSON is, with the text limited to limit bytes
// (≤ 0: MaxText); a longer text is a *SizeError. Strings, numbers and the other scalars cost
// nothing more: they are already built.
func TextOf(v any, limit int, ch Charger) (string, error) {
	switch v.(type) {
	case []any, *Object:
		b, err := EncodeJSON(v, "", limit, ch)
		if err != nil {
			return "", err
		}
		return unsafe.String(unsafe.SliceData(b), len(b)), nil
	}
	return ToText(v)
}

// describe names a value's kind for error messages: "null", "a list", "the number 3"…
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case *Object:
		return "an object"
	case *Node:
		return "an HTML node"
	case *Func:
		_ = x
		return "a function"
	}
	return fmt.Sprintf("a Go %T", v)
}

// Describe is describe for builtins: the kind of v with an article, for error messages such as
// "sortBy: expected a list, got null".
func Describe(v any) string { return describe(v) }

// smallInts holds boxed float64 values 0…1023, so that passing an index to a callback does
// not allocate.
var smallInts = func() (t [1024]any) {
	for i := range t {
		t[i] = float64(i)
	}
	return t
}()

// NumberValue returns f as a value, without allocating for the small whole numbers (0…1023)
// that counts, indexes and seat numbers usually are.
func NumberValue(f float64) any { return boxNumber(f) }

func boxNumber(f float64) any {
	if f >= 0 && f < float64(len(smallInts)) {
		if i := int(f); float64(i) == f && (i != 0 || !math.Signbit(f)) {
			return smallInts[i]
		}
	}
	return f
}

// IntValue returns float64(i) as a value; for 0 ≤ i < 1024 it does not allocate.
func IntValue(i int) any {
	if i >= 0 && i < len(smallInts) {
		return smallInts[i]
	}
	return float64(i)
}
