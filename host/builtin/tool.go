package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// Handler is a tool's Go function with its input schema; make one with
// Func.
type Handler interface {
	fields() ([]*plugin.InputField, error)
	hostFunc(p *Plugin) host.BuiltinFunc
}

// Func makes a Handler from a typed function (seed 003 "工具与 schema":
// the counterpart of defineTool's zod input and execute). In is a struct
// whose exported fields are the input, in order, read like this:
//
//	Label string `json:"label,omitempty" jsonschema:"what the user focuses on" harness:"max=40,trim"`
//
// The json tag names the field ("-" skips it); omitempty or a pointer makes
// it optional (absent is the zero value or nil). The jsonschema tag is the
// description for the model. The harness tag holds bounds and values:
// min=N and max=N (a number's value, a string's length in characters, a
// list's items), enum=a|b|c, default=V, pattern=RE2 (last: it may hold
// commas), trim. Field types: string, bool, the integer and float kinds,
// and slices of those (the plain subset MCP and every model provider
// accept). The schema is derived once, when the plugin is compiled; the
// host validates every call's input against it before fn runs, whoever
// calls, so fn may trust in. Out is any value encoding/json can write; it
// is the tool's result.
func Func[In, Out any](fn func(c *Context, in In) (Out, error)) Handler {
	return &typed[In, Out]{fn: fn}
}

type typed[In, Out any] struct {
	fn func(c *Context, in In) (Out, error)
}

func (t *typed[In, Out]) fields() ([]*plugin.InputField, error) {
	return FieldsOf(reflect.TypeFor[In]())
}

func (t *typed[In, Out]) hostFunc(p *Plugin) host.BuiltinFunc {
	return func(ctx context.Context, call *host.BuiltinCall) (any, error) {
		var in In
		if call.Input != nil && call.Input.Len() > 0 {
			b, err := expr.ToJSON(call.Input, "")
			if err != nil {
				return nil, &interp.Error{Kind: interp.KindInput, Msg: err.Error()}
			}
			if err := json.Unmarshal(b, &in); err != nil {
				return nil, &interp.Error{Kind: interp.KindInput, Msg: "input: " + err.Error()}
			}
		}
		c := newContext(ctx, call.Host, p.ID, call.Actor, call.Turn, call)
		out, err := t.fn(c, in)
		if err != nil {
			return nil, err
		}
		return toValue(out)
	}
}

// toValue turns a Go result into an expr value through its JSON.
func toValue(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case *expr.Object:
		return x, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	return expr.FromJSON(b)
}

// FieldsOf derives the input fields of a tool from its input struct type
// (see Func for the tags): the fields a PLUGIN.md tool would declare, so
// that host.InputSchema writes the same JSON Schema for both kinds and the
// interpreter's input check applies to both. A type outside the plain
// subset, a bad tag or a bound on the wrong kind is an error naming the
// field.
func FieldsOf(t reflect.Type) ([]*plugin.InputField, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("the input must be a struct, not %s", t)
	}
	var out []*plugin.InputField
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			return nil, fmt.Errorf("field %s: give it a json name", sf.Name)
		}
		f := &plugin.InputField{Name: name, Description: sf.Tag.Get("jsonschema")}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			f.Optional = true
			ft = ft.Elem()
		}
		if strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,") {
			f.Optional = true
		}
		typ, err := schemaType(ft)
		if err != nil {
			return nil, fmt.Errorf("field %s: %v", name, err)
		}
		f.Type = typ
		if typ == "array" {
			et, err := schemaType(ft.Elem())
			if err != nil || et == "array" {
				return nil, fmt.Errorf("field %s: list items must be strings, numbers or booleans", name)
			}
			f.Items = &plugin.InputField{Name: "items", Type: et}
		}
		if err := applyTag(f, sf.Tag.Get("harness")); err != nil {
			return nil, fmt.Errorf("field %s: %v", name, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func schemaType(t reflect.Type) (string, error) {
	switch t.Kind() {
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "boolean", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer", nil
	case reflect.Float32, reflect.Float64:
		return "number", nil
	case reflect.Slice:
		return "array", nil
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			return "object", nil // a JSON object, e.g. a draft's files or a tool's input
		}
	}
	return "", fmt.Errorf("type %s is outside the plain subset (string, bool, numbers, lists of them and objects keyed by strings)", t)
}

// applyTag reads a harness tag into f.
func applyTag(f *plugin.InputField, tag string) error {
	for tag != "" {
		var part string
		if strings.HasPrefix(tag, "pattern=") {
			part, tag = tag, ""
		} else {
			part, tag, _ = strings.Cut(tag, ",")
		}
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "trim":
			if f.Type != "string" {
				return errors.New("trim applies to strings")
			}
			f.Trim = true
		case "min", "max":
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%s=%q is not a number", k, v)
			}
			if f.Type == "boolean" {
				return fmt.Errorf("%s does not apply to a boolean", k)
			}
			if k == "min" {
				f.Min = &n
			} else {
				f.Max = &n
			}
		case "enum":
			for _, s := range strings.Split(v, "|") {
				x, err := scalar(f.Type, s)
				if err != nil {
					return fmt.Errorf("enum: %v", err)
				}
				f.Enum = append(f.Enum, x)
			}
		case "default":
			x, err := scalar(f.Type, v)
			if err != nil {
				return fmt.Errorf("default: %v", err)
			}
			f.Default, f.HasDefault = x, true
		case "pattern":
			if f.Type != "string" {
				return errors.New("pattern applies to strings")
			}
			f.Pattern = v
		case "":
		default:
			return fmt.Errorf("unknown harness tag %q (use min, max, enum, default, pattern, trim)", k)
		}
	}
	return nil
}

func scalar(typ, s string) (any, error) {
	switch typ {
	case "string":
		return s, nil
	case "boolean":
		return strconv.ParseBool(s)
	case "integer", "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		if typ == "integer" && n != float64(int64(n)) {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	}
	return nil, fmt.Errorf("a %s field takes no enum or default", typ)
}

// Errorf returns a tool failure the user can act on (seed 003 "工具与
// schema": a state the user can fix is a clear error, not a crash). The
// host reports it as an *interp.Error of kind "tool".
func Errorf(format string, args ...any) error {
	return &interp.Error{Kind: host.KindTool, Msg: fmt.Sprintf(format, args...)}
}
