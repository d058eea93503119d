package bjtime

import "testing"

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
