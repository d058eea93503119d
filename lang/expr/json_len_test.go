package expr

import "testing"

// FuzzJSONStringLen checks that jsonStringLen is the length appendJSONString writes, which the
// encoder relies on to charge and bound its output before writing a string.
func FuzzJSONStringLen(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\\n\r\t\b\f\x01", "中文", "\xff\xfe", "a\u2028b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := jsonStringLen(s), len(appendJSONString(nil, s)); got != want {
			t.Fatalf("jsonStringLen(%q) = %d, appendJSONString writes %d", s, got, want)
		}
	})
}
