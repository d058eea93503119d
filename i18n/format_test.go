package i18n

import (
	"testing"
	"time"
)

// at is a Beijing wall time in October 2026; the 21st is a Wednesday.
func at(day, h, m int) time.Time { return time.Date(2026, 10, day, h, m, 0, 0, Beijing) }

func TestFormatters(t *testing.T) {
	now := at(21, 10, 0)
	tests := []struct {
		name   string
		f      func(Locale) string
		zh, en string
	}{
		{"clock", func(Locale) string { return FormatClock(at(18, 21, 4)) }, "21:04", "21:04"},
		{"clock in UTC input", func(Locale) string { return FormatClock(at(18, 21, 4).UTC()) }, "21:04", "21:04"},
		{"weekday", func(l Locale) string { return FormatWeekday(at(19, 8, 0), l) }, "周一", "Mon"},
		{"weekday sunday", func(l Locale) string { return FormatWeekday(at(18, 8, 0), l) }, "周日", "Sun"},
		{"local date", func(l Locale) string { return FormatLocalDate(at(18, 21, 4), l) }, "10月18日", "Oct 18"},
		{"local date across UTC midnight", func(l Locale) string { return FormatLocalDate(at(19, 1, 0).UTC(), l) }, "10月19日", "Oct 19"},
		{"local date time", func(l Locale) string { return FormatLocalDateTime(at(18, 21, 4), l) }, "10月18日 21:04", "Oct 18, 21:04"},
		{"relative just now", func(l Locale) string { return FormatRelative(now.Add(-20*time.Second), now, l) }, "刚刚", "Just now"},
		{"relative minutes", func(l Locale) string { return FormatRelative(now.Add(-3*time.Minute), now, l) }, "3 分钟前", "3 min ago"},
		{"relative hours", func(l Locale) string { return FormatRelative(now.Add(-2*time.Hour-10*time.Minute), now, l) }, "2 小时前", "2 h ago"},
		{"relative yesterday", func(l Locale) string { return FormatRelative(at(20, 21, 4), now, l) }, "昨天 21:04", "Yesterday 21:04"},
		{"relative this week", func(l Locale) string { return FormatRelative(at(18, 21, 4), now, l) }, "周日 21:04", "Sun 21:04"},
		{"relative last week", func(l Locale) string { return FormatRelative(at(10, 9, 5), now, l) }, "10月10日 09:05", "Oct 10, 09:05"},
		{"relative in a moment", func(l Locale) string { return FormatRelative(now.Add(30*time.Second), now, l) }, "马上", "In a moment"},
		{"relative in minutes", func(l Locale) string { return FormatRelative(now.Add(5*time.Minute), now, l) }, "5 分钟后", "In 5 min"},
		{"relative tomorrow", func(l Locale) string { return FormatRelative(at(22, 9, 0), now, l) }, "明天 09:00", "Tomorrow 09:00"},
		{"relative friday", func(l Locale) string { return FormatRelative(at(23, 9, 0), now, l) }, "周五 09:00", "Fri 09:00"},
		{"day today", func(l Locale) string { return FormatDay(at(21, 23, 59), now, l) }, "今天", "Today"},
		{"day tomorrow", func(l Locale) string { return FormatDay(at(22, 0, 0), now, l) }, "明天", "Tomorrow"},
		{"day yesterday", func(l Locale) string { return FormatDay(at(20, 0, 0), now, l) }, "昨天", "Yesterday"},
		{"day this week", func(l Locale) string { return FormatDay(at(24, 0, 0), now, l) }, "周六", "Sat"},
		{"day far", func(l Locale) string { return FormatDay(at(30, 0, 0), now, l) }, "10月30日", "Oct 30"},
		{"countdown", func(l Locale) string { return FormatCountdown(2*time.Hour+10*time.Minute, l) }, "2小时10分", "2h 10m"},
		{"countdown minutes", func(l Locale) string { return FormatCountdown(10*time.Minute+40*time.Second, l) }, "10分", "10m"},
		{"countdown exact hours", func(l Locale) string { return FormatCountdown(3*time.Hour, l) }, "3小时", "3h"},
		{"countdown days", func(l Locale) string { return FormatCountdown(27*time.Hour+5*time.Minute, l) }, "1天3小时", "1d 3h"},
		{"countdown under a minute", func(l Locale) string { return FormatCountdown(5*time.Second, l) }, "不到1分", "<1m"},
		{"countdown over", func(l Locale) string { return FormatCountdown(-time.Minute, l) }, "0分", "0m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f(Zh); got != tc.zh {
				t.Errorf("zh-Hans: %q, want %q", got, tc.zh)
			}
			if got := tc.f(En); got != tc.en {
				t.Errorf("en: %q, want %q", got, tc.en)
			}
		})
	}
}

func TestPlural(t *testing.T) {
	tests := []struct {
		n          int
		one, other string
		want       string
	}{
		{1, "book", "", "1 book"},
		{3, "book", "", "3 books"},
		{0, "book", "", "0 books"},
		{2, "bus", "", "2 buses"},
		{2, "match", "", "2 matches"},
		{2, "person", "people", "2 people"},
		{1, "person", "people", "1 person"},
	}
	for _, tc := range tests {
		if got := Plural(tc.n, tc.one, tc.other); got != tc.want {
			t.Errorf("Plural(%d, %q, %q) = %q, want %q", tc.n, tc.one, tc.other, got, tc.want)
		}
	}
}
