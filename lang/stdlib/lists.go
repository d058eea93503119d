package stdlib

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/expr"
)

// Size limits of list builtins (docs/DECISIONS.md §5).
const (
	// MaxRange is the most items range may produce.
	MaxRange = 10_000
)

// registerLists adds the list functions of docs/DECISIONS.md §5. Callbacks receive (item, index);
// reduce's receives (acc, item, index); sort's comparator (a, b).
func registerLists(env *expr.Env) {
	m := expr.Method()
	env.Register("len", fnLen, m, expr.Args(1, 1))
	env.Register("map", fnMap, m, expr.Args(2, 2))
	env.Register("filter", fnFilter, m, expr.Args(2, 2))
	env.Register("find", fnFind, m, expr.Args(2, 2))
	env.Register("findIndex", fnFindIndex, m, expr.Args(2, 2))
	env.Register("some", fnSome, m, expr.Args(2, 2))
	env.Register("every", fnEvery, m, expr.Args(2, 2))
	env.Register("reduce", fnReduce, m, expr.Args(2, 3))
	env.Register("includes", fnIncludes, m, expr.Args(2, 2))
	env.Register("indexOf", fnIndexOf, m, expr.Args(2, 2))
	env.Register("lastIndexOf", fnLastIndexOf, m, expr.Args(2, 2))
	env.Register("slice", fnSlice, m, expr.Args(1, 3))
	env.Register("concat", fnConcat, m, expr.Args(1, -1))
	env.Register("join", fnJoin, m, expr.Args(1, 2))
	env.Register("reverse", fnReverse, m, expr.Args(1, 1))
	env.Register("sort", fnSort, m, expr.Args(1, 2))
	env.Register("sortBy", fnSortBy, m, expr.Args(2, 3))
	env.Register("groupBy", fnGroupBy, m, expr.Args(2, 2))
	env.Register("uniq", fnUniq, m, expr.Args(1, 1))
	env.Register("uniqBy", fnUniqBy, m, expr.Args(2, 2))
	env.Register("flat", fnFlat, m, expr.Args(1, 2))
	env.Register("flatMap", fnFlatMap, m, expr.Args(2, 2))
	env.Register("sum", fnSum, m, expr.Args(1, 2))
	env.Register("min", fnMinMax(-1), m, expr.Args(1, -1))
	env.Register("max", fnMinMax(1), m, expr.Args(1, -1))
	env.Register("avg", fnAvg, m, expr.Args(1, 2))
	env.Register("count", fnCount, m, expr.Args(1, 2))
	env.Register("take", fnTake, m, expr.Args(2, 2))
	env.Register("range", fnRange, expr.Args(1, 3))
	env.Register("zip", fnZip, m, expr.Args(1, -1))
	env.Register("chunk", fnChunk, m, expr.Args(2, 2))
	env.Register("at", fnAt, m, expr.Args(2, 2))
	env.Register("last", fnLast, m, expr.Args(1, 1))
}

// fnLen is len(x): the items of a list, the characters (code points) of a string, the keys of
// an object.
func fnLen(c *expr.Call, args []any) (any, error) {
	switch x := args[0].(type) {
	case []any:
		return float64(len(x)), nil
	case string:
		if err := c.Charge(len(x) / 1024); err != nil {
			return nil, err
		}
		return float64(utf8.RuneCountInString(x)), nil
	case *expr.Object:
		return float64(x.Len()), nil
	}
	return nil, fmt.Errorf("expected a list, a string or an object, got %s", expr.Describe(args[0]))
}

// each runs f over the list with a callback, charging one operation per item first.
func each(c *expr.Call, args []any, body func(i int, item, r any) (stop bool, err error)) error {
	l, err := argList(args, 0)
	if err != nil {
		return err
	}
	fn, err := argFunc(args, 1)
	if err != nil {
		return err
	}
	if err := c.Charge(len(l)); err != nil {
		return err
	}
	for i, item := range l {
		r, err := c.CallFunc(fn, item, expr.IntValue(i))
		if err != nil {
			return err
		}
		stop, err := body(i, item, r)
		if err != nil || stop {
			return err
		}
	}
	return nil
}

func fnMap(c *expr.Call, args []any) (any, error) {
	l, _ := args[0].([]any)
	out := make([]any, 0, len(l))
	err := each(c, args, func(_ int, _, r any) (bool, error) {
		out = append(out, r)
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func fnFilter(c *expr.Call, args []any) (any, error) {
	out := []any{}
	err := each(c, args, func(_ int, item, r any) (bool, error) {
		if expr.Truthy(r) {
			out = append(out, item)
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func fnFind(c *expr.Call, args []any) (any, error) {
	var found any
	err := each(c, args, func(_ int, item, r any) (bool, error) {
		if expr.Truthy(r) {
			found = item
			return true, nil
		}
		return false, nil
	})
	return found, err
}

func fnFindIndex(c *expr.Call, args []any) (any, error) {
	found := -1
	err := each(c, args, func(i int, _, r any) (bool, error) {
		if expr.Truthy(r) {
			found = i
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return float64(found), nil
}

func fnSome(c *expr.Call, args []any) (any, error) {
	found := false
	err := each(c, args, func(_ int, _, r any) (bool, error) {
		found = expr.Truthy(r)
		return found, nil
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

func fnEvery(c *expr.Call, args []any) (any, error) {
	all := true
	err := each(c, args, func(_ int, _, r any) (bool, error) {
		all = expr.Truthy(r)
		return !all, nil
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

// fnReduce is reduce(list, f, init): f(acc, item, index). Without init the first item is the
// start (as in JavaScript); an empty list without init is an error.
func fnReduce(c *expr.Call, args []any) (any, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	fn, err := argFunc(args, 1)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(len(l)); err != nil {
		return nil, err
	}
	start := 0
	var acc any
	if len(args) > 2 {
		acc = args[2]
	} else {
		if len(l) == 0 {
			return nil, fmt.Errorf("empty list and no initial value")
		}
		acc, start = l[0], 1
	}
	for i := start; i < len(l); i++ {
		if acc, err = c.CallFunc(fn, acc, l[i], expr.IntValue(i)); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// fnIncludes is includes(list, x) (deep equality) or includes(s, sub).
func fnIncludes(c *expr.Call, args []any) (any, error) {
	i, err := indexOf(c, args, false)
	if err != nil {
		return nil, err
	}
	return i >= 0, nil
}

func fnIndexOf(c *expr.Call, args []any) (any, error) {
	i, err := indexOf(c, args, false)
	return float64(i), err
}

func fnLastIndexOf(c *expr.Call, args []any) (any, error) {
	i, err := indexOf(c, args, true)
	return float64(i), err
}

func indexOf(c *expr.Call, args []any, last bool) (int, error) {
	switch x := args[0].(type) {
	case []any:
		if err := c.Charge(len(x)); err != nil {
			return 0, err
		}
		for k := range x {
			i := k
			if last {
				i = len(x) - 1 - k
			}
			eq, err := expr.EqualCharged(x[i], args[1], c) // charged as it visits
			if err != nil {
				return 0, err
			}
			if eq {
				return i, nil
			}
		}
		return -1, nil
	case string:
		sub, err := argString(args, 1)
		if err != nil {
			return 0, err
		}
		if err := c.Charge(kilo(len(x))); err != nil {
			return 0, err
		}
		return runeIndex(x, sub, last), nil
	}
	return 0, fmt.Errorf("argument 1 must be a list or a string, got %s", expr.Describe(args[0]))
}

// relIndex resolves a JavaScript slice index (negative counts from the end) against n.
func relIndex(f float64, n int) int {
	if math.IsNaN(f) {
		return 0
	}
	i := clampInt(math.Trunc(f))
	if i < 0 {
		i += n
		if i < 0 {
			i = 0
		}
	}
	if i > n {
		i = n
	}
	return i
}

// fnSlice is slice(list|string, start, end?) with JavaScript's meaning (negative from the end);
// strings are sliced by code point.
func fnSlice(c *expr.Call, args []any) (any, error) {
	bounds := func(n int) (int, int, error) {
		start, end := 0, n
		if len(args) > 1 && args[1] != nil {
			f, err := argNumber(args, 1)
			if err != nil {
				return 0, 0, err
			}
			start = relIndex(f, n)
		}
		if len(args) > 2 && args[2] != nil {
			f, err := argNumber(args, 2)
			if err != nil {
				return 0, 0, err
			}
			end = relIndex(f, n)
		}
		if end < start {
			end = start
		}
		return start, end, nil
	}
	switch x := args[0].(type) {
	case []any:
		s, e, err := bounds(len(x))
		if err != nil {
			return nil, err
		}
		if err := c.Charge(e - s); err != nil {
			return nil, err
		}
		return append([]any{}, x[s:e]...), nil
	case string:
		if err := c.Charge(kilo(len(x))); err != nil {
			return nil, err
		}
		r := []rune(x)
		s, e, err := bounds(len(r))
		if err != nil {
			return nil, err
		}
		return string(r[s:e]), nil
	}
	return nil, fmt.Errorf("argument 1 must be a list or a string, got %s", expr.Describe(args[0]))
}

// fnConcat is concat(a, b, …): lists are joined (a non-list argument is added as one item, as in
// JavaScript); strings are joined as text.
func fnConcat(c *expr.Call, args []any) (any, error) {
	switch args[0].(type) {
	case string:
		n := 0
		for i := range args {
			s, err := argString(args, i)
			if err != nil {
				return nil, err
			}
			n += len(s)
		}
		if err := c.Charge(kilo(n)); err != nil {
			return nil, err
		}
		b := make([]byte, 0, n)
		for _, a := range args {
			b = append(b, a.(string)...)
		}
		return string(b), nil
	case []any:
		n := 0
		for _, a := range args {
			if l, ok := a.([]any); ok {
				n += len(l)
			} else {
				n++
			}
		}
		if err := c.Charge(n); err != nil {
			return nil, err
		}
		out := make([]any, 0, n)
		for _, a := range args {
			if l, ok := a.([]any); ok {
				out = append(out, l...)
			} else {
				out = append(out, a)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("argument 1 must be a list or a string, got %s", expr.Describe(args[0]))
}

// fnJoin is join(list, sep = ","): items as text (null as empty, numbers as in JavaScript).
func fnJoin(c *expr.Call, args []any) (any, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	sep := ","
	if len(args) > 1 && args[1] != nil {
		if sep, err = argString(args, 1); err != nil {
			return nil, err
		}
	}
	if err := c.Charge(len(l)); err != nil {
		return nil, err
	}
	texts := make([]string, len(l))
	n := len(sep) * max(len(l)-1, 0)
	if n > expr.MaxText {
		return nil, &expr.SizeError{Limit: expr.MaxText}
	}
	paid := 0
	for i, v := range l {
		// Each item's text is charged as it is written and limited to what is left of
		// MaxText, so a list of many references to one large value stops early.
		s, err := expr.TextOf(v, expr.MaxText-n, c)
		if err != nil {
			if errors.Is(err, expr.ErrTooLarge) {
				return nil, &expr.SizeError{Limit: expr.MaxText}
			}
			if isCharge(err) {
				return nil, err
			}
			return nil, fmt.Errorf("item %d: %v", i, err)
		}
		texts[i] = s
		n += len(s)
		if k := n/1024 - paid; k > 0 { // long text: one more per KB, before joining
			if err := c.Charge(k); err != nil {
				return nil, err
			}
			paid += k
		}
	}
	b := make([]byte, 0, n)
	for i, s := range texts {
		if i > 0 {
			b = append(b, sep...)
		}
		b = append(b, s...)
	}
	return string(b), nil
}

func fnReverse(c *expr.Call, args []any) (any, error) {
	switch x := args[0].(type) {
	case []any:
		if err := c.Charge(len(x)); err != nil {
			return nil, err
		}
		out := make([]any, len(x))
		for i, v := range x {
			out[len(x)-1-i] = v
		}
		return out, nil
	case string:
		if err := c.Charge(kilo(len(x))); err != nil {
			return nil, err
		}
		r := []rune(x)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r), nil
	}
	return nil, fmt.Errorf("argument 1 must be a list, got %s", expr.Describe(args[0]))
}

// fnSort is sort(list, cmp?): a new, stably sorted list. Without cmp, numbers sort numerically
// and strings by code point (not JavaScript's sort-as-text); cmp(a, b) returns a negative number
// when a comes first.
func fnSort(c *expr.Call, args []any) (any, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	var cmp *expr.Func
	if len(args) > 1 && args[1] != nil {
		if cmp, err = argFunc(args, 1); err != nil {
			return nil, err
		}
	}
	if err := c.Charge(sortCost(len(l))); err != nil {
		return nil, err
	}
	idx, err := stableSort(len(l), func(i, j int) (bool, error) {
		if cmp == nil {
			r, err := compareCharged(c, l[i], l[j])
			return r < 0, err
		}
		r, err := c.CallFunc(cmp, l[i], l[j])
		if err != nil {
			return false, err
		}
		f, ok := r.(float64)
		if !ok && r != nil {
			return false, fmt.Errorf("the comparator must return a number, got %s", expr.Describe(r))
		}
		return f < 0, nil
	})
	if err != nil {
		return nil, err
	}
	return pickIdx(l, idx), nil
}

func pickIdx(l []any, idx []int) []any {
	out := make([]any, len(idx))
	for i, j := range idx {
		out[i] = l[j]
	}
	return out
}

// fnSortBy is sortBy(list, keyOrFn, 'desc'?): stable, by the default order of the keys; null
// keys last in both directions.
func fnSortBy(c *expr.Call, args []any) (any, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	key, err := keyFn(c, args, 1)
	if err != nil {
		return nil, err
	}
	desc := false
	if len(args) > 2 && args[2] != nil {
		dir, err := argString(args, 2)
		if err != nil {
			return nil, err
		}
		switch dir {
		case "desc":
			desc = true
		case "asc":
		default:
			return nil, fmt.Errorf("argument 3 must be 'asc' or 'desc', got %q", dir)
		}
	}
	if err := c.Charge(len(l) + sortCost(len(l))); err != nil {
		return nil, err
	}
	keys := make([]any, len(l))
	for i, v := range l {
		if keys[i], err = key(v, i); err != nil {
			return nil, err
		}
	}
	if idx, ok := sortNumberKeys(keys, desc); ok {
		return pickIdx(l, idx), nil
	}
	idx, err := stableSort(len(l), func(i, j int) (bool, error) {
		a, b := keys[i], keys[j]
		if a == nil || b == nil {
			return a != nil && b == nil, nil
		}
		if desc {
			a, b = b, a
		}
		r, err := compareCharged(c, a, b)
		return r < 0, err
	})
	if err != nil {
		return nil, err
	}
	return pickIdx(l, idx), nil
}

// numKey is a number key of sortBy and the index of its item.
type numKey struct {
	k float64
	i int
}

// sortNumberKeys is sortBy's order for keys that are all numbers (NaN aside) or null: the
// indexes of the items by key, ascending or descending, equal keys in list order, nulls last
// in list order. It compares the float64s directly, breaking ties by index, so an unstable sort
// gives the stable result, with none of the general comparison's type switches. It returns
// false, having done nothing but look, when some key is another kind or NaN. It costs what
// the general sort costs, which sortBy charges before either.
func sortNumberKeys(keys []any, desc bool) ([]int, bool) {
	nums := make([]numKey, 0, len(keys))
	var nulls []int
	for i, k := range keys {
		switch x := k.(type) {
		case nil:
			nulls = append(nulls, i)
		case float64:
			if x != x {
				return nil, false
			}
			nums = append(nums, numKey{x, i})
		default:
			return nil, false
		}
	}
	slices.SortFunc(nums, func(a, b numKey) int {
		switch {
		case a.k < b.k:
			if desc {
				return 1
			}
			return -1
		case a.k > b.k:
			if desc {
				return -1
			}
			return 1
		}
		return a.i - b.i
	})
	idx := make([]int, 0, len(keys))
	for _, n := range nums {
		idx = append(idx, n.i)
	}
	return append(idx, nulls...), true
}

// fnGroupBy is groupBy(list, keyOrFn) → an object of lists, keys in order of first appearance.
func fnGroupBy(c *expr.Call, args []any) (any, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	key, err := keyFn(c, args, 1)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(len(l)); err != nil {
		return nil, err
	}
	groups := map[string][]any{}
	var order []string
	for i, v := range l {
		k, err := key(v, i)
		if err != nil {
			return nil, err
		}
		ks, err := textKey(c, k)
		if err != nil && isCharge(err) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("item %d: key: %v", i, err)
		}
		if err := c.Charge(len(ks) / 1024); err != nil {
			return nil, err
		}
		if _, ok := groups[ks]; !ok {
			order = append(order, ks)
		}
		groups[ks] = append(groups[ks], v)
	}
	o := expr.NewObject(len(order))
	for _, k := range order {
		o.Set(k, groups[k])
	}
	return o, nil
}

// hashValue feeds v into h so that Equal values hash alike (object key order aside), and
// charges c as it goes: one operation per expr.WalkNodesPerOp values visited and per KB of text
// hashed, before the work, so that a value with shared sub-values stops at the budget.
func hashValue(c *expr.Call, h *maphash.Hash, seed maphash.Seed, v any, n *int) error {
	*n++
	if *n%expr.WalkNodesPerOp == 0 {
		if err := c.Charge(1); err != nil {
			return err
		}
	}
	switch x := v.(type) {
	case nil:
		h.WriteByte(0)
	case bool:
		if x {
			h.WriteByte(1)
		} else {
			h.WriteByte(2)
		}
	case float64:
		h.WriteByte(3)
		if x == 0 {
			x = 0 // -0 == 0
		}
		if math.IsNaN(x) {
			x = math.NaN()
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		h.Write(b[:])
	case string:
		if err := c.Charge(len(x) / 1024); err != nil {
			return err
		}
		h.WriteByte(4)
		h.WriteString(x)
	case []any:
		h.WriteByte(5)
		for _, e := range x {
			if err := hashValue(c, h, seed, e, n); err != nil {
				return err
			}
		}
		h.WriteByte(0xff)
	case *expr.Object:
		h.WriteByte(6)
		var sum uint64 // order-independent: the sum of the entries' hashes
		for i := 0; i < x.Len(); i++ {
			var eh maphash.Hash
			eh.SetSeed(seed)
			k, v := x.Entry(i)
			eh.WriteString(k)
			if err := hashValue(c, &eh, seed, v, n); err != nil {
				return err
			}
			sum += eh.Sum64()
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], sum)
		h.Write(b[:])
	default:
		fmt.Fprintf(h, "%p", x) // nodes and functions: equal only to themselves
	}
	return nil
}

func uniqBy(c *expr.Call, l []any, key func(any, int) (any, error)) ([]any, error) {
	if err := c.Charge(len(l)); err != nil {
		return nil, err
	}
	seed := maphash.MakeSeed()
	kept := make(map[uint64][]any, len(l))
	out := []any{}
	for i, v := range l {
		k, err := key(v, i)
		if err != nil {
			return nil, err
		}
		var h maphash.Hash
		h.SetSeed(seed)
		visited := 0
		if err := hashValue(c, &h, seed, k, &visited); err != nil {
			return nil, err
		}
		sum := h.Sum64()
		dup := false
		for _, other := range kept[sum] {
			eq, err := expr.EqualCharged(other, k, c)
			if err != nil {
				return nil, err
			}
			if eq {
				dup = true
				break
			}
		}
		if !dup {
			kept[sum] = append(kept[sum], k)
			out = append(out, v)
		}
	}
	return out, nil
}

// fnUniq is uniq(list): the first of each group of equal items (deep equality), in order.
func fnUniq(c *expr.Call, args []any) (any, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	return uniqBy(c, l, func(v any, _ int) (any, error) { return v, nil })
}

func fnUniqBy(c *expr.Call, args []any) (any, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	key, err := keyFn(c, args, 1)
	if err != nil {
		return nil, err
	}
	return uniqBy(c, l, key)
}

// fnFlat is flat(list, depth = 1).
func fnFlat(c *expr.Call, args []any) (any, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	depth, err := optInt(args, 1, 1)
	if err != nil {
		return nil, err
	}
	var out []any
	var flat func(l []any, d int) error
	flat = func(l []any, d int) error {
		if err := c.Charge(len(l)); err != nil {
			return err
		}
		for _, v := range l {
			if sub, ok := v.([]any); ok && d > 0 {
				if err := flat(sub, d-1); err != nil {
					return err
				}
				continue
			}
			out = append(out, v)
		}
		return nil
	}
	if err := flat(l, min(depth, 64)); err != nil {
		return nil, err
	}
	if out == nil {
		out = []any{}
	}
	return out, nil
}

func fnFlatMap(c *expr.Call, args []any) (any, error) {
	out := []any{}
	err := each(c, args, func(_ int, _, r any) (bool, error) {
		if sub, ok := r.([]any); ok {
			if err := c.Charge(len(sub)); err != nil {
				return false, err
			}
			out = append(out, sub...)
		} else {
			out = append(out, r)
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// numbersOf reads the numbers of a list (through keyOrFn when given), skipping nulls; any other
// kind is an error naming the item.
func numbersOf(c *expr.Call, args []any) ([]float64, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	key := func(v any, _ int) (any, error) { return v, nil }
	if len(args) > 1 && args[1] != nil {
		if key, err = keyFn(c, args, 1); err != nil {
			return nil, err
		}
	}
	if err := c.Charge(len(l)); err != nil {
		return nil, err
	}
	out := make([]float64, 0, len(l))
	for i, v := range l {
		k, err := key(v, i)
		if err != nil {
			return nil, err
		}
		switch x := k.(type) {
		case float64:
			out = append(out, x)
		case nil:
		default:
			return nil, fmt.Errorf("item %d is %s, not a number (use num(x) to read one)", i, expr.Describe(k))
		}
	}
	return out, nil
}

// fnSum is sum(list, keyOrFn?): nulls are skipped; 0 for an empty list.
func fnSum(c *expr.Call, args []any) (any, error) {
	ns, err := numbersOf(c, args)
	if err != nil {
		return nil, err
	}
	s := 0.0
	for _, n := range ns {
		s += n
	}
	return s, nil
}

// fnAvg is avg(list, keyOrFn?): the mean of the numbers (nulls skipped), null when there are
// none.
func fnAvg(c *expr.Call, args []any) (any, error) {
	ns, err := numbersOf(c, args)
	if err != nil {
		return nil, err
	}
	if len(ns) == 0 {
		return nil, nil
	}
	s := 0.0
	for _, n := range ns {
		s += n
	}
	return s / float64(len(ns)), nil
}

// fnMinMax is min/max: min(list, keyOrFn?) over a list (nulls skipped, null when empty), or
// min(a, b, …) over numbers.
func fnMinMax(sign int) expr.Builtin {
	return func(c *expr.Call, args []any) (any, error) {
		var ns []float64
		if _, isList := args[0].([]any); isList {
			var err error
			if ns, err = numbersOf(c, args); err != nil {
				return nil, err
			}
		} else {
			if err := c.Charge(len(args)); err != nil {
				return nil, err
			}
			for i := range args {
				f, err := argNumber(args, i)
				if err != nil {
					return nil, err
				}
				ns = append(ns, f)
			}
		}
		if len(ns) == 0 {
			return nil, nil
		}
		best := ns[0]
		for _, n := range ns[1:] {
			if math.IsNaN(n) {
				return math.NaN(), nil
			}
			if sign < 0 && n < best || sign > 0 && n > best {
				best = n
			}
		}
		return best, nil
	}
}

// fnCount is count(list, f?): the items for which f is truthy, or all items.
func fnCount(c *expr.Call, args []any) (any, error) {
	if len(args) < 2 || args[1] == nil {
		l, err := argList(args, 0)
		if err != nil {
			return nil, err
		}
		return float64(len(l)), nil
	}
	n := 0
	err := each(c, args, func(_ int, _, r any) (bool, error) {
		if expr.Truthy(r) {
			n++
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return float64(n), nil
}

// fnTake is take(list, n): the first n items (all when fewer, none when n ≤ 0).
func fnTake(c *expr.Call, args []any) (any, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	n, err := argInt(args, 1)
	if err != nil {
		return nil, err
	}
	n = max(0, min(n, len(l)))
	if err := c.Charge(n); err != nil {
		return nil, err
	}
	return append([]any{}, l[:n]...), nil
}

// fnRange is range(n) → [0 … n-1], range(a, b) → [a … b-1], range(a, b, step); at most
// MaxRange items.
func fnRange(c *expr.Call, args []any) (any, error) {
	start, end, step := 0.0, 0.0, 1.0
	var err error
	switch len(args) {
	case 1:
		if end, err = argNumber(args, 0); err != nil {
			return nil, err
		}
	default:
		if start, err = argNumber(args, 0); err != nil {
			return nil, err
		}
		if end, err = argNumber(args, 1); err != nil {
			return nil, err
		}
		if len(args) > 2 {
			if step, err = argNumber(args, 2); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case len(args) == 1 && math.IsNaN(end):
		return nil, fmt.Errorf("the count (argument 1) must be a number, got NaN")
	case math.IsNaN(start):
		return nil, fmt.Errorf("the start (argument 1) must be a number, got NaN")
	case math.IsNaN(end):
		return nil, fmt.Errorf("the end (argument 2) must be a number, got NaN")
	case step == 0 || math.IsNaN(step):
		return nil, fmt.Errorf("the step (argument 3) must be a non-zero number, got %s", expr.FormatNumber(step))
	}
	n := math.Ceil((end - start) / step)
	if n <= 0 {
		return []any{}, nil
	}
	if n > MaxRange {
		return nil, expr.Limitf("%s items, the limit is %d", expr.FormatNumber(n), MaxRange)
	}
	if err := c.Charge(int(n)); err != nil {
		return nil, err
	}
	out := make([]any, int(n))
	for i := range out {
		out[i] = start + float64(i)*step
	}
	return out, nil
}

// fnZip is zip(a, b, …): lists of the i-th items, as long as the shortest list.
func fnZip(c *expr.Call, args []any) (any, error) {
	n := -1
	for i := range args {
		l, err := argList(args, i)
		if err != nil {
			return nil, err
		}
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	if err := c.Charge(n * len(args)); err != nil {
		return nil, err
	}
	out := make([]any, n)
	for i := range out {
		row := make([]any, len(args))
		for j, a := range args {
			row[j] = a.([]any)[i]
		}
		out[i] = row
	}
	return out, nil
}

// fnChunk is chunk(list, n): consecutive lists of n items (the last may be shorter); n ≥ 1.
func fnChunk(c *expr.Call, args []any) (any, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	n, err := argInt(args, 1)
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("the chunk size must be at least 1, got %d", n)
	}
	if err := c.Charge(len(l)); err != nil {
		return nil, err
	}
	out := make([]any, 0, (len(l)+n-1)/n)
	for i := 0; i < len(l); i += n {
		out = append(out, append([]any{}, l[i:min(i+n, len(l))]...))
	}
	return out, nil
}

// fnAt is at(list|string, i): negative i counts from the end; null when out of range.
func fnAt(c *expr.Call, args []any) (any, error) {
	i, err := argInt(args, 1)
	if err != nil {
		return nil, err
	}
	switch x := args[0].(type) {
	case []any:
		if i < 0 {
			i += len(x)
		}
		if i < 0 || i >= len(x) {
			return nil, nil
		}
		return x[i], nil
	case string:
		if err := c.Charge(kilo(len(x))); err != nil {
			return nil, err
		}
		r := []rune(x)
		if i < 0 {
			i += len(r)
		}
		if i < 0 || i >= len(r) {
			return nil, nil
		}
		return string(r[i]), nil
	}
	return nil, fmt.Errorf("argument 1 must be a list or a string, got %s", expr.Describe(args[0]))
}

// fnLast is last(list): the last item, or null.
func fnLast(c *expr.Call, args []any) (any, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, err
	}
	if len(l) == 0 {
		return nil, nil
	}
	return l[len(l)-1], nil
}
