package builtin

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/pkuinfo/harness/lang/expr"
)

// The converters between Go values and expr values a built-in call needs
// on every call: the validated input into the tool's input struct, and the
// tool's result into an expr value. They follow encoding/json's rules (json
// tag names, omitempty, "-", nil slices and pointers as null, map keys
// sorted) without writing JSON text; a type they do not know (a
// json.Marshaler, a non-string map key, …) goes through encoding/json.

// field is one exported struct field as encoding/json sees it.
type field struct {
	name      string
	index     []int
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type → []field

func fieldsOfType(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	var out []field
	for _, sf := range reflect.VisibleFields(t) {
		if !sf.IsExported() || sf.Anonymous {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		out = append(out, field{name: name, index: sf.Index, omitEmpty: slices.Contains(strings.Split(opts, ","), "omitempty")})
	}
	fieldCache.Store(t, out)
	return out
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	exprObjectType    = reflect.TypeFor[*expr.Object]()
)

// encodeValue turns a Go value into an expr value.
func encodeValue(v reflect.Value) (any, error) {
	if !v.IsValid() {
		return nil, nil
	}
	t := v.Type()
	if t == exprObjectType {
		return v.Interface(), nil
	}
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		(t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(marshalerType)) {
		return viaJSON(v.Interface())
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		return encodeValue(v.Elem())
	case reflect.String:
		return v.String(), nil
	case reflect.Bool:
		return v.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint()), nil
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("result: %v is not a JSON number", f)
		}
		return f, nil
	case reflect.Slice:
		if v.IsNil() {
			return nil, nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return viaJSON(v.Interface()) // []byte is base64 in JSON
		}
		fallthrough
	case reflect.Array:
		out := make([]any, v.Len())
		for i := range out {
			x, err := encodeValue(v.Index(i))
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return viaJSON(v.Interface())
		}
		if v.IsNil() {
			return nil, nil
		}
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		o := expr.NewObject(len(keys))
		for _, k := range keys {
			x, err := encodeValue(v.MapIndex(reflect.ValueOf(k).Convert(t.Key())))
			if err != nil {
				return nil, err
			}
			o.Set(k, x)
		}
		return o, nil
	case reflect.Struct:
		fs := fieldsOfType(t)
		o := expr.NewObject(len(fs))
		for _, f := range fs {
			fv, err := v.FieldByIndexErr(f.index)
			if err != nil {
				continue // through a nil embedded pointer, as encoding/json skips it
			}
			if f.omitEmpty && fv.IsZero() && fv.Kind() != reflect.Struct && fv.Kind() != reflect.Array {
				continue
			}
			if f.omitEmpty && (fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.Len() == 0 {
				continue
			}
			x, err := encodeValue(fv)
			if err != nil {
				return nil, err
			}
			o.Set(f.name, x)
		}
		return o, nil
	}
	return viaJSON(v.Interface())
}

func viaJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	return expr.FromJSON(b)
}

// decodeInto stores an expr value (the validated input) into dst, a
// settable value of the input struct's type or one of its fields' types.
// The input was checked against the schema derived from the same type, so
// a mismatch is a bug; it is an error, never a panic.
func decodeInto(x any, dst reflect.Value, path string) error {
	if x == nil {
		dst.SetZero()
		return nil
	}
	t := dst.Type()
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := decodeInto(x, p.Elem(), path); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	case reflect.String:
		s, ok := x.(string)
		if !ok {
			return mismatch(path, "a string", x)
		}
		dst.SetString(s)
		return nil
	case reflect.Bool:
		b, ok := x.(bool)
		if !ok {
			return mismatch(path, "a boolean", x)
		}
		dst.SetBool(b)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f, ok := x.(float64)
		// int64(f) of a float outside int64's range is undefined (it wraps): check the range first.
		if !ok || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 || dst.OverflowInt(int64(f)) {
			return mismatch(path, "an integer", x)
		}
		dst.SetInt(int64(f))
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f, ok := x.(float64)
		if !ok || f < 0 || f != math.Trunc(f) || f >= 1<<64 || dst.OverflowUint(uint64(f)) {
			return mismatch(path, "a whole number", x)
		}
		dst.SetUint(uint64(f))
		return nil
	case reflect.Float32, reflect.Float64:
		f, ok := x.(float64)
		if !ok {
			return mismatch(path, "a number", x)
		}
		dst.SetFloat(f)
		return nil
	case reflect.Slice:
		list, ok := x.([]any)
		if !ok {
			return mismatch(path, "a list", x)
		}
		s := reflect.MakeSlice(t, len(list), len(list))
		for i, y := range list {
			if err := decodeInto(y, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		dst.Set(s)
		return nil
	case reflect.Struct:
		o, ok := x.(*expr.Object)
		if !ok {
			return mismatch(path, "an object", x)
		}
		for _, f := range fieldsOfType(t) {
			y, ok := o.Get(f.name)
			if !ok {
				continue
			}
			fv, err := dst.FieldByIndexErr(f.index)
			if err != nil {
				return fmt.Errorf("%s.%s: %w", path, f.name, err)
			}
			if err := decodeInto(y, fv, path+"."+f.name); err != nil {
				return err
			}
		}
		return nil
	}
	// Anything else (an interface, a map): as encoding/json would.
	b, err := expr.ToJSON(x, "")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	p := reflect.New(t)
	if err := json.Unmarshal(b, p.Interface()); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	dst.Set(p.Elem())
	return nil
}

func mismatch(path, want string, got any) error {
	return fmt.Errorf("%s: want %s, got %s", path, want, expr.TypeOf(got))
}
