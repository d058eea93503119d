package bjtime

import (
	"strings"
	"testing"
)

// FuzzDate checks the invariants of Parse on any text and any now: it never panics, a result is
// within ±MaxMs, and a result with a four-digit year survives Format → Parse (to the second).
// The seed corpus is in testdata/fuzz/FuzzDate.
func FuzzDate(f *testing.F) {
	for _, s := range []string{
		"2024-03-05T14:30:00.123+08:00", "2024/3/5 9:05", "2024年3月5日 08:00", "12-31 20:00",
		"3月1日", "08:15", "刚刚", "1小时10分钟前", "5天后", "昨天 23:59", "1709568000",
		"2024-02-30", "", "今天",
	} {
		f.Add(s, now)
	}
	f.Fuzz(func(t *testing.T, s string, now int64) {
		ms, ok := Parse(s, now)
		if !ok {
			return
		}
		if !InRange(ms) {
			t.Fatalf("Parse(%q, %d) = %d, outside ±MaxMs", s, now, ms)
		}
		if again, ok2 := Parse(s, now); !ok2 || again != ms {
			t.Fatalf("Parse(%q) not deterministic: %d then %d, %v", s, ms, again, ok2)
		}
		if y := PartsOf(ms).Year; y < 1000 || y > 9999 {
			return
		}
		text := Format(ms, "YYYY-MM-DDTHH:mm:ss")
		back, ok := Parse(text, now)
		if want := floorDiv(ms, 1000) * 1000; !ok || back != want {
			t.Fatalf("Parse(%q) = %d; Format → %q → Parse = %d, %v; want %d", s, ms, text, back, ok, want)
		}
		const layout = "D/M/YYYY ddd H:mm:ss"
		text = Format(ms, layout)
		if back, ok := ParseLayout(text, layout, now); !ok || back != floorDiv(ms, 1000)*1000 {
			t.Fatalf("layout round trip of %d via %q = %d, %v", ms, text, back, ok)
		}
	})
}

// FuzzLayout checks formatDate's and date(x, layout)'s layouts on any layout text and date:
// Format never panics, and when the layout names every field once (year, month, day, hour,
// minute, second) with each one- or two-digit token followed by something other than a digit,
// Parse(Format(ms)) gives ms back to the second. Seeds are in testdata/fuzz/FuzzLayout.
func FuzzLayout(f *testing.F) {
	for _, l := range []string{
		DefaultLayout, "YYYY-MM-DD HH:mm:ss", "YYYY年M月D日 ddd H:mm:ss", "YYYYMMDDHHmmss",
		"[at] ss mm HH DD MM YYYY", "D/M/YYYY H时mm分ss秒", "MD", "YYYY[", "",
	} {
		f.Add(l, now)
	}
	f.Fuzz(func(t *testing.T, layout string, ms int64) {
		if !InRange(ms) {
			return
		}
		l := CompileLayout(layout)
		text := l.Format(ms)
		if y := PartsOf(ms).Year; y < 1000 || y > 9999 || !roundTrips(l) {
			return
		}
		back, ok := l.Parse(text, now)
		if want := floorDiv(ms, 1000) * 1000; !ok || back != want {
			t.Fatalf("layout %q: %d → %q → %d, %v; want %d", layout, ms, text, back, ok, want)
		}
	})
}

// roundTrips reports whether a layout can be read back unambiguously: every field once, and no
// variable-width token directly before a digit or another number token.
func roundTrips(l Layout) bool {
	seen := map[string]int{}
	field := map[tokenKind]string{
		tokYYYY: "year", tokMM: "month", tokM: "month", tokDD: "day", tokD: "day",
		tokHH: "hour", tokH: "hour", tokmm: "minute", tokss: "second",
	}
	for i, tk := range l.tokens {
		if name, ok := field[tk.kind]; ok {
			seen[name]++
		}
		if tk.kind == tokM || tk.kind == tokD || tk.kind == tokH {
			if i+1 < len(l.tokens) {
				next := l.tokens[i+1]
				if next.kind != tokLiteral && next.kind != tokddd {
					return false
				}
				if next.kind == tokLiteral && next.lit[0] >= '0' && next.lit[0] <= '9' {
					return false
				}
			}
		}
		// A literal that starts with spaces matches any number of them, so spaces a
		// literal ends with would swallow nothing wrong; but a literal made of the
		// start of a weekday name after ddd cannot be told apart.
		if tk.kind == tokddd && i+1 < len(l.tokens) && l.tokens[i+1].kind == tokLiteral {
			if r := l.tokens[i+1].lit; strings.ContainsAny(r[:1], "一二三四五六日天") {
				return false
			}
		}
	}
	return len(seen) == 6 && seen["year"] == 1 && seen["month"] == 1 && seen["day"] == 1 &&
		seen["hour"] == 1 && seen["minute"] == 1 && seen["second"] == 1
}
