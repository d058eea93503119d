package stdlib

import (
	"fmt"
	"math"
	"time"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/internal/bjtime"
	"github.com/pkuinfo/harness/lang/internal/htmlx"
)

func init() { extra = append(extra, registerDates) }

// registerDates adds the Beijing-time date functions of docs/DECISIONS.md §5 "Dates" and §10:
// date, formatDate, dateParts, startOfDay, addDays, addHours, addMinutes, diffDays,
// diffMinutes. A date is a number of Unix milliseconds. Every function except date returns null
// when its date argument is null, so that formatDate(date(x)) is null for text that is not a
// date; any other argument that is not a date is an error naming the argument.
func registerDates(env *expr.Env) {
	m := expr.Method()
	env.Register("date", fnDate, m, expr.Args(1, 2))
	env.Register("formatDate", fnFormatDate, m, expr.Args(1, 2))
	env.Register("dateParts", fnDateParts, m, expr.Args(1, 1))
	env.Register("startOfDay", fnStartOfDay, m, expr.Args(1, 1))
	env.Register("addDays", fnAddUnit(bjtime.DayMs), m, expr.Args(2, 2))
	env.Register("addHours", fnAddUnit(bjtime.HourMs), m, expr.Args(2, 2))
	env.Register("addMinutes", fnAddUnit(bjtime.MinuteMs), m, expr.Args(2, 2))
	env.Register("diffDays", fnDiff(bjtime.DiffDays), m, expr.Args(2, 2))
	env.Register("diffMinutes", fnDiff(bjtime.DiffMinutes), m, expr.Args(2, 2))
}

// runNow reads the run's `now` variable (Unix ms, docs/DECISIONS.md §4). Outside a run, where no
// `now` is bound, it is the current time.
func runNow(c *expr.Call) int64 {
	if v, ok := c.Lookup("now"); ok {
		if f, ok := v.(float64); ok {
			if ms, ok := bjtime.FromNumber(f); ok {
				return ms
			}
		}
	}
	return time.Now().UnixMilli()
}

// fnDate is date(x, layout?) → Unix ms or null (docs/DECISIONS.md §5): x is a number (ms, or s
// below 10^11), a string in one of the forms bjtime.Parse reads, or an HTML node (its text);
// with a layout, the string must match it (bjtime.Layout.Parse). Anything that is not a date is
// null. Costs one operation per started KB of text.
func fnDate(c *expr.Call, args []any) (any, error) {
	layout, hasLayout := "", false
	if len(args) > 1 && args[1] != nil {
		s, ok := args[1].(string)
		if !ok {
			return nil, fmt.Errorf("argument 2 (layout) must be a string such as 'YYYY-MM-DD', got %s", expr.Describe(args[1]))
		}
		layout, hasLayout = s, true
	}
	var text string
	switch x := args[0].(type) {
	case float64:
		if ms, ok := bjtime.FromNumber(x); ok {
			return float64(ms), nil
		}
		return nil, nil
	case string:
		text = x
	case *expr.Node:
		s, err := htmlx.Text(x.N, c)
		if err != nil {
			return nil, err
		}
		text = s
	default:
		return nil, nil
	}
	if err := c.Charge(kilo(len(text) + len(layout))); err != nil {
		return nil, err
	}
	var ms int64
	var ok bool
	if hasLayout {
		ms, ok = bjtime.ParseLayout(text, layout, runNow(c))
	} else {
		ms, ok = bjtime.Parse(text, runNow(c))
	}
	if !ok {
		return nil, nil
	}
	return float64(ms), nil
}

// argDate reads argument i as a date: a finite number within ±8.64e15 ms, fractions of a
// millisecond dropped. null reports isNull.
func argDate(args []any, i int) (ms int64, isNull bool, err error) {
	switch x := args[i].(type) {
	case nil:
		return 0, true, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x < -bjtime.MaxMs || x > bjtime.MaxMs {
			return 0, false, fmt.Errorf("argument %d is not a date: %v is outside ±8.64e15 ms", i+1, x)
		}
		return int64(math.Floor(x)), false, nil
	case string:
		return 0, false, fmt.Errorf("argument %d must be a date in Unix ms, got a string; read text with date(…) first", i+1)
	}
	return 0, false, fmt.Errorf("argument %d must be a date in Unix ms, got %s", i+1, expr.Describe(args[i]))
}

// fnFormatDate is formatDate(ms, layout = 'YYYY-MM-DD HH:mm') → string in Beijing time, with the
// tokens YYYY MM M DD D HH H mm ss ddd (docs/DECISIONS.md §5). Costs one operation per started KB of
// layout.
func fnFormatDate(c *expr.Call, args []any) (any, error) {
	ms, isNull, err := argDate(args, 0)
	if err != nil || isNull {
		return nil, err
	}
	layout := bjtime.DefaultLayout
	if len(args) > 1 && args[1] != nil {
		s, ok := args[1].(string)
		if !ok {
			return nil, fmt.Errorf("argument 2 (layout) must be a string such as 'YYYY-MM-DD', got %s", expr.Describe(args[1]))
		}
		layout = s
	}
	if err := c.Charge(kilo(len(layout))); err != nil {
		return nil, err
	}
	return bjtime.Format(ms, layout), nil
}

// fnDateParts is dateParts(ms) → { year, month, day, hour, minute, second, weekday } in Beijing
// time, weekday 1 = Monday … 7 = Sunday (docs/DECISIONS.md §5).
func fnDateParts(c *expr.Call, args []any) (any, error) {
	ms, isNull, err := argDate(args, 0)
	if err != nil || isNull {
		return nil, err
	}
	p := bjtime.PartsOf(ms)
	o := expr.NewObject(7)
	o.Set("year", float64(p.Year))
	o.Set("month", float64(p.Month))
	o.Set("day", float64(p.Day))
	o.Set("hour", float64(p.Hour))
	o.Set("minute", float64(p.Minute))
	o.Set("second", float64(p.Second))
	o.Set("weekday", float64(p.Weekday))
	return o, nil
}

// fnStartOfDay is startOfDay(ms) → 00:00 Beijing time of that day.
func fnStartOfDay(c *expr.Call, args []any) (any, error) {
	ms, isNull, err := argDate(args, 0)
	if err != nil || isNull {
		return nil, err
	}
	return float64(bjtime.StartOfDay(ms)), nil
}

// fnAddUnit makes addDays, addHours and addMinutes: (ms, n) → ms + n units (n may be negative or
// fractional; Beijing has no daylight saving, so a day is always 24 hours). A result outside
// ±8.64e15 ms is an error.
func fnAddUnit(unit int64) expr.Builtin {
	return func(c *expr.Call, args []any) (any, error) {
		ms, isNull, err := argDate(args, 0)
		if err != nil || isNull {
			return nil, err
		}
		n, err := argNumber(args, 1)
		if err != nil {
			return nil, err
		}
		r := math.Floor(float64(ms) + n*float64(unit))
		if math.IsNaN(r) || r < -bjtime.MaxMs || r > bjtime.MaxMs {
			return nil, fmt.Errorf("the result is outside the range of dates (±8.64e15 ms)")
		}
		return r, nil
	}
}

// fnDiff makes diffDays (Beijing calendar days from a to b, positive when b is later) and
// diffMinutes ((b − a) in whole minutes, truncated toward zero), docs/DECISIONS.md §10.
func fnDiff(diff func(a, b int64) int64) expr.Builtin {
	return func(c *expr.Call, args []any) (any, error) {
		a, aNull, err := argDate(args, 0)
		if err != nil {
			return nil, err
		}
		b, bNull, err := argDate(args, 1)
		if err != nil || aNull || bNull {
			return nil, err
		}
		return float64(diff(a, b)), nil
	}
}
