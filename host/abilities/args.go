package abilities

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/expr"
)

// args reads an operation's args object. A key whose value is null counts
// as absent, so `code: input.code` with no code is the same as leaving code
// out (the official plugins pass optional inputs on this way).
type args struct{ o *expr.Object }

func newArgs(v any) (*args, error) {
	switch x := v.(type) {
	case nil:
		return &args{o: expr.NewObject(0)}, nil
	case *expr.Object:
		return &args{o: x}, nil
	}
	return nil, fmt.Errorf("args must be an object, not %s", expr.TypeOf(v))
}

// only fails when the object has a key outside allowed.
func (a *args) only(allowed ...string) error {
	for _, k := range a.o.Keys() {
		ok := false
		for _, w := range allowed {
			if k == w {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("unknown argument %q (allowed: %s)", k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// has reports whether key is present with a non-null value.
func (a *args) has(key string) bool {
	v, ok := a.o.Get(key)
	return ok && v != nil
}

// present reports whether key is written at all, null included.
func (a *args) present(key string) bool {
	_, ok := a.o.Get(key)
	return ok
}

func (a *args) get(key string) any {
	v, _ := a.o.Get(key)
	return v
}

// str reads a string of at most max characters; required fails when absent.
func (a *args) str(key string, required bool, max int) (string, error) {
	v := a.get(key)
	if v == nil {
		if required {
			return "", fmt.Errorf("%s is required", key)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string, not %s", key, expr.TypeOf(v))
	}
	if n := utf8.RuneCountInString(s); max > 0 && n > max {
		return "", fmt.Errorf("%s: %d characters, the limit is %d", key, n, max)
	}
	return s, nil
}

// boolean reads a boolean, def when absent.
func (a *args) boolean(key string, def bool) (bool, error) {
	v := a.get(key)
	if v == nil {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s must be a boolean, not %s", key, expr.TypeOf(v))
	}
	return b, nil
}

// integer reads a whole number in [lo, hi]; ok is false when absent.
func (a *args) integer(key string, lo, hi int64) (n int64, ok bool, err error) {
	v := a.get(key)
	if v == nil {
		return 0, false, nil
	}
	f, isNum := v.(float64)
	if !isNum || f != math.Trunc(f) || math.IsInf(f, 0) {
		return 0, false, fmt.Errorf("%s must be a whole number, not %s", key, expr.Describe(v))
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, false, fmt.Errorf("%s: %s is out of range %d–%d", key, expr.FormatNumber(f), lo, hi)
	}
	return int64(f), true, nil
}

// maxDuration is the longest duration parseDuration accepts.
const maxDuration = 366 * 24 * time.Hour

// parseDuration reads "30s", "10m", "2h", "1d" or a number of seconds
// (docs/DECISIONS.md §6 durations).
func parseDuration(v any) (time.Duration, error) {
	switch x := v.(type) {
	case float64:
		if x <= 0 || x != math.Trunc(x) || x > float64(maxDuration/time.Second) {
			return 0, fmt.Errorf("%s is not a whole number of seconds between 1 and a year", expr.FormatNumber(x))
		}
		return time.Duration(x) * time.Second, nil
	case string:
		s := strings.TrimSpace(x)
		if len(s) >= 2 {
			unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}[s[len(s)-1]]
			var n int64
			if unit > 0 {
				if _, err := fmt.Sscanf(s[:len(s)-1], "%d", &n); err == nil && fmt.Sprint(n) == s[:len(s)-1] &&
					n > 0 && n <= int64(maxDuration/unit) {
					return time.Duration(n) * unit, nil
				}
			}
		}
		return 0, fmt.Errorf("%q is not a duration such as 30s, 10m, 2h or 1d (at most 366d)", x)
	}
	return 0, fmt.Errorf("a duration must be a string such as 30m or a number of seconds, not %s", expr.TypeOf(v))
}

// ms converts a time to Unix milliseconds as an expr number.
func ms(t time.Time) any { return float64(t.UnixMilli()) }

// beijing is UTC+8 without daylight saving, the zone of plugin dates
// (docs/DECISIONS.md §5).
var beijing = time.FixedZone("CST", 8*3600)
