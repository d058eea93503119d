package stdlib

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/lang/expr"
)

// registerObjects adds the object functions of docs/DECISIONS.md §5. Results are new objects that
// keep key order.
func registerObjects(env *expr.Env) {
	m := expr.Method()
	env.Register("keys", fnKeys, m, expr.Args(1, 1))
	env.Register("values", fnValues, m, expr.Args(1, 1))
	env.Register("entries", fnEntries, m, expr.Args(1, 1))
	env.Register("fromEntries", fnFromEntries, m, expr.Args(1, 1))
	env.Register("pick", fnPick, m, expr.Args(2, -1))
	env.Register("omit", fnOmit, m, expr.Args(2, -1))
	env.Register("merge", fnMerge, m, expr.Args(1, -1))
	env.Register("has", fnHas, m, expr.Args(2, 2))
	env.Register("get", fnGet, m, expr.Args(2, 3))
}

func fnKeys(c *expr.Call, args []any) (any, error) {
	o, err := argObject(args, 0)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(o.Len()); err != nil {
		return nil, err
	}
	out := make([]any, o.Len())
	for i, k := range o.Keys() {
		out[i] = k
	}
	return out, nil
}

func fnValues(c *expr.Call, args []any) (any, error) {
	o, err := argObject(args, 0)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(o.Len()); err != nil {
		return nil, err
	}
	return o.Values(), nil
}

// fnEntries is entries(obj) → [[key, value], …].
func fnEntries(c *expr.Call, args []any) (any, error) {
	o, err := argObject(args, 0)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(o.Len()); err != nil {
		return nil, err
	}
	out := make([]any, o.Len())
	for i := range out {
		k, v := o.Entry(i)
		out[i] = []any{k, v}
	}
	return out, nil
}

// fnFromEntries is fromEntries([[key, value], …]) → an object; keys are spelled as text.
func fnFromEntries(c *expr.Call, args []any) (any, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(len(l)); err != nil {
		return nil, err
	}
	o := expr.NewObject(len(l))
	for i, e := range l {
		pair, ok := e.([]any)
		if !ok || len(pair) < 1 {
			return nil, fmt.Errorf("item %d must be a [key, value] list, got %s", i, expr.Describe(e))
		}
		k, err := textKey(c, pair[0])
		if err != nil && isCharge(err) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("item %d: key: %v", i, err)
		}
		var v any
		if len(pair) > 1 {
			v = pair[1]
		}
		o.Set(k, v)
	}
	return o, nil
}

// keyList reads the keys of pick/omit: a list of names, or names as further arguments.
func keyList(args []any) ([]string, error) {
	var raw []any
	if l, ok := args[1].([]any); ok && len(args) == 2 {
		raw = l
	} else {
		raw = args[1:]
	}
	out := make([]string, len(raw))
	for i, k := range raw {
		s, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("key %d must be a string, got %s", i+1, expr.Describe(k))
		}
		out[i] = s
	}
	return out, nil
}

// fnPick is pick(obj, keys): an object with only those keys that obj has, in the order of keys.
func fnPick(c *expr.Call, args []any) (any, error) {
	o, err := argObject(args, 0)
	if err != nil {
		return nil, err
	}
	keys, err := keyList(args)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(len(keys)); err != nil {
		return nil, err
	}
	out := expr.NewObject(len(keys))
	for _, k := range keys {
		if v, ok := o.Get(k); ok {
			out.Set(k, v)
		}
	}
	return out, nil
}

// fnOmit is omit(obj, keys): obj without those keys.
func fnOmit(c *expr.Call, args []any) (any, error) {
	o, err := argObject(args, 0)
	if err != nil {
		return nil, err
	}
	keys, err := keyList(args)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(o.Len() + len(keys)); err != nil {
		return nil, err
	}
	drop := make(map[string]bool, len(keys))
	for _, k := range keys {
		drop[k] = true
	}
	out := expr.NewObject(o.Len())
	for i := 0; i < o.Len(); i++ {
		if k, v := o.Entry(i); !drop[k] {
			out.Set(k, v)
		}
	}
	return out, nil
}

// fnMerge is merge(a, b, …): a shallow merge, later keys winning (null arguments are skipped).
func fnMerge(c *expr.Call, args []any) (any, error) {
	n := 0
	for i, a := range args {
		switch x := a.(type) {
		case *expr.Object:
			n += x.Len()
		case nil:
		default:
			return nil, fmt.Errorf("argument %d must be an object, got %s", i+1, expr.Describe(a))
		}
	}
	if err := c.Charge(n); err != nil {
		return nil, err
	}
	out := expr.NewObject(n)
	for _, a := range args {
		if o, ok := a.(*expr.Object); ok {
			for i := 0; i < o.Len(); i++ {
				out.Set(o.Entry(i))
			}
		}
	}
	return out, nil
}

// fnHas is has(obj, key): whether the object has the key (false for null).
func fnHas(c *expr.Call, args []any) (any, error) {
	if args[0] == nil {
		return false, nil
	}
	o, err := argObject(args, 0)
	if err != nil {
		return nil, err
	}
	k, err := argString(args, 1)
	if err != nil {
		return nil, err
	}
	_, ok := o.Get(k)
	return ok, nil
}

// fnGet is get(obj, 'a.b.0', default?): follows a dotted path (or a list of keys) through objects
// and lists; default (else null) when a step is missing or null.
func fnGet(c *expr.Call, args []any) (any, error) {
	var path []any
	switch p := args[1].(type) {
	case string:
		if p != "" {
			for _, s := range strings.Split(p, ".") {
				path = append(path, s)
			}
		}
	case float64:
		path = []any{p}
	case []any:
		path = p
	default:
		return nil, fmt.Errorf("argument 2 must be a path such as 'a.b.0' or a list of keys, got %s", expr.Describe(args[1]))
	}
	var def any
	if len(args) > 2 {
		def = args[2]
	}
	if err := c.Charge(len(path)); err != nil {
		return nil, err
	}
	v := args[0]
	for _, step := range path {
		switch x := v.(type) {
		case *expr.Object:
			var k string
			switch s := step.(type) {
			case string:
				k = s
			case float64:
				k = expr.FormatNumber(s)
			default:
				return def, nil
			}
			v, _ = x.Get(k)
		case []any:
			var i float64
			switch s := step.(type) {
			case float64:
				i = s
			case string:
				n, err := strconv.Atoi(s)
				if err != nil {
					return def, nil
				}
				i = float64(n)
			default:
				return def, nil
			}
			if i < 0 {
				i += float64(len(x))
			}
			if i < 0 || i >= float64(len(x)) || i != math.Trunc(i) {
				return def, nil
			}
			v = x[int(i)]
		default:
			return def, nil
		}
		if v == nil {
			return def, nil
		}
	}
	return v, nil
}
