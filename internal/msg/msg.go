// Package msg is the message catalogue of the host's command line: every prompt and message
// `harness plugins …`, `harness tool run` and the other host commands print, in zh-Hans and
// en under the same keys (docs/DECISIONS.md §11 "Locale": one language per run, from --lang, else the locale, else
// zh-Hans). A parameterised message is one format string per language with explicit argument
// indexes where the languages order them differently (%[2]s), never fragments joined in code.
//
// The review sheet of a plugin is host.Review.Sheet, in the same two languages; this package
// holds what the command line adds around it (prompts, outcomes, listings) and the sheet of a
// remote plugin.
package msg

import (
	"fmt"
	"strings"
)

// Lang is a language of the catalogue.
type Lang string

// The languages: Chinese (simplified), the default, and English.
const (
	ZhHans Lang = "zh-Hans"
	En     Lang = "en"
)

// Default is the language when neither --lang nor the locale names one (docs/DECISIONS.md §11 "Locale").
const Default = ZhHans

// Parse reads a language as --lang or a locale variable gives it: "zh-Hans", "zh", "zh_CN",
// "zh-CN.UTF-8", "zh_SG" are ZhHans; "en", "en_US.UTF-8", "en-GB", "C", "POSIX" (the
// untranslated locale) are En. The case of the letters does not matter. ok is false for
// anything else, "" included.
func Parse(s string) (l Lang, ok bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, ".@"); i >= 0 { // codeset and modifier: en_US.UTF-8, de_DE@euro
		s = s[:i]
	}
	s = strings.ToLower(strings.ReplaceAll(s, "_", "-"))
	switch {
	case s == "c" || s == "posix":
		return En, true
	case s == "en" || strings.HasPrefix(s, "en-"):
		return En, true
	case s == "zh" || s == "zh-hans" || s == "zh-cn" || s == "zh-sg" || strings.HasPrefix(s, "zh-hans-"):
		return ZhHans, true
	}
	return "", false
}

// Resolve picks the language of a run: the --lang value when not "" (an unknown one is an
// error naming the two languages), else the first of LC_ALL, LC_MESSAGES and LANG that is set
// and not empty (POSIX precedence), when it names a language of the catalogue, else Default.
// getenv is os.Getenv in the command line.
func Resolve(flagValue string, getenv func(string) string) (Lang, error) {
	if flagValue != "" {
		l, ok := Parse(flagValue)
		if !ok {
			return "", fmt.Errorf("--lang %q: use zh-Hans or en", flagValue)
		}
		return l, nil
	}
	for _, v := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if s := getenv(v); s != "" {
			if l, ok := Parse(s); ok {
				return l, nil
			}
			return Default, nil // the first one set decides, even when it is a language we lack
		}
	}
	return Default, nil
}

// T formats the message k in language l with args. An unknown key (a bug) gives the key itself
// in brackets, so that it shows instead of crashing; TestCatalogue keeps that from happening.
func (l Lang) T(k Key, args ...any) string {
	e, ok := catalogue[k]
	if !ok {
		return "[" + string(k) + "]"
	}
	f := e.en
	if l == ZhHans {
		f = e.zh
	}
	if len(args) == 0 {
		return f
	}
	return fmt.Sprintf(f, args...)
}

// Keys lists every key of the catalogue.
func Keys() []Key {
	out := make([]Key, 0, len(catalogue))
	for k := range catalogue {
		out = append(out, k)
	}
	return out
}

// Args is how many arguments the message k takes (the highest argument index its formats use).
func Args(k Key) int { return countArgs(catalogue[k].en) }

// countArgs counts the arguments a format string consumes: %% is none, %[n]v moves to n.
func countArgs(f string) int {
	n, next := 0, 1
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			continue
		}
		// Flags, width, precision, an explicit index, then the verb.
		for i < len(f) && strings.IndexByte("+-# 0123456789.*", f[i]) >= 0 {
			i++
		}
		if i < len(f) && f[i] == '[' {
			j := strings.IndexByte(f[i:], ']')
			if j > 0 {
				var idx int
				fmt.Sscanf(f[i+1:i+j], "%d", &idx)
				next = idx
				i += j + 1
			}
		}
		n = max(n, next)
		next++
	}
	return n
}
