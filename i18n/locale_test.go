package i18n

import "testing"

// Language tags are case-insensitive (BCP 47) and come with regions:
// every English one reads English, every Simplified Chinese one the source.
func TestParseLocale(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Locale
	}{
		{"zh-Hans", Zh}, {"zh", Zh}, {"zh-CN", Zh}, {"zh-hans", Zh}, {"zh-cn", Zh}, {"ZH-Hans-CN", Zh}, {"zh-SG", Zh}, {"zh-Hans-HK", Zh},
		{"en", En}, {"en-US", En}, {"en-us", En}, {"EN", En}, {"en-AU", En}, {"en-GB", En},
		{"fr", ""}, {"", ""}, {"english", ""}, {"zh-TW", ""}, {"zh-Hant", ""}, {"en-", ""},
	} {
		got, err := ParseLocale(tc.in)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("ParseLocale(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
