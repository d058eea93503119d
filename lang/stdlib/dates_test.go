package stdlib

import (
	"context"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
)

// datesNow is Tuesday 2024-03-05 14:30:15.250 Beijing time (06:30:15.250 UTC).
const datesNow = 1709620215250

// evalDateCase evaluates src with now = datesNow (and vars) and returns its JSON or error text.
func evalDateCase(t *testing.T, src string, vars expr.MapVars) string {
	t.Helper()
	env := NewEnv()
	x, err := env.Parse(src)
	if err != nil {
		return "parse error: " + err.Error()
	}
	all := expr.MapVars{"now": float64(datesNow)}
	for k, v := range vars {
		all[k] = v
	}
	v, err := x.Eval(context.Background(), all, expr.NewBudget(100_000))
	if err != nil {
		return "error: " + err.Error()
	}
	b, err := expr.ToJSON(v, "")
	if err != nil {
		return "json error: " + err.Error()
	}
	return string(b)
}

func TestDateBuiltins(t *testing.T) {
	tests := []struct{ name, src, want string }{
		// date: every kind of input
		{"ms", `date(1709568000123)`, `1709568000123`},
		{"seconds", `date(1709568000)`, `1709568000000`},
		{"iso", `date('2024-03-05T06:30:00Z')`, `1709620200000`},
		{"iso no zone is beijing", `date('2024-03-05T14:30:00')`, `1709620200000`},
		{"day", `date('2024-03-05')`, `1709568000000`},
		{"slashes", `formatDate(date('2024/3/5 8:05'))`, `"2024-03-05 08:05"`},
		{"dots", `formatDate(date('2024.3.5'))`, `"2024-03-05 00:00"`},
		{"chinese", `formatDate(date('2024年3月5日 19:30'))`, `"2024-03-05 19:30"`},
		{"month day", `formatDate(date('3月8日'))`, `"2024-03-08 00:00"`},
		{"mm-dd", `formatDate(date('12-24 18:00'))`, `"2024-12-24 18:00"`},
		{"time today", `formatDate(date('08:15'))`, `"2024-03-05 08:15"`},
		{"just now", `date('刚刚') == now`, `true`},
		{"minutes ago", `formatDate(date('5分钟前'), 'HH:mm:ss')`, `"14:25:15"`},
		{"hours and minutes ago", `formatDate(date('1小时10分钟前'), 'HH:mm')`, `"13:20"`},
		{"days ago keeps time", `formatDate(date('3天前'), 'YYYY-MM-DD HH:mm:ss')`, `"2024-03-02 14:30:15"`},
		{"yesterday", `formatDate(date('昨天 21:05'))`, `"2024-03-04 21:05"`},
		{"day before", `formatDate(date('前天 09:00'))`, `"2024-03-03 09:00"`},
		{"tomorrow", `formatDate(date('明天 07:30'))`, `"2024-03-06 07:30"`},
		{"today", `formatDate(date('今天 12:00'))`, `"2024-03-05 12:00"`},
		{"layout", `formatDate(date('05/03/2024', 'DD/MM/YYYY'))`, `"2024-03-05 00:00"`},
		{"layout null", `date('2024-03-05', null)`, `1709568000000`},
		{"method", `'2024-03-05'.date()`, `1709568000000`},
		{"node", `date(first('<p><span>2024-03-05</span></p>', 'span'))`, `1709568000000`},
		// date: not a date → null
		{"invalid text", `date('yesterday')`, `null`},
		{"feb 30", `date('2024-02-30')`, `null`},
		{"layout mismatch", `date('2024-03-05', 'YYYY/MM/DD')`, `null`},
		{"null", `date(null)`, `null`},
		{"bool", `date(true)`, `null`},
		{"list", `date([1])`, `null`},
		{"nan", `date(0/0)`, `null`},
		{"too big", `date(1e17)`, `null`},
		{"bad layout type", `date('2024', 4)`, `error: 1:1: date: argument 2 (layout) must be a string such as 'YYYY-MM-DD', got a number`},
		// formatDate: every token
		{"default layout", `formatDate(1709620215250)`, `"2024-03-05 14:30"`},
		{"YYYY", `formatDate(1709620215250, 'YYYY')`, `"2024"`},
		{"MM M", `formatDate(1709620215250, 'MM M')`, `"03 3"`},
		{"DD D", `formatDate(1709620215250, 'DD D')`, `"05 5"`},
		{"HH H", `formatDate(date('2024-03-05 09:07:08'), 'HH H')`, `"09 9"`},
		{"mm ss", `formatDate(date('2024-03-05 09:07:08'), 'mm ss')`, `"07 08"`},
		{"ddd", `formatDate(1709620215250, 'ddd')`, `"周二"`},
		{"sunday", `formatDate(date('2024-03-10'), 'ddd')`, `"周日"`},
		{"chinese layout", `formatDate(1709620215250, 'M月D日 ddd HH:mm')`, `"3月5日 周二 14:30"`},
		{"escaped", `formatDate(1709620215250, '[YYYY] YYYY')`, `"YYYY 2024"`},
		{"format method", `(1709620215250).formatDate('YYYY')`, `"2024"`},
		{"format null", `formatDate(null)`, `null`},
		{"format string", `formatDate('2024-03-05')`, `error: 1:1: formatDate: argument 1 must be a date in Unix ms, got a string; read text with date(…) first`},
		{"format list", `formatDate([])`, `error: 1:1: formatDate: argument 1 must be a date in Unix ms, got a list`},
		{"format nan", `formatDate(0/0)`, `error: 1:1: formatDate: argument 1 is not a date: NaN is outside ±8.64e15 ms`},
		{"format bad layout", `formatDate(0, {})`, `error: 1:1: formatDate: argument 2 (layout) must be a string such as 'YYYY-MM-DD', got an object`},
		// dateParts
		{"parts", `dateParts(1709620215250)`, `{"year":2024,"month":3,"day":5,"hour":14,"minute":30,"second":15,"weekday":2}`},
		{"parts sunday", `dateParts(date('2024-03-10 23:59:59')).weekday`, `7`},
		{"parts monday", `dateParts(date('2024-03-11')).weekday`, `1`},
		{"parts utc midnight", `dateParts(date('2024-03-04T16:00:00Z')).day`, `5`},
		{"parts null", `dateParts(null)`, `null`},
		// arithmetic
		{"startOfDay", `formatDate(startOfDay(now), 'YYYY-MM-DD HH:mm:ss')`, `"2024-03-05 00:00:00"`},
		{"startOfDay value", `startOfDay(1709620215250)`, `1709568000000`},
		{"startOfDay null", `startOfDay(null)`, `null`},
		{"startOfDay bool", `startOfDay(true)`, `error: 1:1: startOfDay: argument 1 must be a date in Unix ms, got a boolean`},
		{"addDays", `formatDate(addDays(now, 30), 'YYYY-MM-DD HH:mm')`, `"2024-04-04 14:30"`},
		{"addDays negative", `formatDate(addDays(now, -5))`, `"2024-02-29 14:30"`},
		{"addHours", `formatDate(addHours(now, 10))`, `"2024-03-06 00:30"`},
		{"addMinutes", `formatDate(addMinutes(now, -31))`, `"2024-03-05 13:59"`},
		{"addDays fraction", `addDays(0, 0.5)`, `43200000`},
		{"addDays method", `now.addDays(1) - now`, `86400000`},
		{"addDays null", `addDays(null, 1)`, `null`},
		{"addDays bad n", `addDays(now, '1')`, `error: 1:1: addDays: argument 2 must be a number, got a string`},
		{"addDays overflow", `addDays(now, 1e9)`, `error: 1:1: addDays: the result is outside the range of dates (±8.64e15 ms)`},
		{"diffDays later", `diffDays(date('2024-03-05 23:59'), date('2024-03-06 00:01'))`, `1`},
		{"diffDays earlier", `diffDays(date('2024-03-06 00:01'), date('2024-03-05 23:59'))`, `-1`},
		{"diffDays same day", `diffDays(date('2024-03-05 00:00'), date('2024-03-05 23:59'))`, `0`},
		{"diffDays leap", `diffDays(date('2024-02-28'), date('2024-03-01'))`, `2`},
		{"diffMinutes", `diffMinutes(date('12:00'), date('13:30:59'))`, `90`},
		{"diffMinutes negative truncates", `diffMinutes(date('13:30:59'), date('12:00'))`, `-90`},
		{"diffMinutes null", `diffMinutes(null, now)`, `null`},
		{"diffDays string", `diffDays(now, 'x')`, `error: 1:1: diffDays: argument 2 must be a date in Unix ms, got a string; read text with date(…) first`},
		{"arity", `formatDate()`, `error: 1:1: formatDate: takes 1 to 2 arguments, got 0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := evalDateCase(t, tc.src, nil); got != tc.want {
				t.Errorf("%s\n got: %s\nwant: %s", tc.src, got, tc.want)
			}
		})
	}
}

func TestDateWithoutNowUsesClock(t *testing.T) {
	env := NewEnv()
	x, err := env.Parse(`diffMinutes(date('刚刚'), date('1分钟后'))`)
	if err != nil {
		t.Fatal(err)
	}
	v, err := x.Eval(context.Background(), expr.MapVars{}, expr.NewBudget(1000))
	if err != nil || v != 1.0 {
		t.Errorf("got %v, %v; want 1", v, err)
	}
}
