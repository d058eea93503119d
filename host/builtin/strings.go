package builtin

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/pkuinfo/harness/i18n"
)

// Strings is a UI string table (seed 003 "多语言": defineStrings): for each
// locale, key → a string, or a function returning one for a parameterised
// text (never fragments to concatenate, since the two languages order
// words differently). Both locales have the same keys, and a key's value
// has the same type in both; the package's i18n test fails otherwise.
type Strings map[i18n.Locale]map[string]any

// T returns the text of key in locale l (zh-Hans for any locale but en),
// calling a function value with args. A missing key or a wrong call is
// written into the text as [key], so that it is seen and the coverage test
// names it.
func (s Strings) T(l i18n.Locale, key string, args ...any) string {
	v, ok := s[l.Or()][key]
	if !ok {
		return "[" + key + "]"
	}
	if str, ok := v.(string); ok {
		if len(args) > 0 {
			return "[" + key + "]"
		}
		return str
	}
	fv := reflect.ValueOf(v)
	ft := fv.Type()
	if ft.Kind() != reflect.Func || ft.NumIn() != len(args) || ft.NumOut() != 1 || ft.Out(0).Kind() != reflect.String {
		return "[" + key + "]"
	}
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		av := reflect.ValueOf(a)
		if !av.IsValid() || !av.Type().AssignableTo(ft.In(i)) {
			return "[" + key + "]"
		}
		in[i] = av
	}
	return fv.Call(in)[0].String()
}

// Check reports every difference between the two locales of s: a key in
// one only, a value that is neither a string nor a func(...) string, or
// a key whose types differ.
func (s Strings) Check() []string {
	var out []string
	zh, en := s[i18n.Zh], s[i18n.En]
	keys := map[string]bool{}
	for k := range zh {
		keys[k] = true
	}
	for k := range en {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	for _, k := range sorted {
		a, okA := zh[k]
		b, okB := en[k]
		switch {
		case !okA:
			out = append(out, fmt.Sprintf("strings.%s: only in en (add the zh-Hans source)", k))
			continue
		case !okB:
			out = append(out, fmt.Sprintf("strings.%s: missing in en", k))
			continue
		}
		for _, v := range []any{a, b} {
			if !textValue(v) {
				out = append(out, fmt.Sprintf("strings.%s: %T is neither a string nor a func returning one", k, v))
			}
		}
		if reflect.TypeOf(a) != reflect.TypeOf(b) {
			out = append(out, fmt.Sprintf("strings.%s: zh-Hans is %T, en is %T", k, a, b))
		}
	}
	return out
}

func textValue(v any) bool {
	if _, ok := v.(string); ok {
		return true
	}
	t := reflect.TypeOf(v)
	return t != nil && t.Kind() == reflect.Func && t.NumOut() == 1 && t.Out(0).Kind() == reflect.String
}
