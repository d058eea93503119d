package bjtime

import "testing"

func BenchmarkParse(b *testing.B) {
	for _, s := range []string{"2024-03-05T14:30:00+08:00", "2024年3月5日 19:30", "1小时10分钟前", "Tue, 05 Mar 2024 06:30:00 GMT", "not a date"} {
		b.Run(s, func(b *testing.B) {
			for b.Loop() {
				Parse(s, now)
			}
		})
	}
}

func BenchmarkFormat(b *testing.B) {
	l := CompileLayout("YYYY年M月D日 ddd HH:mm:ss")
	for b.Loop() {
		l.Format(now)
	}
}
