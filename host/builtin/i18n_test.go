package builtin

import (
	"strings"
	"testing"

	"github.com/pkuinfo/harness/i18n"
)

// TestI18nCoverage is the seed's plugins/i18n.test.ts for the app's
// built-ins: it fails on any missing English string or copy-rule break.
func TestI18nCoverage(t *testing.T) {
	for _, p := range Definitions() {
		t.Run(p.ID, func(t *testing.T) {
			for _, problem := range CheckI18n(p) {
				t.Error(problem)
			}
		})
	}
}

// TestI18nCoverageFails shows the check failing on a built-in with gaps.
func TestI18nCoverageFails(t *testing.T) {
	broken := *Focus
	broken.ID = "broken"
	broken.I18n = I18n{
		En: EnText{
			Name:        "Focus Sessions",
			Description: "Track focus! It's easy",
			Tools:       map[string]ToolText{"start": {Title: "Start"}, "ghost": {Title: "Ghost"}},
			Widgets:     map[string]UIText{"today": {Title: "Focus today"}},
			Commands:    map[string]CommandText{"focus": {Description: "打开专注"}},
		},
		Strings: Strings{
			i18n.Zh: {"today": "今日专注", "minutes": func(n int) string { return "" }},
			i18n.En: {"today": "Focus Today", "minutes": "min", "extra": "x"},
		},
	}
	got := strings.Join(CheckI18n(&broken), "\n")
	for _, want := range []string{
		`i18n.en.name "Focus Sessions": not sentence case`,
		`i18n.en.description "Track focus! It's easy": a straight apostrophe`,
		`i18n.en.description "Track focus! It's easy": an exclamation mark`,
		"i18n.en.tools.stop.title: missing",
		"i18n.en.tools.ghost: no such tool",
		"i18n.en.widgets.today.description: missing",
		"i18n.en.screens.main.title: missing",
		"i18n.en.settings.main.title: missing",
		"i18n.en.dataSources.today.title: missing",
		`i18n.en.commands.focus.description "打开专注": Chinese outside parentheses`,
		"i18n.en.commands.focus.argHint: missing",
		"strings.extra: only in en",
		"strings.minutes: zh-Hans is func(int) string, en is string",
		`strings.today "Focus Today": not sentence case`,
		`screens/main.json: i18n.en.title "Focus" is not the plugin's English title ""`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the check does not report %q; it said:\n%s", want, got)
		}
	}
}

func TestStringsT(t *testing.T) {
	s := focusStrings
	for _, tc := range []struct {
		l    i18n.Locale
		key  string
		args []any
		want string
	}{
		{i18n.Zh, "minutes", []any{3}, "3 分钟"},
		{i18n.En, "minutes", []any{1}, "1 min"},
		{i18n.En, "running", []any{"高数"}, "Focusing on 高数"},
		{i18n.En, "running", []any{""}, "Focusing"},
		{"fr", "idle", nil, "还没有开始"},
		{i18n.En, "nope", nil, "[nope]"},
		{i18n.En, "minutes", []any{"three"}, "[minutes]"},
		{i18n.En, "idle", []any{1}, "[idle]"},
	} {
		if got := s.T(tc.l, tc.key, tc.args...); got != tc.want {
			t.Errorf("T(%s, %s, %v) = %q, want %q", tc.l, tc.key, tc.args, got, tc.want)
		}
	}
}
