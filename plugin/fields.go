package plugin

import (
	"context"
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
)

// ExprField is a field that holds an expression (seed "Expressions": value, each, if, check,
// return, next, items, from, the input of call, the args of ability and function bodies). Expr is
// nil when the source did not parse; a diagnostic says why.
type ExprField struct {
	Scalar
	Expr *expr.Expr // nil when Src did not parse
}

// TemplateField is a string field that is a template (docs/DECISIONS.md §3). Tmpl is nil when the
// source did not parse.
type TemplateField struct {
	Scalar
	Tmpl *expr.Template // nil when Src did not parse
}

// EvalError is an expression or template error placed in its file: Pos is the position in File
// (not in the expression). Kind is the expr.RuntimeError kind ("expression" or "limit").
type EvalError struct {
	File string   // the YAML file
	Pos  diag.Pos // position in File
	Kind string   // "expression" or "limit"
	Msg  string   // the expr message without its position
	Err  error    // the error as expr returned it
}

// Error formats the error as "FILE:LINE:COL: message".
func (e *EvalError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// Unwrap returns the underlying expr error.
func (e *EvalError) Unwrap() error { return e.Err }

// place turns an error from evaluating sc's source into an *EvalError positioned in the file.
// Errors other than *expr.RuntimeError (a cancelled context) are returned unchanged.
func (sc *Scalar) place(err error) error {
	if err == nil {
		// Before the errors.As target, which escapes: a successful evaluation allocates nothing here.
		return nil
	}
	var re *expr.RuntimeError
	if !errors.As(err, &re) {
		return err
	}
	return &EvalError{File: sc.File, Pos: sc.FilePos(re.Pos), Kind: re.Kind, Msg: re.Msg, Err: err}
}

// Eval evaluates the expression. A runtime error comes back as an *EvalError whose position is in
// the YAML file. Calling Eval on a field whose source did not parse is an error.
func (f *ExprField) Eval(ctx context.Context, vars expr.Vars, b *expr.Budget) (any, error) {
	if f.Expr == nil {
		return nil, &EvalError{File: f.File, Pos: f.Pos, Kind: "expression", Msg: "expression did not parse"}
	}
	v, err := f.Expr.Eval(ctx, vars, b)
	return v, f.place(err)
}

// Render renders the template: a string, or the expression's value when the template is exactly
// one ${expr} (docs/DECISIONS.md §3). Errors are placed as in ExprField.Eval.
func (f *TemplateField) Render(ctx context.Context, vars expr.Vars, b *expr.Budget) (any, error) {
	if f.Tmpl == nil {
		return nil, &EvalError{File: f.File, Pos: f.Pos, Kind: "expression", Msg: "template did not parse"}
	}
	v, err := f.Tmpl.Render(ctx, vars, b)
	return v, f.place(err)
}

// TemplateValue is a YAML value whose strings are templates: the `query`, `headers`, `form` and
// `json` of a request. Exactly one of the shapes is set: Tmpl for a string, List for a list, Keys
// and Fields (parallel, in written order) for a map, or Scalar for null, a boolean or a number.
type TemplateValue struct {
	Tmpl   *TemplateField   // a string
	List   []*TemplateValue // a list (non-nil, maybe empty)
	Keys   []string         // a map's keys, in written order
	Fields []*TemplateValue // a map's values, parallel to Keys
	IsMap  bool             // the value is a map
	Scalar any              // null, a boolean or a number
	Pos    diag.Pos         // position of the value
}

// Render renders every template in the value and returns the plain value: a string or typed
// value for a template, []any for a list, *expr.Object (keys in written order) for a map, or the
// scalar.
func (v *TemplateValue) Render(ctx context.Context, vars expr.Vars, b *expr.Budget) (any, error) {
	switch {
	case v == nil:
		return nil, nil
	case v.Tmpl != nil:
		return v.Tmpl.Render(ctx, vars, b)
	case v.IsMap:
		obj := expr.NewObject(len(v.Keys))
		for i, k := range v.Keys {
			x, err := v.Fields[i].Render(ctx, vars, b)
			if err != nil {
				return nil, err
			}
			obj.Set(k, x)
		}
		return obj, nil
	case v.List != nil:
		out := make([]any, len(v.List))
		for i, e := range v.List {
			x, err := e.Render(ctx, vars, b)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	}
	return v.Scalar, nil
}

// templates calls fn for every template in the value, in written order.
func (v *TemplateValue) templates(fn func(*TemplateField)) {
	if v == nil {
		return
	}
	if v.Tmpl != nil {
		fn(v.Tmpl)
	}
	for _, e := range v.List {
		e.templates(fn)
	}
	for _, e := range v.Fields {
		e.templates(fn)
	}
}
