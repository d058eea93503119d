package bjtime

import (
	"testing"
	"time"
)

// testZone is built here rather than taken from Zone, so the tests check Zone too.
var testZone = time.FixedZone("UTC+8", 8*3600)

// now is Tuesday 2024-03-05 14:30:15.250 Beijing time.
var now = time.Date(2024, 3, 5, 14, 30, 15, 250e6, testZone).UnixMilli()

func show(ms int64) string { return time.UnixMilli(ms).In(testZone).Format("2006-01-02 15:04:05.000") }

func TestNowLiteral(t *testing.T) {
	// 2024-03-05T06:30:15.250Z, written out so a wrong zone cannot cancel itself.
	if now != 1709620215250 {
		t.Fatalf("now = %d, want 1709620215250", now)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, want string // want "" means invalid
	}{
		// Unix times
		{"seconds", "1709568000", "2024-03-05 00:00:00.000"},
		{"millis", "1709568000123", "2024-03-05 00:00:00.123"},
		{"eight digits not guessed", "20240305", ""},
		{"fourteen digits not guessed", "20240305143000", ""},
		{"eleven digits", "17095680001", ""},
		// ISO 8601
		{"iso utc", "2024-03-05T06:30:00Z", "2024-03-05 14:30:00.000"},
		{"iso lower z", "2024-03-05t06:30:00z", "2024-03-05 14:30:00.000"},
		{"iso offset colon", "2024-03-05T14:30:00+08:00", "2024-03-05 14:30:00.000"},
		{"iso offset compact", "2024-03-05T01:30:00-0500", "2024-03-05 14:30:00.000"},
		{"iso offset hours", "2024-03-05T15:30:00+09", "2024-03-05 14:30:00.000"},
		{"iso millis", "2024-03-05T14:30:00.123+08:00", "2024-03-05 14:30:00.123"},
		{"iso micros dropped", "2024-03-05T14:30:00.123456", "2024-03-05 14:30:00.123"},
		{"iso tenths", "2024-03-05T14:30:00.5", "2024-03-05 14:30:00.500"},
		{"iso no zone is beijing", "2024-03-05T14:30:00", "2024-03-05 14:30:00.000"},
		{"iso no seconds", "2024-03-05T14:30", "2024-03-05 14:30:00.000"},
		{"iso space and zone", "2024-03-05 06:30:00Z", "2024-03-05 14:30:00.000"},
		{"iso date across midnight utc", "2024-03-04T16:00:00Z", "2024-03-05 00:00:00.000"},
		// YYYY-MM-DD and friends
		{"date", "2024-03-05", "2024-03-05 00:00:00.000"},
		{"date short fields", "2024-3-5", "2024-03-05 00:00:00.000"},
		{"date hh:mm", "2024-03-05 09:05", "2024-03-05 09:05:00.000"},
		{"date h:mm:ss", "2024-03-05 9:05:07", "2024-03-05 09:05:07.000"},
		{"date two spaces", "2024-03-05  09:05", "2024-03-05 09:05:00.000"},
		{"slashes", "2024/3/5", "2024-03-05 00:00:00.000"},
		{"slashes time", "2024/03/05 18:00", "2024-03-05 18:00:00.000"},
		{"dots", "2024.3.5", "2024-03-05 00:00:00.000"},
		{"dots time", "2024.12.31 23:59:59", "2024-12-31 23:59:59.000"},
		{"chinese", "2024年3月5日", "2024-03-05 00:00:00.000"},
		{"chinese time", "2024年3月5日 08:00", "2024-03-05 08:00:00.000"},
		{"chinese time joined", "2024年03月05日8:00", "2024-03-05 08:00:00.000"},
		{"chinese hao", "2024年3月5号", "2024-03-05 00:00:00.000"},
		{"month day chinese", "12月25日", "2024-12-25 00:00:00.000"},
		{"month day chinese time", "3月1日 19:30", "2024-03-01 19:30:00.000"},
		{"mm-dd", "03-01", "2024-03-01 00:00:00.000"},
		{"mm-dd time", "12-31 20:00", "2024-12-31 20:00:00.000"},
		{"hh:mm today", "08:15", "2024-03-05 08:15:00.000"},
		{"h:mm:ss today", "8:15:30", "2024-03-05 08:15:30.000"},
		{"spaces around", "  2024-03-05\u3000", "2024-03-05 00:00:00.000"},
		{"leap day", "2024-02-29", "2024-02-29 00:00:00.000"},
		{"weekday after date", "2024年03月05日 星期二", "2024-03-05 00:00:00.000"},
		{"weekday and time", "2024-03-05 周二 14:30", "2024-03-05 14:30:00.000"},
		{"weekday joined", "3月5日周二14:30", "2024-03-05 14:30:00.000"},
		{"weekday not checked", "2024/3/5 周五", "2024-03-05 00:00:00.000"},
		{"weekday then junk", "2024-03-05 周二 x", ""},
		{"bad weekday", "2024-03-05 周八", ""},
		// relative
		{"just now", "刚刚", "2024-03-05 14:30:15.250"},
		{"just now 2", "刚才", "2024-03-05 14:30:15.250"},
		{"seconds ago", "30秒前", "2024-03-05 14:29:45.250"},
		{"minutes ago", "5分钟前", "2024-03-05 14:25:15.250"},
		{"minutes ago short", "5分前", "2024-03-05 14:25:15.250"},
		{"hours ago", "3小时前", "2024-03-05 11:30:15.250"},
		{"hours ago ge", "3个小时前", "2024-03-05 11:30:15.250"},
		{"days ago keeps time", "2天前", "2024-03-03 14:30:15.250"},
		{"days ago across month", "5天前", "2024-02-29 14:30:15.250"},
		{"weeks ago", "1周前", "2024-02-27 14:30:15.250"},
		{"multi unit", "1小时10分钟前", "2024-03-05 13:20:15.250"},
		{"multi unit spaced", "1 天 2 小时前", "2024-03-04 12:30:15.250"},
		{"later", "10分钟后", "2024-03-05 14:40:15.250"},
		{"today", "今天 09:00", "2024-03-05 09:00:00.000"},
		{"today joined", "今天09:00", "2024-03-05 09:00:00.000"},
		{"today bare", "今天", "2024-03-05 00:00:00.000"},
		{"yesterday", "昨天 23:59", "2024-03-04 23:59:00.000"},
		{"day before", "前天 12:00", "2024-03-03 12:00:00.000"},
		{"tomorrow", "明天 08:00", "2024-03-06 08:00:00.000"},
		{"day after", "后天 08:00:30", "2024-03-07 08:00:30.000"},
		{"yesterday ri", "昨日 07:00", "2024-03-04 07:00:00.000"},
		// RFC 1123
		{"rfc1123 gmt", "Tue, 05 Mar 2024 06:30:00 GMT", "2024-03-05 14:30:00.000"},
		{"rfc1123 offset", "Tue, 5 Mar 2024 14:30:00 +0800", "2024-03-05 14:30:00.000"},
		{"rfc2822 no weekday", "05 Mar 2024 06:30:00 UTC", "2024-03-05 14:30:00.000"},
		{"rfc1123 ambiguous zone", "Tue, 05 Mar 2024 06:30:00 CST", ""},
		{"rfc1123 bad day", "Tue, 31 Feb 2024 06:30:00 GMT", ""},
		// invalid
		{"empty", "", ""},
		{"spaces", "   ", ""},
		{"words", "hello", ""},
		{"feb 30", "2024-02-30", ""},
		{"feb 29 non-leap", "2023-02-29", ""},
		{"month 13", "2024-13-01", ""},
		{"month 0", "2024-00-10", ""},
		{"day 0", "2024-01-00", ""},
		{"hour 24", "2024-03-05 24:00", ""},
		{"minute 60", "12:60", ""},
		{"second 60", "12:00:60", ""},
		{"one digit minute", "12:5", ""},
		{"mixed separators", "2024-03/05", ""},
		{"trailing text", "2024-03-05 abc", ""},
		{"leading text", "发布于 2024-03-05", ""},
		{"time without space", "2024-03-0514:30", ""},
		{"mm-dd joined time", "03-0514:30", ""},
		{"zone on slashes", "2024/03/05 10:00Z", ""},
		{"bad zone", "2024-03-05T10:00+25:00", ""},
		{"dangling fraction", "2024-03-05T10:00:00.", ""},
		{"dangling T", "2024-03-05T", ""},
		{"unit without number", "分钟前", ""},
		{"no ago", "5分钟", ""},
		{"months ago unsupported", "3个月前", ""},
		{"huge ago", "999999999周前", ""},
		{"day word garbage", "今天下午", ""},
		{"two-digit year", "24-03-05", ""},
		{"chinese no day", "2024年3月", ""},
		{"chinese apr 31", "4月31日", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, ok := Parse(tc.in, now)
			got := ""
			if ok {
				got = show(ms)
			}
			if got != tc.want {
				t.Errorf("Parse(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseLiteralValues(t *testing.T) {
	for in, want := range map[string]int64{
		"2024-03-05":               1709568000000,
		"2024-03-05T00:00:00Z":     1709596800000,
		"1970-01-01 08:00":         0,
		"1969-12-31 23:59:59":      -28801000,
		"1709568000":               1709568000000,
		"2024-03-05T14:30:15.250Z": 1709649015250,
	} {
		if got, ok := Parse(in, now); !ok || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
}

func TestFromNumber(t *testing.T) {
	tests := []struct {
		in   float64
		want int64
		ok   bool
	}{
		{1709568000, 1709568000000, true},
		{1709568000.5, 1709568000500, true},
		{1709568000123, 1709568000123, true},
		{1709568000123.9, 1709568000123, true},
		{99999999999, 99999999999000, true},
		{100000000000, 100000000000, true},
		{0, 0, true},
		{-1, -1000, true},
		{8.64e15, 8_640_000_000_000_000, true},
		{8.64e15 + 1, 0, false},
	}
	for _, tc := range tests {
		got, ok := FromNumber(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("FromNumber(%v) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestFormat(t *testing.T) {
	// Sunday 2023-01-08 07:04:09 Beijing.
	ms := time.Date(2023, 1, 8, 7, 4, 9, 0, testZone).UnixMilli()
	tests := []struct{ layout, want string }{
		{DefaultLayout, "2023-01-08 07:04"},
		{"YYYY", "2023"},
		{"MM", "01"},
		{"M", "1"},
		{"DD", "08"},
		{"D", "8"},
		{"HH", "07"},
		{"H", "7"},
		{"mm", "04"},
		{"ss", "09"},
		{"ddd", "周日"},
		{"YYYY年M月D日 ddd H:mm", "2023年1月8日 周日 7:04"},
		{"YYYY-MM-DDTHH:mm:ss+08:00", "2023-01-08T07:04:09+08:00"},
		{"[YYYY] YYYY", "YYYY 2023"},
		{"[unclosed YYYY", "[unclosed 2023"},
		{"Y YY m s d dd", "Y YY m s d dd"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := Format(ms, tc.layout); got != tc.want {
			t.Errorf("Format(%q) = %q, want %q", tc.layout, got, tc.want)
		}
	}
	for i, want := range []string{"周一", "周二", "周三", "周四", "周五", "周六", "周日"} {
		day := time.Date(2024, 3, 4+i, 12, 0, 0, 0, testZone).UnixMilli() // 2024-03-04 is a Monday
		if got := Format(day, "ddd"); got != want {
			t.Errorf("weekday %d: got %q, want %q", i, got, want)
		}
	}
	// Near midnight the Beijing date differs from the UTC date.
	if got := Format(time.Date(2024, 3, 4, 16, 30, 0, 0, time.UTC).UnixMilli(), "YYYY-MM-DD HH:mm"); got != "2024-03-05 00:30" {
		t.Errorf("UTC 16:30 = %q, want 2024-03-05 00:30", got)
	}
}

func TestParseLayout(t *testing.T) {
	tests := []struct{ in, layout, want string }{
		{"2024-03-05", "YYYY-MM-DD", "2024-03-05 00:00:00.000"},
		{"05/03/2024 18:20", "DD/MM/YYYY HH:mm", "2024-03-05 18:20:00.000"},
		{"2024年3月5日 周二 9:05", "YYYY年M月D日 ddd H:mm", "2024-03-05 09:05:00.000"},
		{"2024年3月5日 星期二 9:05", "YYYY年M月D日 ddd H:mm", "2024-03-05 09:05:00.000"},
		{"12.25", "MM.DD", "2024-12-25 00:00:00.000"},
		{"3.7", "M.D", "2024-03-07 00:00:00.000"},
		{"19:45:30", "HH:mm:ss", "2024-03-05 19:45:30.000"},
		{"2025", "YYYY", "2025-01-01 00:00:00.000"},
		{"发布时间：2024-03-05", "发布时间：YYYY-MM-DD", "2024-03-05 00:00:00.000"},
		{"2024-03-05   10:00", "YYYY-MM-DD HH:mm", "2024-03-05 10:00:00.000"},
		{"at 2024", "[at] YYYY", "2024-01-01 00:00:00.000"},
		{"20240305143000", "YYYYMMDDHHmmss", "2024-03-05 14:30:00.000"},
		{"2024-03-05", " YYYY-MM-DD\u3000", "2024-03-05 00:00:00.000"},
		{"202403", "YYYYMM", "2024-03-01 00:00:00.000"},
		// invalid
		{"2024-3-05", "YYYY-MM-DD", ""},
		{"2024-03-05 10:00", "YYYY-MM-DD", ""},
		{"2024-02-30", "YYYY-MM-DD", ""},
		{"24-03-05", "YYYY-MM-DD", ""},
		{"2024-03-0510:00", "YYYY-MM-DD HH:mm", ""},
		{"周八 10:00", "ddd HH:mm", ""},
		{"25:00", "HH:mm", ""},
		{"", "YYYY", ""},
	}
	for _, tc := range tests {
		ms, ok := ParseLayout(tc.in, tc.layout, now)
		got := ""
		if ok {
			got = show(ms)
		}
		if got != tc.want {
			t.Errorf("ParseLayout(%q, %q) = %q, want %q", tc.in, tc.layout, got, tc.want)
		}
	}
}

func TestPartsAndArithmetic(t *testing.T) {
	p := PartsOf(now)
	want := Parts{Year: 2024, Month: 3, Day: 5, Hour: 14, Minute: 30, Second: 15, Weekday: 2}
	if p != want {
		t.Errorf("PartsOf(now) = %+v, want %+v", p, want)
	}
	if p := PartsOf(time.Date(2024, 3, 10, 23, 0, 0, 0, testZone).UnixMilli()); p.Weekday != 7 {
		t.Errorf("Sunday weekday = %d, want 7", p.Weekday)
	}
	if got := show(StartOfDay(now)); got != "2024-03-05 00:00:00.000" {
		t.Errorf("StartOfDay = %s", got)
	}
	if got := show(StartOfDay(-1)); got != "1970-01-01 00:00:00.000" {
		t.Errorf("StartOfDay(-1) = %s", got)
	}
	if got := show(StartOfDay(-28800001)); got != "1969-12-31 00:00:00.000" {
		t.Errorf("StartOfDay(-28800001) = %s", got)
	}
	at := func(s string) int64 {
		ms, ok := Parse(s, now)
		if !ok {
			t.Fatalf("Parse(%q) failed", s)
		}
		return ms
	}
	days := []struct {
		a, b string
		want int64
	}{
		{"2024-03-05 23:59", "2024-03-06 00:01", 1},
		{"2024-03-06 00:01", "2024-03-05 23:59", -1},
		{"2024-03-05 00:00", "2024-03-05 23:59", 0},
		{"2024-02-28 12:00", "2024-03-01 01:00", 2},
		{"2023-12-31 23:00", "2024-12-31 01:00", 366},
		{"1969-12-31 12:00", "1970-01-01 12:00", 1},
	}
	for _, tc := range days {
		if got := DiffDays(at(tc.a), at(tc.b)); got != tc.want {
			t.Errorf("DiffDays(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	mins := []struct {
		a, b int64
		want int64
	}{
		{0, 59_999, 0}, {0, 60_000, 1}, {0, 119_999, 1}, {0, -59_999, 0}, {0, -60_000, -1},
		{0, -119_999, -1}, {at("12:00"), at("13:30"), 90},
	}
	for _, tc := range mins {
		if got := DiffMinutes(tc.a, tc.b); got != tc.want {
			t.Errorf("DiffMinutes(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
