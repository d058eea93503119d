package genui

import (
	"fmt"
	"math"
	"time"

	"github.com/pkuinfo/harness/i18n"
	"github.com/pkuinfo/harness/lang/expr"
)

// Formatters are the seed's formatters (seed 003 "多语言" → "日期和数字") as
// template functions, in the viewer's language: the locale is host.locale
// and "now" is host.now unless a last argument names a locale ("zh-Hans"
// or "en"). Times are Unix ms and read in Beijing time; durations are ms.
//
//	formatClock(ms)             "21:04"
//	formatWeekday(ms)           "周一" / "Mon"
//	formatLocalDate(ms)         "10月18日" / "Oct 18"
//	formatLocalDateTime(ms)     "10月18日 21:04" / "Oct 18, 21:04"
//	formatRelative(ms)          "3 分钟前" / "3 min ago", against host.now
//	formatDay(ms)               "今天" / "Today", against host.now
//	formatCountdown(ms)         "2小时10分" / "2h 10m"
//	plural(n, one, other?)      "1 book", "3 books"
var Formatters = []string{"formatClock", "formatWeekday", "formatLocalDate", "formatLocalDateTime",
	"formatRelative", "formatDay", "formatCountdown", "plural"}

func init() { RegisterFormatters(env) }

// RegisterFormatters adds Formatters to e; a renderer registers them in
// the Env it draws with (the validator's has them already).
func RegisterFormatters(e *expr.Env) {
	timeFn := func(f func(t, now time.Time, l i18n.Locale) string) expr.Builtin {
		return func(c *expr.Call, args []any) (any, error) {
			if err := c.Charge(1); err != nil {
				return nil, err
			}
			ms, err := msArg(c, args, 0)
			if err != nil {
				return nil, err
			}
			l, now, err := viewer(c, args, 1)
			if err != nil {
				return nil, err
			}
			return f(time.UnixMilli(ms), now, l), nil
		}
	}
	e.Register("formatClock", timeFn(func(t, _ time.Time, _ i18n.Locale) string { return i18n.FormatClock(t) }), expr.Args(1, 2))
	e.Register("formatWeekday", timeFn(func(t, _ time.Time, l i18n.Locale) string { return i18n.FormatWeekday(t, l) }), expr.Args(1, 2))
	e.Register("formatLocalDate", timeFn(func(t, _ time.Time, l i18n.Locale) string { return i18n.FormatLocalDate(t, l) }), expr.Args(1, 2))
	e.Register("formatLocalDateTime", timeFn(func(t, _ time.Time, l i18n.Locale) string { return i18n.FormatLocalDateTime(t, l) }), expr.Args(1, 2))
	e.Register("formatRelative", timeFn(i18n.FormatRelative), expr.Args(1, 2))
	e.Register("formatDay", timeFn(i18n.FormatDay), expr.Args(1, 2))
	e.Register("formatCountdown", func(c *expr.Call, args []any) (any, error) {
		if err := c.Charge(1); err != nil {
			return nil, err
		}
		ms, err := msArg(c, args, 0)
		if err != nil {
			return nil, err
		}
		l, _, err := viewer(c, args, 1)
		if err != nil {
			return nil, err
		}
		return i18n.FormatCountdown(time.Duration(ms)*time.Millisecond, l), nil
	}, expr.Args(1, 2))
	e.Register("plural", func(c *expr.Call, args []any) (any, error) {
		if err := c.Charge(1); err != nil {
			return nil, err
		}
		n, ok := args[0].(float64)
		if !ok || n != math.Trunc(n) || math.Abs(n) > 1e15 {
			return nil, fmt.Errorf("plural: the count must be a whole number, got %s", expr.TypeOf(args[0]))
		}
		one, ok := args[1].(string)
		if !ok {
			return nil, fmt.Errorf("plural: the word must be a string, got %s", expr.TypeOf(args[1]))
		}
		other := ""
		if len(args) == 3 {
			if other, ok = args[2].(string); !ok {
				return nil, fmt.Errorf("plural: the plural form must be a string, got %s", expr.TypeOf(args[2]))
			}
		}
		return i18n.Plural(int(n), one, other), nil
	}, expr.Args(2, 3))
}

func msArg(c *expr.Call, args []any, i int) (int64, error) {
	f, ok := args[i].(float64)
	if !ok || math.IsNaN(f) || math.Abs(f) > 1e15 {
		return 0, fmt.Errorf("%s: expected a time or duration in ms, got %s", c.Name, expr.TypeOf(args[i]))
	}
	return int64(f), nil
}

// viewer reads the locale (args[i] when given, else host.locale) and now
// (host.now, else the wall clock) of a draw.
func viewer(c *expr.Call, args []any, i int) (i18n.Locale, time.Time, error) {
	l, now := i18n.Zh, time.Now()
	if h, ok := c.Lookup("host"); ok {
		if o, ok := h.(*expr.Object); ok {
			if s, ok := o.Get("locale"); ok {
				if s, ok := s.(string); ok {
					l = i18n.Locale(s).Or()
				}
			}
			if n, ok := o.Get("now"); ok {
				if n, ok := n.(float64); ok {
					now = time.UnixMilli(int64(n))
				}
			}
		}
	}
	if len(args) > i {
		s, ok := args[i].(string)
		if !ok {
			return "", now, fmt.Errorf("%s: the locale must be \"zh-Hans\" or \"en\", got %s", c.Name, expr.TypeOf(args[i]))
		}
		pl, err := i18n.ParseLocale(s)
		if err != nil {
			return "", now, fmt.Errorf("%s: %v", c.Name, err)
		}
		l = pl
	}
	return l, now, nil
}
