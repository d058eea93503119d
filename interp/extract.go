package interp

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// selectors caches compiled CSS selectors across runs; the set of distinct
// selectors is bounded by the loaded plugins' text.
var selectors sync.Map // string → cascadia.Selector

func compileSelector(sel string) (cascadia.Selector, error) {
	if s, ok := selectors.Load(sel); ok {
		return s.(cascadia.Selector), nil
	}
	s, err := cascadia.Compile(sel)
	if err != nil {
		return nil, err
	}
	selectors.Store(sel, s)
	return s, nil
}

// extract picks items out of HTML (docs/DECISIONS.md §6, §10): every element
// matching Each under From becomes an object with one entry per field,
// each the value of `selector | pipe | pipe`. At most Limit items when
// Limit > 0.
func (r *run) extract(ctx context.Context, s *scope, st *plugin.Step) (any, error) {
	ex := st.Extract
	from, err := r.eval(ctx, s, ex.From)
	if err != nil {
		return nil, err
	}
	var root *html.Node
	switch v := from.(type) {
	case *expr.Node:
		root = v.N
	case string:
		// Parsed by the html built-in, and so charged as it is: per KB and per node the
		// parse may create, before parsing.
		_, htmlX := parsers()
		doc, msg, err := parseCharged(ctx, htmlX, v, r.budget)
		if err != nil {
			return nil, err
		}
		if msg != "" {
			return nil, errf(KindExpression, "extract from: not HTML: %s", msg)
		}
		n, ok := doc.(*expr.Node)
		if !ok {
			return nil, errf(KindExpression, "extract from: not HTML: got %s", expr.Describe(doc))
		}
		root = n.N
	default:
		return nil, errf(KindExpression, "extract from: expected HTML text or a node, got %s", expr.Describe(from))
	}
	if root == nil {
		return []any{}, nil
	}
	if _, err := compileSelector(ex.Each); err != nil {
		return nil, errf(KindExpression, "extract each: bad selector %q: %v", ex.Each, err)
	}
	base := r.baseURL(ex.From, root)
	// select() matches as the built-in does: charged per element and step tried, and
	// memoized, so a selector of many descendant steps cannot try every chain of ancestors.
	sel, err := r.builtin(ctx, s, "select(v, arg)", &expr.Node{N: root}, ex.Each)
	if err != nil {
		if e := walkErr(ctx, err, "extract each"); e.Kind == KindLimit {
			return nil, e
		}
		return nil, errf(KindExpression, "extract each: bad selector %q: %v", ex.Each, err)
	}
	found, _ := sel.([]any)
	matches := make([]*html.Node, len(found))
	for i, x := range found {
		matches[i] = x.(*expr.Node).N
	}
	if st.Limit > 0 && len(matches) > st.Limit {
		matches = matches[:st.Limit]
	}
	if err := r.budget.Charge(len(matches) * (1 + len(ex.Fields))); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(matches))
	for _, m := range matches {
		item := expr.NewObject(len(ex.Fields))
		for _, f := range ex.Fields {
			v, err := r.field(ctx, s, m, f, base)
			if err != nil {
				return nil, err
			}
			item.Set(f.Name, v)
		}
		out = append(out, item)
	}
	return out, nil
}

// baseURL finds the URL the url pipe resolves against: that of the reply
// bound to the name From reads, or of the reply the node came from, or the
// run's latest reply.
func (r *run) baseURL(from *plugin.ExprField, root *html.Node) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u, ok := r.replyAt[strings.TrimSpace(from.Src)]; ok {
		return u
	}
	for root.Parent != nil {
		root = root.Parent
	}
	if u, ok := r.docURL[root]; ok {
		return u
	}
	return r.lastURL
}

// pipeVars gives a builtin called for a pipe its argument and the run's
// variables (date needs now).
type pipeVars struct {
	s    expr.Vars
	v    any
	arg2 any
}

func (p pipeVars) Lookup(name string) (any, bool) {
	switch name {
	case "v":
		return p.v, true
	case "arg":
		return p.arg2, true
	}
	return p.s.Lookup(name)
}

// builtin calls a standard-library function on v through the tool's Env,
// so extract pipes mean exactly what the functions of the same name mean.
func (r *run) builtin(ctx context.Context, s *scope, src string, v, arg any) (any, error) {
	x, err := s.tc.t.Env.Parse(src)
	if err != nil {
		return nil, err
	}
	return x.Eval(ctx, pipeVars{s, v, arg}, r.budget)
}

// field computes one extract field of the item m.
func (r *run) field(ctx context.Context, s *scope, m *html.Node, f *plugin.ExtractField, base string) (any, error) {
	var v any
	sel := strings.TrimSpace(f.Selector)
	if sel == "" || sel == "." {
		v = &expr.Node{N: m}
	} else {
		if _, err := compileSelector(sel); err != nil {
			return nil, errf(KindExpression, "extract field %s: bad selector %q: %v", f.Name, sel, err)
		}
		// first() matches as the built-in does, charged and memoized (see extract).
		n, err := r.builtin(ctx, s, "first(v, arg)", &expr.Node{N: m}, sel)
		if err != nil {
			if e := walkErr(ctx, err, "extract field "+f.Name); e.Kind == KindLimit {
				return nil, e
			}
			return nil, errf(KindExpression, "extract field %s: bad selector %q: %v", f.Name, sel, err)
		}
		if n == nil {
			return nil, nil
		}
		v = n
	}
	fail := func(err error) error {
		if e := walkErr(ctx, err, "extract field "+f.Name); e.Kind == KindLimit {
			return e
		}
		var re *expr.RuntimeError
		if errors.As(err, &re) {
			return errf(KindExpression, "extract field %s: %s", f.Name, re.Msg)
		}
		return errf(KindExpression, "extract field %s: %v", f.Name, err)
	}
	text := func() error {
		if _, ok := v.(*expr.Node); ok {
			t, err := r.builtin(ctx, s, "htmlText(v)", v, nil)
			if err != nil {
				return fail(err)
			}
			v = t
		}
		return nil
	}
	for _, p := range f.Pipes {
		if v == nil {
			return nil, nil
		}
		switch p.Name {
		case "text":
			if err := text(); err != nil {
				return nil, err
			}
		case "html":
			if _, ok := v.(*expr.Node); ok {
				t, err := r.builtin(ctx, s, "innerHtml(v)", v, nil)
				if err != nil {
					return nil, fail(err)
				}
				v = t
			}
		case "attr":
			n, ok := v.(*expr.Node)
			if !ok {
				return nil, errf(KindExpression, "extract field %s: attr %s needs an element, got %s", f.Name, p.Arg, expr.Describe(v))
			}
			v = nil
			for _, a := range n.N.Attr {
				if strings.EqualFold(a.Key, p.Arg) {
					v = a.Val
					break
				}
			}
		case "url":
			if err := text(); err != nil {
				return nil, err
			}
			t, err := expr.ToText(v)
			if err != nil {
				return nil, fail(err)
			}
			ref := strings.TrimSpace(t)
			if b, err := url.Parse(base); err == nil && base != "" {
				if u, err := b.Parse(ref); err == nil {
					ref = u.String()
				}
			}
			v = ref
		case "num", "int":
			if err := text(); err != nil {
				return nil, err
			}
			x, err := r.builtin(ctx, s, p.Name+"(v)", v, nil)
			if err != nil {
				return nil, fail(err)
			}
			v = x
		case "date":
			if err := text(); err != nil {
				return nil, err
			}
			src := "date(v)"
			if p.Arg != "" {
				src = "date(v, arg)"
			}
			x, err := r.builtin(ctx, s, src, v, p.Arg)
			if err != nil {
				return nil, fail(err)
			}
			v = x
		case "match":
			if err := text(); err != nil {
				return nil, err
			}
			str, ok := v.(string)
			if !ok {
				return nil, errf(KindExpression, "extract field %s: match needs text, got %s", f.Name, expr.Describe(v))
			}
			// match() compiles the pattern and scans the text, each charged before it runs (by
			// the program's size, and by the text's length times it). Group 1 that took no
			// part in the match is null, as in match(); "" is a group that matched empty text.
			x, err := r.builtin(ctx, s, "match(v, arg)", str, p.Arg)
			if err != nil {
				return nil, fail(err)
			}
			switch g, _ := x.([]any); {
			case len(g) > 1:
				v = g[1]
			case len(g) == 1:
				v = g[0]
			default:
				v = nil
			}
		case "trim", "lower", "upper":
			if err := text(); err != nil {
				return nil, err
			}
			str, ok := v.(string)
			if !ok {
				return nil, errf(KindExpression, "extract field %s: %s needs text, got %s", f.Name, p.Name, expr.Describe(v))
			}
			switch p.Name {
			case "trim":
				v = strings.TrimSpace(str)
			case "lower":
				v = strings.ToLower(str)
			default:
				v = strings.ToUpper(str)
			}
		default:
			return nil, errf(KindExpression, "extract field %s: unknown pipe %q", f.Name, p.Name)
		}
	}
	if err := text(); err != nil {
		return nil, err
	}
	return v, nil
}
