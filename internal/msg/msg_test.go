package msg

import (
	"fmt"
	"strings"
	"testing"
)

// TestCatalogue walks every entry in both languages: each is present and not empty, takes the
// same arguments in both (every argument shows in each rendering, and fmt finds nothing
// missing or extra), and has no stray whitespace at the ends but where a prompt wants it.
func TestCatalogue(t *testing.T) {
	if len(Keys()) < 60 {
		t.Fatalf("only %d keys", len(Keys()))
	}
	for _, k := range Keys() {
		e := catalogue[k]
		for _, l := range []Lang{ZhHans, En} {
			f := e.en
			if l == ZhHans {
				f = e.zh
			}
			if strings.TrimSpace(f) == "" {
				t.Errorf("%s [%s]: missing or empty", k, l)
				continue
			}
			if countArgs(f) != Args(k) {
				t.Errorf("%s [%s]: takes %d arguments, the English %d", k, l, countArgs(f), Args(k))
			}
			args := make([]any, Args(k))
			for i := range args {
				if strings.Contains(f, fmt.Sprintf("%%[%d]d", i+1)) {
					args[i] = 7000 + i
				} else {
					args[i] = fmt.Sprintf("⟦%d⟧", i+1)
				}
			}
			got := l.T(k, args...)
			if strings.Contains(got, "%!") {
				t.Errorf("%s [%s]: %q", k, l, got)
			}
			for _, a := range args {
				if !strings.Contains(got, fmt.Sprint(a)) {
					t.Errorf("%s [%s]: argument %v does not show in %q", k, l, a, got)
				}
			}
		}
		if (e.zh == e.en) && !strings.ContainsAny(e.en, "%") && k != Confirm {
			t.Errorf("%s: the same text in both languages: %q", k, e.en)
		}
	}
}

func TestUnknownKey(t *testing.T) {
	if got := En.T("no.such.key"); got != "[no.such.key]" {
		t.Errorf("got %q", got)
	}
}

func TestParseAndResolve(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Lang
		ok   bool
	}{
		{"zh-Hans", ZhHans, true}, {"zh", ZhHans, true}, {"zh_CN.UTF-8", ZhHans, true}, {"ZH-cn", ZhHans, true},
		{"zh-Hans-CN", ZhHans, true}, {"zh_SG", ZhHans, true},
		{"en", En, true}, {"en_US.UTF-8", En, true}, {"en-GB", En, true}, {"C", En, true}, {"POSIX", En, true},
		{"C.UTF-8", En, true}, {"en_US@euro", En, true},
		{"", "", false}, {"fr_FR.UTF-8", "", false}, {"zh_TW", "", false}, {"english", "", false}, {"e", "", false},
	} {
		if got, ok := Parse(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("Parse(%q) = %q %v, want %q %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		flag string
		env  func(string) string
		want Lang
		err  string
	}{
		{"", env(), ZhHans, ""},
		{"en", env("LANG", "zh_CN.UTF-8"), En, ""},
		{"", env("LANG", "en_US.UTF-8"), En, ""},
		{"", env("LANG", "en_US.UTF-8", "LC_MESSAGES", "zh_CN.UTF-8"), ZhHans, ""},
		{"", env("LANG", "zh_CN.UTF-8", "LC_MESSAGES", "en_GB", "LC_ALL", "zh_CN"), ZhHans, ""},
		{"", env("LC_ALL", "en_US.UTF-8", "LANG", "zh_CN.UTF-8"), En, ""},
		{"", env("LANG", "fr_FR.UTF-8"), ZhHans, ""},
		{"fr", env(), "", `--lang "fr": use zh-Hans or en`},
	} {
		got, err := Resolve(tc.flag, tc.env)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("Resolve(%q) = %q, %v; want %q, %q", tc.flag, got, err, tc.want, tc.err)
		}
	}
}

func TestCountArgs(t *testing.T) {
	for f, want := range map[string]int{"": 0, "100%%": 0, "%s": 1, "%s %d": 2, "%[2]s %[1]s": 2, "%[1]s %[1]s": 1, "%-8s%5.2f": 2, "%[3]d": 3} {
		if got := countArgs(f); got != want {
			t.Errorf("countArgs(%q) = %d, want %d", f, got, want)
		}
	}
}

// FuzzParse: any text either parses to one of the two languages or is refused; never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"zh_CN.UTF-8", "en", "C", "", "zh-Hans-CN@x", "._@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, ok := Parse(s)
		if ok != (l == ZhHans || l == En) {
			t.Fatalf("Parse(%q) = %q, %v", s, l, ok)
		}
	})
}
