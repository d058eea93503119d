package i18n

import (
	"strings"
	"testing"
)

func TestCheckEnglish(t *testing.T) {
	tests := []struct {
		text string
		want string // a part of the one problem, "" for none
	}{
		{"Focus today", ""},
		{"Treehole (树洞)", ""},
		{"Search “高数” in Treehole", ""},
		{"Course (教学网 / Blackboard) announcements", ""},
		{"Peking University Campus Card balance", ""},
		{"Today’s free rooms", ""},
		{"Next shuttle. Works offline", ""},
		{"Focus today: 3 min", ""},
		{"Sync with IAAA every Monday", ""},
		{"e.g. calculus homework", ""},
		{"2h 10m", ""},
		{"", ""},
		{"树洞 posts", "Chinese outside"},
		{"Open 教学网", "Chinese outside"},
		{"Free rooms，today", "Chinese outside"},
		{"Today's free rooms", "straight apostrophe"},
		{"Done!", "exclamation"},
		{"Focus Today", "Today is capitalised"},
		{"Start Focusing", "Focusing is capitalised"},
		{"Free Classrooms in the Library", "Classrooms is capitalised"},
	}
	for _, tc := range tests {
		got := CheckEnglish(tc.text)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%q: unexpected %q", tc.text, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%q: got %q, want one problem with %q", tc.text, got, tc.want)
		}
	}
}

func TestCheckEnglishSeveral(t *testing.T) {
	got := CheckEnglish("Don't Miss 树洞!")
	if len(got) != 4 {
		t.Errorf("want all four rules broken, got %q", got)
	}
}

func FuzzCheckEnglish(f *testing.F) {
	for _, s := range []string{"Treehole (树洞)", "Focus Today", "((", "))“”", "Don't!", "a. B", "É", "’"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = CheckEnglish(s) // never panics
	})
}
