package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// TestPresetTitles: every preset has a title in English and one in zh-Hans
// (the web app shows the page language's), both sent in the presets' JSON.
func TestPresetTitles(t *testing.T) {
	han := func(s string) bool {
		for _, r := range s {
			if unicode.Is(unicode.Han, r) {
				return true
			}
		}
		return false
	}
	for _, p := range Presets {
		if p.Title == "" || han(p.Title) {
			t.Errorf("%s: English title %q", p.Name, p.Title)
		}
		if p.TitleZh == "" {
			t.Errorf("%s: no zh-Hans title", p.Name)
		}
		// A title with English words in it says them in Chinese too ("(local)" → "(本机)").
		if strings.ContainsAny(strings.ToLower(p.Title), "()") && !han(p.TitleZh) {
			t.Errorf("%s: zh-Hans title %q is not in Chinese", p.Name, p.TitleZh)
		}
		b, _ := json.Marshal(p)
		if !strings.Contains(string(b), `"titleZh":"`+p.TitleZh+`"`) {
			t.Errorf("%s: JSON %s lacks titleZh", p.Name, b)
		}
	}
	if p := PresetByName("ollama"); p == nil || p.TitleZh != "Ollama(本机)" {
		t.Errorf("ollama: %+v", p)
	}
}
