package genui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
)

func TestFormattersInTemplates(t *testing.T) {
	now := time.Date(2026, 10, 21, 10, 0, 0, 0, time.FixedZone("CST", 8*3600))
	nowMs := float64(now.UnixMilli())
	at := float64(now.Add(-3 * time.Minute).UnixMilli())
	yesterday := float64(time.Date(2026, 10, 20, 21, 4, 0, 0, time.FixedZone("CST", 8*3600)).UnixMilli())
	tests := []struct {
		src, zh, en string
	}{
		{"${formatRelative(data.x.at)}", "3 分钟前", "3 min ago"},
		{"${formatRelative(data.x.yesterday)}", "昨天 21:04", "Yesterday 21:04"},
		{"${formatRelative(data.x.at, 'en')}", "3 min ago", "3 min ago"},
		{"${formatClock(data.x.yesterday)}", "21:04", "21:04"},
		{"${formatDay(host.now)}", "今天", "Today"},
		{"${formatWeekday(host.now)}", "周三", "Wed"},
		{"${formatLocalDate(data.x.yesterday)}", "10月20日", "Oct 20"},
		{"${formatLocalDateTime(data.x.yesterday)}", "10月20日 21:04", "Oct 20, 21:04"},
		{"${formatCountdown(7800000)}", "2小时10分", "2h 10m"},
		{"${plural(3, 'book')}", "3 books", "3 books"},
		{"${plural(1, 'book')}", "1 book", "1 book"},
	}
	for _, tc := range tests {
		tpl, err := env.ParseTemplate(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		for _, c := range []struct{ locale, want string }{{"zh-Hans", tc.zh}, {"en", tc.en}} {
			host := expr.NewObject(3)
			host.Set("size", "md")
			host.Set("locale", c.locale)
			host.Set("now", nowMs)
			x := expr.NewObject(2)
			x.Set("at", at)
			x.Set("yesterday", yesterday)
			data := expr.NewObject(1)
			data.Set("x", x)
			got, err := tpl.Render(context.Background(), expr.MapVars{"host": host, "data": data}, expr.NewBudget(1000))
			if err != nil {
				t.Fatalf("%s (%s): %v", tc.src, c.locale, err)
			}
			if got != c.want {
				t.Errorf("%s (%s) = %v, want %q", tc.src, c.locale, got, c.want)
			}
		}
	}
}

func TestFormattersRefuseBadArguments(t *testing.T) {
	for _, src := range []string{"${formatRelative('soon')}", "${formatClock(1, 'fr')}", "${plural(1.5, 'book')}", "${plural(2, 3)}"} {
		tpl, err := env.ParseTemplate(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		_, err = tpl.Render(context.Background(), expr.MapVars{}, expr.NewBudget(1000))
		if err == nil || !strings.Contains(err.Error(), strings.Split(strings.TrimPrefix(src, "${"), "(")[0]) {
			t.Errorf("%s: error %v should name the function", src, err)
		}
	}
}

func TestFormattersValidate(t *testing.T) {
	doc := `{"ui":1,"kind":"widget","title":"最近","description":"Recent posts.","i18n":{"en":{"title":"Recent","description":"Recent posts."}},"data":{"x":{"source":"x"}},
"root":{"type":"Text","text":"${formatRelative(data.x.at)} · ${plural(data.x.n, 'post')}"}}`
	for _, d := range Validate("w.json", []byte(doc), Context{Kind: "widget", DataSources: []string{"x"}}) {
		if d.Severity == diag.Error {
			t.Errorf("%s", d)
		}
	}
}
