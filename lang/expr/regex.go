package expr

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxRegexLen is the longest regex pattern accepted, in bytes (SPEC-DECISIONS §2).
const MaxRegexLen = 1000

// RegexError is a refused or invalid pattern; Offset is the byte offset in the pattern of the
// problem (-1 when unknown).
type RegexError struct {
	Offset int
	Msg    string
}

// Error returns the message, which names the construct and its position in the pattern.
func (e *RegexError) Error() string { return e.Msg }

// Regexp compiles pattern as RE2 (SPEC-DECISIONS §2): inline flags (?i) (?m) (?s), and (?u),
// which is accepted and ignored since RE2 is always Unicode; at most 1,000 bytes. Look-around
// and back-references are refused with a message saying where. Compiled patterns are cached
// per plugin (all layers of an Env share the cache). The error is a *RegexError.
func (e *Env) Regexp(pattern string) (*regexp.Regexp, error) {
	sh := e.shared
	sh.reMu.Lock()
	ent := sh.regexes[pattern]
	sh.reMu.Unlock()
	if ent != nil {
		return ent.re, ent.err
	}
	re, err := compileRegex(pattern)
	sh.reMu.Lock()
	if len(sh.regexes) < maxRegexCache {
		sh.regexes[pattern] = &regexEntry{re: re, err: err}
	}
	sh.reMu.Unlock()
	return re, err
}

func compileRegex(pattern string) (*regexp.Regexp, error) {
	if len(pattern) > MaxRegexLen {
		return nil, &RegexError{Offset: -1, Msg: fmt.Sprintf("regex is too long (%d bytes, the limit is %d)", len(pattern), MaxRegexLen)}
	}
	cleaned, err := scanRegex(pattern)
	if err != nil {
		return nil, err
	}
	re, cerr := regexp.Compile(cleaned)
	if cerr != nil {
		msg := strings.TrimPrefix(cerr.Error(), "error parsing regexp: ")
		return nil, &RegexError{Offset: -1, Msg: "invalid regex: " + msg}
	}
	return re, nil
}

// scanRegex refuses what RE2 cannot do, with the offset, and drops the `u` flag from inline
// flag groups.
func scanRegex(p string) (string, error) {
	var out strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			n := p[i+1]
			if !inClass && n >= '1' && n <= '9' {
				return "", &RegexError{Offset: i, Msg: fmt.Sprintf("back-reference '\\%c' at offset %d is not supported (regexes are RE2: no back-references)", n, i)}
			}
			if n == 'k' && i+2 < len(p) && p[i+2] == '<' {
				return "", &RegexError{Offset: i, Msg: fmt.Sprintf("named back-reference '\\k<…>' at offset %d is not supported (regexes are RE2: no back-references)", i)}
			}
			out.WriteByte(c)
			out.WriteByte(n)
			i++
			continue
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			if i+1 < len(p) && p[i+1] == ']' { // []] : the ] is literal
				out.WriteString("[]")
				i++
				continue
			}
		case c == '(' && strings.HasPrefix(p[i:], "(?"):
			rest := p[i+2:]
			for _, la := range []struct{ pre, what string }{
				{"=", "look-ahead '(?='"}, {"!", "negative look-ahead '(?!'"},
				{"<=", "look-behind '(?<='"}, {"<!", "negative look-behind '(?<!'"},
			} {
				if strings.HasPrefix(rest, la.pre) {
					return "", &RegexError{Offset: i, Msg: fmt.Sprintf("%s at offset %d is not supported (regexes are RE2: no look-around)", la.what, i)}
				}
			}
			// Inline flags (?imsu) or (?imsu:…): drop u.
			j := 0
			for j < len(rest) && strings.IndexByte("imsuU-", rest[j]) >= 0 {
				j++
			}
			if j > 0 && j < len(rest) && (rest[j] == ')' || rest[j] == ':') {
				flags := strings.ReplaceAll(rest[:j], "u", "")
				if flags == "" || flags == "-" {
					if rest[j] == ')' {
						i += 2 + j // (?u) vanishes
						continue
					}
					out.WriteString("(?:")
					i += 2 + j
					continue
				}
				out.WriteString("(?" + strings.TrimSuffix(flags, "-") + string(rest[j]))
				i += 2 + j
				continue
			}
		}
		out.WriteByte(c)
	}
	return out.String(), nil
}
