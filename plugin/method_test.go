package plugin

import (
	"slices"
	"testing"
)

// asciiUpper upper-cases ASCII letters only.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// TestRequestMethod covers what an attacker would send as a method.
func TestRequestMethod(t *testing.T) {
	for m, want := range map[string]string{
		"GET": "GET", "get": "GET", "Post": "POST", "pAtCh": "PATCH", "HEAD": "HEAD", "delete": "DELETE", "PUT": "PUT",
		"PROPFIND": "", "propfind": "", "CONNECT": "", "TRACE": "", "OPTIONS": "", " GET": "", "GET ": "",
		"GET\r\n": "", "G\x00ET": "", "": "", "POſT": "", "GETGET": "",
	} {
		got, ok := RequestMethod(m)
		if got != want || ok != (want != "") {
			t.Errorf("RequestMethod(%q) = %q, %v; want %q", m, got, ok, want)
		}
	}
}

// FuzzRequestMethod checks the rule for any text: accepted exactly when
// the ASCII upper case of the text is one of RequestMethods, and then that
// method is the answer.
func FuzzRequestMethod(f *testing.F) {
	for _, s := range []string{"GET", "get", "PROPFIND", " POST", "POſT", "ǅ", "\u212aET"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, m string) {
		got, ok := RequestMethod(m)
		up := asciiUpper(m)
		want := slices.Contains(RequestMethods, up)
		if ok != want || (ok && got != up) || (!ok && got != "") {
			t.Fatalf("RequestMethod(%q) = %q, %v; want ok %v", m, got, ok, want)
		}
	})
}
