package interp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// validateInput checks a tool's input against its declared fields and
// returns the input every step sees: an object holding each declared field
// in declaration order, strings trimmed where `trim` is set, defaults filled
// in, and absent optional fields null (seed 004 "Tools": "The app checks the
// whole input before any step runs"). in must be null or an object; a null
// field counts as absent. An unknown field is an error, so a misspelt name
// cannot silently fall back to a default. min and max bound a number's
// value, a string's length in characters and a list's number of items;
// pattern is an unanchored RE2 search. Errors are of kind input and name the
// field: `input.day: must be one of "today", "tomorrow" (got "monday")`.
func validateInput(ctx context.Context, t *plugin.Tool, env *expr.Env, in any, b *expr.Budget) (*expr.Object, error) {
	obj, ok := in.(*expr.Object)
	if in == nil {
		obj = expr.NewObject(0)
	} else if !ok {
		return nil, inputErr(t, nil, "input", "must be an object (got %s)", expr.TypeOf(in))
	}
	declared := map[string]bool{}
	out := expr.NewObject(len(t.Input))
	for _, f := range t.Input {
		declared[f.Name] = true
		v, _ := obj.Get(f.Name)
		v, err := checkField(ctx, t, env, f, "input."+f.Name, v, b)
		if err != nil {
			return nil, err
		}
		out.Set(f.Name, v)
	}
	for _, k := range obj.Keys() {
		if !declared[k] {
			return nil, inputErr(t, nil, "input."+k, "unknown field (the tool takes %s)", fieldNames(t))
		}
	}
	return out, nil
}

func fieldNames(t *plugin.Tool) string {
	if len(t.Input) == 0 {
		return "no input"
	}
	names := make([]string, len(t.Input))
	for i, f := range t.Input {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

func inputErr(t *plugin.Tool, f *plugin.InputField, name, format string, args ...any) *Error {
	e := &Error{Kind: KindInput, Msg: name + ": " + fmt.Sprintf(format, args...), File: t.File}
	if f != nil {
		e.Pos = f.Pos
	} else if t.Pos != nil {
		e.Pos = t.Pos.At("input")
	}
	return e
}

// checkField validates and normalises one value against f; name is the
// path shown in errors (input.rooms[2]).
func checkField(ctx context.Context, t *plugin.Tool, env *expr.Env, f *plugin.InputField, name string, v any, b *expr.Budget) (any, error) {
	if s, ok := v.(string); ok && f.Trim {
		v = strings.TrimSpace(s)
	}
	if v == nil {
		switch {
		case f.HasDefault:
			return f.Default, nil
		case f.Optional:
			return nil, nil
		default:
			return nil, inputErr(t, f, name, "is required")
		}
	}
	typ := f.Type
	if typ == "" && len(f.Enum) == 0 {
		typ = "any"
	}
	var size float64 // what min and max bound
	hasSize := true
	switch typ {
	case "string":
		s, ok := v.(string)
		if !ok {
			return nil, inputErr(t, f, name, "must be a string (got %s)", typeName(v))
		}
		size = float64(utf8.RuneCountInString(s))
	case "number", "integer":
		n, ok := v.(float64)
		if !ok {
			article := "a"
			if typ == "integer" {
				article = "an"
			}
			return nil, inputErr(t, f, name, "must be %s %s (got %s)", article, typ, typeName(v))
		}
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, inputErr(t, f, name, "must be a finite number")
		}
		if typ == "integer" && n != math.Trunc(n) {
			return nil, inputErr(t, f, name, "must be an integer (got %s)", expr.FormatNumber(n))
		}
		size = n
	case "boolean":
		if _, ok := v.(bool); !ok {
			return nil, inputErr(t, f, name, "must be a boolean (got %s)", typeName(v))
		}
		hasSize = false
	case "array":
		l, ok := v.([]any)
		if !ok {
			return nil, inputErr(t, f, name, "must be a list (got %s)", typeName(v))
		}
		size = float64(len(l))
		if f.Items != nil {
			nl := make([]any, len(l))
			for i, x := range l {
				y, err := checkField(ctx, t, env, f.Items, fmt.Sprintf("%s[%d]", name, i), x, b)
				if err != nil {
					return nil, err
				}
				nl[i] = y
			}
			v = nl
		}
	case "object":
		if _, ok := v.(*expr.Object); !ok {
			return nil, inputErr(t, f, name, "must be an object (got %s)", typeName(v))
		}
		hasSize = false
	default:
		if _, ok := v.(*expr.Node); ok {
			return nil, inputErr(t, f, name, "must be JSON (got an HTML node)")
		}
		hasSize = false
	}
	if len(f.Enum) > 0 {
		found := false
		for _, e := range f.Enum {
			if expr.Equal(e, v) {
				found = true
				break
			}
		}
		if !found {
			opts := make([]string, len(f.Enum))
			for i, e := range f.Enum {
				opts[i] = short(e)
			}
			return nil, inputErr(t, f, name, "must be one of %s (got %s)", strings.Join(opts, ", "), short(v))
		}
	}
	if hasSize {
		unit := ""
		switch typ {
		case "string":
			unit = " characters"
		case "array":
			unit = " items"
		}
		if f.Min != nil && size < *f.Min {
			return nil, inputErr(t, f, name, "must be at least %s%s (got %s)", expr.FormatNumber(*f.Min), unit, expr.FormatNumber(size))
		}
		if f.Max != nil && size > *f.Max {
			return nil, inputErr(t, f, name, "must be at most %s%s (got %s)", expr.FormatNumber(*f.Max), unit, expr.FormatNumber(size))
		}
	}
	if f.Pattern != "" {
		s, ok := v.(string)
		if !ok {
			return nil, inputErr(t, f, name, "must be a string to match a pattern (got %s)", typeName(v))
		}
		// test() compiles the pattern and scans the text, charged to the run's budget before
		// each (by the program's size, and by the text's length times it).
		x, err := env.Parse("test(v, arg)")
		if err == nil {
			var m any
			if m, err = x.Eval(ctx, patternVars{s, f.Pattern}, b); err == nil {
				ok, _ = m.(bool)
			}
		}
		if err != nil {
			if e := walkErr(ctx, err, name+": pattern"); e.Kind == KindLimit {
				return nil, e
			}
			var re *expr.RuntimeError
			if errors.As(err, &re) {
				return nil, inputErr(t, f, name, "bad pattern: %s", re.Msg)
			}
			return nil, inputErr(t, f, name, "bad pattern: %v", err)
		}
		if !ok {
			return nil, inputErr(t, f, name, "must match %s (got %s)", f.Pattern, short(s))
		}
	}
	return v, nil
}

// typeName names a value's type for a person: the docs/DECISIONS.md §5
// typeOf name.
func typeName(v any) string { return expr.TypeOf(v) }

// shortLen is how many characters of a value an input error shows.
const shortLen = 40

// short renders v as compact JSON for a message, cut to shortLen characters.
// Its walk stops at 16×shortLen bytes, so a huge input costs nothing to show.
func short(v any) string {
	if s, ok := v.(string); ok && len(s) > 4*shortLen {
		v = s[:4*shortLen] // the JSON of the rest would be cut anyway
	}
	b, err := expr.EncodeJSON(v, "", 16*shortLen, nil)
	if errors.Is(err, expr.ErrTooLarge) {
		return expr.TypeOf(v) + " (too long to show)"
	}
	if err != nil {
		return expr.TypeOf(v)
	}
	s := string(b)
	if utf8.RuneCountInString(s) > shortLen {
		r := []rune(s)
		s = string(r[:shortLen]) + "…"
	}
	return s
}

// CheckInput validates input against tool t's declared fields exactly as Run does before any
// step (seed 004 "Tools": the whole input is checked first) and returns the input the steps
// would see. A host uses it to refuse a malformed call before asking a person to confirm it.
// Errors are *Error of kind input naming the field.
func CheckInput(t *plugin.Tool, input any) (*expr.Object, error) {
	if t.Env == nil {
		return nil, errf(KindInput, "tool %s did not load (the plugin has validation errors)", t.Name)
	}
	return validateInput(context.Background(), t, t.Env, input, expr.NewBudget(MaxOperations))
}

// patternVars are the names test(v, arg) reads when an input's pattern is checked.
type patternVars struct{ v, arg string }

func (p patternVars) Lookup(name string) (any, bool) {
	switch name {
	case "v":
		return p.v, true
	case "arg":
		return p.arg, true
	}
	return nil, false
}
