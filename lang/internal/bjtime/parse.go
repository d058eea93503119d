package bjtime

import (
	"strings"
	"time"
)

// Parse reads a date written in one of the forms of docs/DECISIONS.md §5 and returns Unix ms, or
// false when s is none of them or names a date or time that does not exist (2月30日, 25:00).
// Spaces around s are ignored; the rest must be exactly one form:
//
//   - a Unix time in seconds (10 digits) or milliseconds (13 digits);
//   - ISO 8601 / RFC 3339: 2024-03-05T14:30[:05[.123]][Z|+08:00|+0800|+08]; without a zone it is
//     Beijing time; a space may replace the T;
//   - YYYY-M-D, YYYY/M/D and YYYY.M.D, each optionally followed by a space and H:mm[:ss];
//   - YYYY年M月D日 and M月D日 (日 or 号), optionally followed by H:mm[:ss]; M月D日 is in the year of now;
//   - any of the date forms above may be followed by a weekday (周二, 星期二), which is not checked;
//   - MM-DD [H:mm[:ss]] in the year of now; H:mm[:ss] on the day of now;
//   - relative to now: 刚刚 (also 刚才); N秒前, N分钟前, N小时前, N天前, N周前 and sums of them
//     such as 1小时10分钟前 (后 instead of 前 counts forward; N天前 keeps the time of day);
//     今天, 昨天, 前天, 明天, 后天 (also 今日, 昨日, 明日), optionally followed by H:mm[:ss]
//     (alone they mean 00:00 of that day);
//   - RFC 1123 / RFC 2822 as in HTTP headers and RSS: Tue, 05 Mar 2024 06:30:00 GMT (or +0800;
//     the weekday may be left out); only numeric zones and GMT/UT/UTC are read.
//
// Months and years ago (3个月前) are not read: their length varies.
func Parse(s string, now int64) (int64, bool) {
	s = trimSpace(s)
	if s == "" {
		return 0, false
	}
	if ms, ok := parseTimestamp(s); ok {
		return ms, true
	}
	if s == "刚刚" || s == "刚才" {
		return now, InRange(now)
	}
	if ms, ok := parseRelative(s, now); ok {
		return ms, true
	}
	if ms, ok := parseDayWord(s, now); ok {
		return ms, true
	}
	if ms, ok := parseAbsolute(s, now); ok {
		return ms, true
	}
	return parseRFC1123(s)
}

// rfc1123Layouts are the forms of RFC 1123 / RFC 2822 dates (HTTP headers, RSS), with and
// without the weekday and with one- or two-digit days.
var rfc1123Layouts = []string{
	"Mon, 02 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 -0700",
	"02 Jan 2006 15:04:05 -0700", "2 Jan 2006 15:04:05 -0700",
	"Mon, 02 Jan 2006 15:04 -0700", "Mon, 2 Jan 2006 15:04 -0700",
}

// parseRFC1123 reads "Tue, 05 Mar 2024 06:30:00 GMT" and the like. Only numeric zones and GMT,
// UT and UTC are accepted: other abbreviations are ambiguous (CST is China, or US Central).
func parseRFC1123(s string) (int64, bool) {
	if len(s) < 20 || len(s) > 40 {
		return 0, false
	}
	for _, z := range []string{" GMT", " UTC", " UT"} {
		if rest, ok := strings.CutSuffix(s, z); ok {
			s = rest + " +0000"
			break
		}
	}
	for _, layout := range rfc1123Layouts {
		if t, err := time.Parse(layout, s); err == nil {
			ms := t.UnixMilli()
			return ms, InRange(ms)
		}
	}
	return 0, false
}

// parseTimestamp reads a string of 10 ASCII digits as Unix seconds or of 13 as Unix ms (the
// usual widths from 2001 to 2286). Other runs of digits, such as 20240305, are not guessed at:
// read them with a layout ('YYYYMMDD').
func parseTimestamp(s string) (int64, bool) {
	if len(s) != 10 && len(s) != 13 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		v = v*10 + int64(s[i]-'0')
	}
	return FromNumber(float64(v))
}

// relativeUnits are the units of "N…前", longest first where one is a prefix of another.
var relativeUnits = []struct {
	name string
	ms   int64
}{
	{"秒钟", 1000}, {"秒", 1000},
	{"分钟", MinuteMs}, {"分", MinuteMs},
	{"个小时", HourMs}, {"小时", HourMs}, {"个钟头", HourMs}, {"钟头", HourMs},
	{"天", DayMs}, {"日", DayMs},
	{"个星期", 7 * DayMs}, {"星期", 7 * DayMs}, {"周", 7 * DayMs},
}

// parseRelative reads one or more "N unit" terms followed by 前 (before now) or 后 (after now).
func parseRelative(s string, now int64) (int64, bool) {
	var total int64
	terms := 0
	for {
		n, rest, ok := digits(s, 1, 9)
		if !ok {
			break
		}
		rest = strings.TrimLeft(rest, " ")
		found := false
		for _, u := range relativeUnits {
			if r, ok := strings.CutPrefix(rest, u.name); ok {
				total += int64(n) * u.ms
				rest, found = r, true
				break
			}
		}
		if !found || total > 2*MaxMs {
			return 0, false
		}
		terms++
		s = strings.TrimLeft(rest, " ")
	}
	if terms == 0 {
		return 0, false
	}
	var ms int64
	switch s {
	case "前":
		ms = now - total
	case "后":
		ms = now + total
	default:
		return 0, false
	}
	return ms, InRange(ms) && InRange(now)
}

// dayWords are the words for a day relative to today, longest first.
var dayWords = []struct {
	word string
	days int64
}{
	{"今天", 0}, {"今日", 0}, {"昨天", -1}, {"昨日", -1}, {"前天", -2},
	{"明天", 1}, {"明日", 1}, {"后天", 2},
}

// parseDayWord reads 今天/昨天/… optionally followed by a time of day.
func parseDayWord(s string, now int64) (int64, bool) {
	if !InRange(now) {
		return 0, false
	}
	for _, w := range dayWords {
		rest, ok := strings.CutPrefix(s, w.word)
		if !ok {
			continue
		}
		day := StartOfDay(now) + w.days*DayMs
		rest = strings.TrimLeft(rest, " ")
		if rest == "" {
			return day, InRange(day)
		}
		c, rest, ok := parseClock(rest)
		if !ok || rest != "" {
			return 0, false
		}
		ms := day + c.ms()
		return ms, InRange(ms)
	}
	return 0, false
}

// clock is a time of day.
type clock struct{ hour, minute, second, milli int }

func (c clock) ms() int64 {
	return int64(c.hour)*HourMs + int64(c.minute)*MinuteMs + int64(c.second)*1000 + int64(c.milli)
}

// parseClock reads H:mm[:ss[.fraction]] from the front of s. The fraction keeps milliseconds
// (further digits are dropped).
func parseClock(s string) (clock, string, bool) {
	var c clock
	var ok bool
	if c.hour, s, ok = digits(s, 1, 2); !ok {
		return c, s, false
	}
	if s, ok = strings.CutPrefix(s, ":"); !ok {
		return c, s, false
	}
	if c.minute, s, ok = digits(s, 2, 2); !ok {
		return c, s, false
	}
	if rest, ok := strings.CutPrefix(s, ":"); ok {
		if c.second, s, ok = digits(rest, 2, 2); !ok {
			return c, s, false
		}
		if rest, ok := strings.CutPrefix(s, "."); ok {
			n := 0
			for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
				if n < 3 {
					c.milli = c.milli*10 + int(rest[n]-'0')
				}
				n++
			}
			if n == 0 {
				return c, s, false
			}
			for i := n; i < 3; i++ {
				c.milli *= 10
			}
			s = rest[n:]
		}
	}
	if c.hour > 23 || c.minute > 59 || c.second > 59 {
		return c, s, false
	}
	return c, s, true
}

// parseZone reads Z, ±HH, ±HHmm or ±HH:mm and returns the offset east of UTC in ms.
func parseZone(s string) (int64, string, bool) {
	if s == "" {
		return 0, s, false
	}
	switch s[0] {
	case 'Z', 'z':
		return 0, s[1:], true
	case '+', '-':
	default:
		return 0, s, false
	}
	sign := int64(1)
	if s[0] == '-' {
		sign = -1
	}
	h, rest, ok := digits(s[1:], 2, 2)
	if !ok {
		return 0, s, false
	}
	m := 0
	if r, ok := strings.CutPrefix(rest, ":"); ok {
		if m, rest, ok = digits(r, 2, 2); !ok {
			return 0, s, false
		}
	} else if len(rest) >= 2 && rest[0] >= '0' && rest[0] <= '9' {
		m, rest, _ = digits(rest, 2, 2)
	}
	if h > 18 || m > 59 {
		return 0, s, false
	}
	return sign * (int64(h)*HourMs + int64(m)*MinuteMs), rest, true
}

// parseAbsolute reads the calendar forms: ISO 8601, YYYY-M-D, YYYY/M/D, YYYY.M.D, YYYY年M月D日,
// M月D日, MM-DD and H:mm, each with an optional time of day.
func parseAbsolute(s string, now int64) (int64, bool) {
	start := s
	n1, s, ok := digits(s, 1, 4)
	if !ok {
		return 0, false
	}
	d1 := len(start) - len(s)
	year, month, day := -1, 0, 0
	sep := ""        // the date separator of YYYY-M-D, YYYY/M/D and YYYY.M.D
	chinese := false // 日 or 号 ends the date, so a time may follow without a space
	switch {
	case d1 == 4 && strings.HasPrefix(s, "年"):
		year = n1
		if month, s, ok = digits(s[len("年"):], 1, 2); !ok {
			return 0, false
		}
		if s, ok = strings.CutPrefix(s, "月"); !ok {
			return 0, false
		}
		if day, s, ok = chineseDay(s); !ok {
			return 0, false
		}
		chinese = true
	case d1 <= 2 && strings.HasPrefix(s, "月"):
		month = n1
		if day, s, ok = chineseDay(s[len("月"):]); !ok {
			return 0, false
		}
		chinese = true
	case d1 == 4 && s != "" && (s[0] == '-' || s[0] == '/' || s[0] == '.'):
		year, sep = n1, s[:1]
		if month, s, ok = digits(s[1:], 1, 2); !ok {
			return 0, false
		}
		if s, ok = strings.CutPrefix(s, sep); !ok {
			return 0, false
		}
		if day, s, ok = digits(s, 1, 2); !ok {
			return 0, false
		}
	case d1 == 2 && strings.HasPrefix(s, "-"):
		month = n1
		if day, s, ok = digits(s[1:], 2, 2); !ok {
			return 0, false
		}
	case d1 <= 2 && strings.HasPrefix(s, ":"):
		c, rest, ok := parseClock(start)
		if !ok || rest != "" || !InRange(now) {
			return 0, false
		}
		ms := StartOfDay(now) + c.ms()
		return ms, InRange(ms)
	default:
		return 0, false
	}
	if year < 0 {
		if !InRange(now) {
			return 0, false
		}
		year = PartsOf(now).Year
	}
	// An optional weekday (周二, 星期二), as news pages write after a date; it is not checked.
	// A time may follow it with or without a space.
	if r, ok := skipWeekday(strings.TrimLeft(s, " ")); ok {
		s, chinese = strings.TrimLeft(r, " "), true
	}
	// The optional time of day: after a space (or T in ISO 8601); 年月日 may run straight on.
	var c clock
	zone, hasZone := int64(0), false
	if s != "" {
		rest := strings.TrimLeft(s, " ")
		spaced := len(rest) < len(s)
		switch {
		case rest == "":
			return 0, false
		case sep == "-" && !spaced && (rest[0] == 'T' || rest[0] == 't'):
			rest = rest[1:]
		case !spaced && !chinese:
			return 0, false
		}
		if c, rest, ok = parseClock(rest); !ok {
			return 0, false
		}
		if rest != "" && sep == "-" {
			if zone, rest, ok = parseZone(rest); !ok {
				return 0, false
			}
			hasZone = true
		}
		if rest != "" {
			return 0, false
		}
	}
	ms, ok := fromFields(year, month, day, c.hour, c.minute, c.second, c.milli)
	if !ok {
		return 0, false
	}
	if hasZone {
		ms += offsetMs - zone
	}
	return ms, InRange(ms)
}

// chineseDay reads D日 or D号.
func chineseDay(s string) (int, string, bool) {
	d, s, ok := digits(s, 1, 2)
	if !ok {
		return 0, s, false
	}
	if r, ok := strings.CutPrefix(s, "日"); ok {
		return d, r, true
	}
	if r, ok := strings.CutPrefix(s, "号"); ok {
		return d, r, true
	}
	return 0, s, false
}
