package i18n

import (
	"strings"
	"unicode"
)

// ProperNouns are the capitalised words sentence case keeps inside a
// sentence (seed 003 "英文文案规范": campus names in their official English
// or Pinyin, Peking University, Treehole (树洞), Course (教学网 /
// Blackboard), Campus Card), with weekdays, months, languages and the
// product names the app's copy uses.
var ProperNouns = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`Peking University PKU Treehole Course Blackboard Campus Card IAAA
		Beijing Yanyuan Xinyanyuan Changping Bei’anhe Haidian Weiming Yiheyuan Shahe
		Monday Tuesday Wednesday Thursday Friday Saturday Sunday Mon Tue Wed Thu Fri Sat Sun
		January February March April May June July August September October November December
		Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec
		English Chinese Pinyin Cloud MCP GitHub WeChat Alipay Wi-Fi ITS GPA TOTP OTP URL API JSON
		Android iOS Markdown Google Microsoft Authenticator I`) {
		ProperNouns[w] = true
	}
}

// CheckEnglish checks one English string against the copy rules of seed
// 003 "英文文案规范" and returns each problem found as a short sentence (nil
// when the text follows them):
//
//   - no Chinese outside parentheses or quotes ("Treehole (树洞)" is fine);
//   - the curly apostrophe ’, never the straight ';
//   - no exclamation marks;
//   - sentence case: inside a sentence only proper nouns (ProperNouns),
//     acronyms and words with digits are capitalised.
func CheckEnglish(s string) []string {
	var out []string
	if hanOutside(s) {
		out = append(out, "Chinese outside parentheses or quotes (write the English, or put the Chinese name in parentheses)")
	}
	if strings.ContainsRune(s, '\'') {
		out = append(out, "a straight apostrophe ': use the curly ’")
	}
	if strings.ContainsAny(s, "!！") {
		out = append(out, "an exclamation mark: state it plainly")
	}
	if w := titleCaseWord(s); w != "" {
		out = append(out, "not sentence case: "+w+" is capitalised inside a sentence (capitalise only the first word and proper nouns)")
	}
	return out
}

// hanOutside reports whether s has a Han character or Chinese punctuation
// outside (), （）, "", “”, 「」, 『』 and 《》.
func hanOutside(s string) bool {
	depth := 0
	straight := false
	for _, r := range s {
		switch r {
		case '(', '（', '“', '「', '『', '《':
			depth++
			continue
		case ')', '）', '”', '」', '』', '》':
			if depth > 0 {
				depth--
			}
			continue
		case '"':
			straight = !straight
			continue
		}
		if depth > 0 || straight {
			continue
		}
		if unicode.Is(unicode.Han, r) || strings.ContainsRune("，。：；？、！…—", r) {
			return true
		}
	}
	return false
}

// titleCaseWord returns the first word of s that sentence case would write
// in lower case, or "".
func titleCaseWord(s string) string {
	first := true // the next word starts a sentence
	depth := 0
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '/' }) {
		word := strings.TrimLeft(f, "(“\"'‘[")
		opens := strings.Count(f, "(") + strings.Count(f, "“")
		closes := strings.Count(f, ")") + strings.Count(f, "”")
		inQuote := depth > 0 || strings.HasPrefix(f, "(") || strings.HasPrefix(f, "“")
		depth += opens - closes
		if depth < 0 {
			depth = 0
		}
		core := strings.TrimRightFunc(word, func(r rune) bool { return unicode.IsPunct(r) && r != '’' })
		startsSentence := first
		end := strings.TrimRight(f, ")”\"’")
		first = strings.HasSuffix(end, ".") || strings.HasSuffix(end, "?") || strings.HasSuffix(end, ":") ||
			strings.HasSuffix(end, ";") || strings.HasSuffix(end, "…")
		if startsSentence || inQuote || core == "" {
			continue
		}
		if needsLower(core) {
			return core
		}
	}
	return ""
}

// needsLower reports whether a word inside a sentence is capitalised
// without being a proper noun, an acronym or a word with digits.
func needsLower(w string) bool {
	rs := []rune(w)
	if !unicode.IsUpper(rs[0]) || ProperNouns[w] || ProperNouns[strings.TrimSuffix(w, "’s")] {
		return false
	}
	upper := 0
	for _, r := range rs {
		if unicode.IsDigit(r) || (!unicode.IsLetter(r) && r != '’' && r != '-') {
			return false
		}
		if unicode.IsUpper(r) {
			upper++
		}
	}
	// FOO and iOS-like mixed case are names, not title case.
	return upper == 1 && len(rs) > 1
}
