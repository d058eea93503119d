package i18n

import (
	"strconv"
	"strings"
	"time"
)

// Beijing is the campus's time zone, UTC+8 without daylight saving (a
// fixed zone, so no tz database is needed).
var Beijing = time.FixedZone("CST", 8*3600)

var (
	weekdayZh = [7]string{"周日", "周一", "周二", "周三", "周四", "周五", "周六"}
	weekdayEn = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	monthEn   = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
)

// FormatClock is formatClock(d): the Beijing wall clock, "21:04" in both
// locales.
func FormatClock(t time.Time) string { return t.In(Beijing).Format("15:04") }

// FormatWeekday is formatWeekday(d, l): "周一" / "Mon".
func FormatWeekday(t time.Time, l Locale) string {
	wd := t.In(Beijing).Weekday()
	if l == En {
		return weekdayEn[wd]
	}
	return weekdayZh[wd]
}

// FormatLocalDate is formatLocalDate(d, l): "10月18日" / "Oct 18".
func FormatLocalDate(t time.Time, l Locale) string {
	b := t.In(Beijing)
	if l == En {
		return monthEn[b.Month()-1] + " " + strconv.Itoa(b.Day())
	}
	return strconv.Itoa(int(b.Month())) + "月" + strconv.Itoa(b.Day()) + "日"
}

// FormatLocalDateTime is formatLocalDateTime(d, l): "10月18日 21:04" /
// "Oct 18, 21:04".
func FormatLocalDateTime(t time.Time, l Locale) string {
	if l == En {
		return FormatLocalDate(t, l) + ", " + FormatClock(t)
	}
	return FormatLocalDate(t, l) + " " + FormatClock(t)
}

// dayDiff is the number of Beijing calendar days from now's day to t's
// (1 = tomorrow, -1 = yesterday).
func dayDiff(t, now time.Time) int {
	a, b := t.In(Beijing), now.In(Beijing)
	da := time.Date(a.Year(), a.Month(), a.Day(), 12, 0, 0, 0, time.UTC)
	db := time.Date(b.Year(), b.Month(), b.Day(), 12, 0, 0, 0, time.UTC)
	return int(da.Sub(db).Hours() / 24)
}

// FormatDay is formatDay(d, l) relative to now: "今天", "明天", "昨天" /
// "Today", "Tomorrow", "Yesterday"; within the coming week the weekday
// ("周三" / "Wed"); otherwise the date ("10月18日" / "Oct 18").
func FormatDay(t, now time.Time, l Locale) string {
	switch n := dayDiff(t, now); {
	case n == 0:
		return pick(l, "今天", "Today")
	case n == 1:
		return pick(l, "明天", "Tomorrow")
	case n == -1:
		return pick(l, "昨天", "Yesterday")
	case n > 1 && n < 7:
		return FormatWeekday(t, l)
	}
	return FormatLocalDate(t, l)
}

// FormatRelative is formatRelative(ms, l) relative to now. The past:
// under a minute "刚刚" / "Just now"; under an hour "3 分钟前" / "3 min
// ago"; earlier today "2 小时前" / "2 h ago"; yesterday "昨天 21:04" /
// "Yesterday 21:04"; within the week "周三 21:04" / "Wed 21:04"; else
// "10月18日 21:04" / "Oct 18, 21:04". The future mirrors it: "马上" /
// "In a moment", "3 分钟后" / "In 3 min", "2 小时后" / "In 2 h", "明天 09:00" /
// "Tomorrow 09:00", then weekday or date with the clock.
func FormatRelative(t, now time.Time, l Locale) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	days := dayDiff(t, now)
	switch {
	case d < time.Minute:
		if future {
			return pick(l, "马上", "In a moment")
		}
		return pick(l, "刚刚", "Just now")
	case d < time.Hour:
		m := strconv.Itoa(int(d / time.Minute))
		if future {
			return pick(l, m+" 分钟后", "In "+m+" min")
		}
		return pick(l, m+" 分钟前", m+" min ago")
	case days == 0:
		h := strconv.Itoa(int(d / time.Hour))
		if future {
			return pick(l, h+" 小时后", "In "+h+" h")
		}
		return pick(l, h+" 小时前", h+" h ago")
	case days == -1 || days == 1:
		return FormatDay(t, now, l) + " " + FormatClock(t)
	case days > -7 && days < 7:
		return FormatWeekday(t, l) + " " + FormatClock(t)
	}
	return FormatLocalDateTime(t, l)
}

// FormatCountdown is formatCountdown(ms, l) for a duration: "2小时10分" /
// "2h 10m"; "1天3小时" / "1d 3h" from a day on (minutes left out); "10分" /
// "10m" under an hour; "不到1分" / "<1m" under a minute, and "0分" / "0m" for
// zero or less.
func FormatCountdown(d time.Duration, l Locale) string {
	if d <= 0 {
		return pick(l, "0分", "0m")
	}
	if d < time.Minute {
		return pick(l, "不到1分", "<1m")
	}
	mins := int(d / time.Minute)
	days, hours, m := mins/(24*60), mins/60%24, mins%60
	var zh, en []string
	if days > 0 {
		zh, en = append(zh, strconv.Itoa(days)+"天"), append(en, strconv.Itoa(days)+"d")
		if hours > 0 {
			zh, en = append(zh, strconv.Itoa(hours)+"小时"), append(en, strconv.Itoa(hours)+"h")
		}
	} else {
		if hours > 0 {
			zh, en = append(zh, strconv.Itoa(hours)+"小时"), append(en, strconv.Itoa(hours)+"h")
		}
		if m > 0 {
			zh, en = append(zh, strconv.Itoa(m)+"分"), append(en, strconv.Itoa(m)+"m")
		}
	}
	return pick(l, strings.Join(zh, ""), strings.Join(en, " "))
}

// Plural is the seed's plural(n, one) for English: "1 book", "3 books",
// "0 books". other is the plural form; "" adds "s" to one (or "es" after
// s, x, z, ch and sh).
func Plural(n int, one, other string) string {
	if other == "" {
		other = one + "s"
		for _, suf := range []string{"s", "x", "z", "ch", "sh"} {
			if strings.HasSuffix(one, suf) {
				other = one + "es"
			}
		}
	}
	if n == 1 || n == -1 {
		return strconv.Itoa(n) + " " + one
	}
	return strconv.Itoa(n) + " " + other
}

func pick(l Locale, zh, en string) string {
	if l == En {
		return en
	}
	return zh
}
