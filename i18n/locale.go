package i18n

import "fmt"

// Locale is one of the app's languages: zh-Hans (the source) or en.
type Locale string

// The two locales (seed 003 "多语言": "App 支持简体中文(zh-Hans)和英文(en)").
const (
	Zh Locale = "zh-Hans"
	En Locale = "en"
)

// Locales are the app's locales, the source first.
var Locales = []Locale{Zh, En}

// ParseLocale reads "zh-Hans" (also "zh", "zh-CN") or "en" (also "en-US",
// "en-GB"); anything else is an error naming the two.
func ParseLocale(s string) (Locale, error) {
	switch s {
	case "zh-Hans", "zh", "zh-CN", "zh-Hans-CN":
		return Zh, nil
	case "en", "en-US", "en-GB":
		return En, nil
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
