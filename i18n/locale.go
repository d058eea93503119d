package i18n

import (
	"fmt"
	"slices"
	"strings"
)

// Locale is one of the app's languages: zh-Hans (the source) or en.
type Locale string

// The two locales (seed 003 "多语言": "App 支持简体中文(zh-Hans)和英文(en)").
const (
	Zh Locale = "zh-Hans"
	En Locale = "en"
)

// Locales are the app's locales, the source first.
var Locales = []Locale{Zh, En}

// ParseLocale reads a language tag, case-insensitively (BCP 47): "zh-Hans"
// and the Simplified Chinese tags ("zh", "zh-CN", "zh-SG", "zh-Hans-CN", …)
// are Zh; "en" and any English region ("en-US", "en-GB", "en-AU", …) are
// En. Anything else (Traditional Chinese "zh-TW", "zh-Hant" included) is an
// error naming the two.
func ParseLocale(s string) (Locale, error) {
	parts := strings.Split(strings.ToLower(s), "-")
	ok := true
	for _, p := range parts[1:] {
		ok = ok && p != ""
	}
	switch {
	case ok && parts[0] == "en":
		return En, nil
	case ok && parts[0] == "zh" && (slices.Contains(parts, "hans") ||
		!slices.ContainsFunc(parts, func(p string) bool { return p == "hant" || p == "tw" || p == "hk" || p == "mo" })):
		return Zh, nil
	}
	return "", fmt.Errorf("unknown locale %q (use zh-Hans or en)", s)
}

// Or returns l, or Zh when l is not En: every locale but English reads the
// source language.
func (l Locale) Or() Locale {
	if l == En {
		return En
	}
	return Zh
}
