package cli

import (
	"fmt"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want string
	}{
		{"ascii", "A\tBB\tC\nlonger\tx\ty\n", "A       BB  C\nlonger  x   y\n"},
		{"chinese header over ascii rows", "插件\t服务\t状态\ncard-share\tchannels\t可用\n",
			"插件        服务      状态\ncard-share  channels  可用\n"},
		{"chinese cells", "card\t未允许\tx\nab\t已允许了\ty\n", "card  未允许    x\nab    已允许了  y\n"},
		{"fullwidth punctuation", "（在线）\tz\nabc\tz\n", "（在线）  z\nabc       z\n"},
		{"a last cell does not widen its column", "a\tb\tc\nlong\n", "a  b  c\nlong\n"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			tb := newTable(&b)
			fmt.Fprint(tb, tc.in)
			if err := tb.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tc.want)
			}
		})
	}
}

func TestDisplayWidth(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "插件": 4, "是": 2, "a插b": 4, "（": 2, "é": 1} {
		if got := displayWidth(s); got != want {
			t.Errorf("displayWidth(%q) = %d, want %d", s, got, want)
		}
	}
}
