package stdlib

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/pkuinfo/harness/lang/expr"
)

// Argument readers. Each error names the argument by its 1-based position, so the evaluator's
// "LINE:COL: name: …" prefix makes a complete message.

func argList(args []any, i int) ([]any, error) {
	if i >= len(args) {
		return nil, fmt.Errorf("argument %d is missing (expected a list)", i+1)
	}
	l, ok := args[i].([]any)
	if !ok {
		return nil, fmt.Errorf("argument %d must be a list, got %s", i+1, expr.Describe(args[i]))
	}
	return l, nil
}

func argString(args []any, i int) (string, error) {
	if i >= len(args) {
		return "", fmt.Errorf("argument %d is missing (expected a string)", i+1)
	}
	s, ok := args[i].(string)
	if !ok {
		return "", fmt.Errorf("argument %d must be a string, got %s", i+1, expr.Describe(args[i]))
	}
	return s, nil
}

func argObject(args []any, i int) (*expr.Object, error) {
	if i >= len(args) {
		return nil, fmt.Errorf("argument %d is missing (expected an object)", i+1)
	}
	o, ok := args[i].(*expr.Object)
	if !ok {
		return nil, fmt.Errorf("argument %d must be an object, got %s", i+1, expr.Describe(args[i]))
	}
	return o, nil
}

func argNumber(args []any, i int) (float64, error) {
	if i >= len(args) {
		return 0, fmt.Errorf("argument %d is missing (expected a number)", i+1)
	}
	f, ok := args[i].(float64)
	if !ok {
		return 0, fmt.Errorf("argument %d must be a number, got %s", i+1, expr.Describe(args[i]))
	}
	return f, nil
}

// argInt reads an integer argument (fractions truncated toward zero; NaN is refused).
func argInt(args []any, i int) (int, error) {
	f, err := argNumber(args, i)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(f) {
		return 0, fmt.Errorf("argument %d must be a number, got NaN", i+1)
	}
	return clampInt(f), nil
}

// optInt reads an optional integer argument, def when absent or null.
func optInt(args []any, i, def int) (int, error) {
	if i >= len(args) || args[i] == nil {
		return def, nil
	}
	return argInt(args, i)
}

func clampInt(f float64) int {
	switch {
	case f >= 1<<52:
		return 1 << 52
	case f <= -(1 << 52):
		return -(1 << 52)
	}
	return int(f)
}

func argFunc(args []any, i int) (*expr.Func, error) {
	if i >= len(args) {
		return nil, fmt.Errorf("argument %d is missing (expected a function such as x => x.name)", i+1)
	}
	f, ok := args[i].(*expr.Func)
	if !ok {
		return nil, fmt.Errorf("argument %d must be a function such as x => x.name, got %s", i+1, expr.Describe(args[i]))
	}
	return f, nil
}

// kilo is the operation cost of processing n bytes of text: one per started KB.
func kilo(n int) int { return 1 + n/1024 }

// keyFn turns a keyOrFn argument (a property name or a function; docs/DECISIONS.md §5) into a
// function of one element. A property name reads the element's key (null when the element is not
// an object).
func keyFn(c *expr.Call, args []any, i int) (func(v any, idx int) (any, error), error) {
	if i >= len(args) {
		return nil, fmt.Errorf("argument %d is missing (expected a property name or a function)", i+1)
	}
	switch k := args[i].(type) {
	case string:
		return func(v any, _ int) (any, error) {
			if o, ok := v.(*expr.Object); ok {
				x, _ := o.Get(k)
				return x, nil
			}
			return nil, nil
		}, nil
	case *expr.Func:
		return func(v any, idx int) (any, error) { return c.CallFunc(k, v, expr.IntValue(idx)) }, nil
	}
	return nil, fmt.Errorf("argument %d must be a property name or a function, got %s", i+1, expr.Describe(args[i]))
}

// rank orders kinds for sorting mixed values: numbers, strings, booleans, then everything else,
// null last.
func rank(v any) int {
	switch v.(type) {
	case float64:
		return 0
	case string:
		return 1
	case bool:
		return 2
	case nil:
		return 4
	}
	return 3
}

// compareCharged is compareValues charged to c for long strings (expr.CompareStrings: one
// operation per KB of common prefix).
func compareCharged(c *expr.Call, a, b any) (int, error) {
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok && len(x) > 1024 && len(y) > 1024 {
			return expr.CompareStrings(x, y, c)
		}
	}
	return compareValues(a, b), nil
}

// compareValues is the default order of sort, sortBy, min and max: numbers numerically (NaN
// after the others), strings by code point, false before true; different kinds by rank.
func compareValues(a, b any) int {
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return ra - rb
	}
	switch x := a.(type) {
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		case x == y:
			return 0
		case math.IsNaN(x) && math.IsNaN(y):
			return 0
		case math.IsNaN(x):
			return 1
		}
		return -1
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	return 0
}

// sortCost is the operations charged before sorting n items: one per comparison of a merge sort
// (n·⌈log2 n⌉).
func sortCost(n int) int {
	if n < 2 {
		return n
	}
	return n * int(math.Ceil(math.Log2(float64(n))))
}

// stableSort sorts idx by less, stopping the callbacks after the first error.
func stableSort(n int, less func(i, j int) (bool, error)) ([]int, error) {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	var firstErr error
	sort.SliceStable(idx, func(i, j int) bool {
		if firstErr != nil {
			return false
		}
		l, err := less(idx[i], idx[j])
		if err != nil {
			firstErr = err
		}
		return l
	})
	return idx, firstErr
}

// textKey spells a value as an object key (groupBy, fromEntries): strings as they are, numbers
// as in JavaScript, null as "null", lists and objects as JSON.
func textKey(c *expr.Call, v any) (string, error) {
	if v == nil {
		return "null", nil
	}
	s, err := expr.TextOf(v, expr.MaxText, c)
	if err != nil && isCharge(err) {
		return "", err
	}
	return s, err
}

// isCharge reports whether err came from charging the budget (or the run's context), which a
// builtin passes on as it is rather than wrapping it in its own message.
func isCharge(err error) bool {
	var re *expr.RuntimeError
	return errors.As(err, &re)
}

// text is a value's text (str, join) charged to c as it is written, at most expr.MaxText bytes.
func text(c *expr.Call, v any) (string, error) {
	s, err := expr.TextOf(v, expr.MaxText, c)
	if err != nil && !isCharge(err) && !errors.Is(err, expr.ErrTooLarge) {
		return "", err
	}
	return s, err
}
