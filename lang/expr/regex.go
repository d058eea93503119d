package expr

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// MaxRegexLen is the longest regex pattern accepted, in bytes (docs/DECISIONS.md §2).
const MaxRegexLen = 1000

// RegexError is a refused or invalid pattern; Offset is the byte offset in the pattern of the
// problem (-1 when unknown).
type RegexError struct {
	Offset int
	Msg    string
}

// Error returns the message, which names the construct and its position in the pattern.
func (e *RegexError) Error() string { return e.Msg }

// Regexp compiles pattern as RE2 (docs/DECISIONS.md §2): inline flags (?i) (?m) (?s), and (?u),
// which is accepted and ignored since RE2 is always Unicode; at most 1,000 bytes. Look-around
// and back-references are refused with a message saying where. Compiled patterns are cached
// per plugin (all layers of an Env share the cache). The error is a *RegexError.
func (e *Env) Regexp(pattern string) (*regexp.Regexp, error) {
	re, _, err := e.regexpCharged(pattern, nil)
	return re, err
}

// RegexpProg is Regexp that also returns the instruction count of the compiled program, for a
// caller that charges a scan (one operation per KB of text per RegexScanInstPerOp
// instructions).
func (e *Env) RegexpProg(pattern string) (*regexp.Regexp, int, error) {
	return e.regexpCharged(pattern, nil)
}

// regexpCharged is Regexp that charges ch for compiling (not for a cache hit): one operation per
// RegexInstPerOp instructions of the program, counted on regexp/syntax's compilation before
// regexp compiles it again.
func (e *Env) regexpCharged(pattern string, ch Charger) (*regexp.Regexp, int, error) {
	sh := e.shared
	sh.reMu.Lock()
	ent := sh.regexes[pattern]
	sh.reMu.Unlock()
	if ent != nil {
		return ent.re, ent.size, ent.err
	}
	re, size, err := compileRegex(pattern, ch)
	var be *BudgetError
	var rte *RuntimeError
	if errors.As(err, &be) || errors.As(err, &rte) {
		return nil, 0, err // not the pattern's fault: not cached
	}
	sh.reMu.Lock()
	if len(sh.regexes) < maxRegexCache {
		sh.regexes[pattern] = &regexEntry{re: re, size: size, err: err}
	}
	sh.reMu.Unlock()
	return re, size, err
}

// Compiled program bounds (docs/DECISIONS.md §2 regexes): a pattern of at most MaxRegexLen bytes
// can still compile to a large program ([a-z]{1000} is 1,000 instructions), and RE2 spends time
// proportional to the program for every byte it scans.
const (
	// MaxRegexInst is the largest compiled program accepted, in regexp/syntax instructions.
	MaxRegexInst = 20_000
	// RegexInstPerOp is how many compiled instructions one operation pays for when a pattern
	// is compiled.
	RegexInstPerOp = 64
	// RegexScanInstPerOp is how many instructions of the program one operation pays for per KB
	// of text scanned: RE2's NFA takes up to ~20 µs per KB per instruction, so one operation
	// stays under ~100 µs however the pattern is built.
	RegexScanInstPerOp = 4
)

// progSize returns the instruction count of the program RE2 compiles for pattern (which
// regexp.Compile accepts), counting Perl flags as regexp.Compile does.
func progSize(cleaned string) (int, error) {
	t, err := syntax.Parse(cleaned, syntax.Perl)
	if err != nil {
		return 0, err
	}
	prog, err := syntax.Compile(t.Simplify())
	if err != nil {
		return 0, err
	}
	return len(prog.Inst), nil
}

func compileRegex(pattern string, ch Charger) (*regexp.Regexp, int, error) {
	if len(pattern) > MaxRegexLen {
		return nil, 0, &RegexError{Offset: -1, Msg: fmt.Sprintf("regex is too long (%d bytes, the limit is %d)", len(pattern), MaxRegexLen)}
	}
	cleaned, err := scanRegex(pattern)
	if err != nil {
		return nil, 0, err
	}
	// Parse and size the program first: a refused pattern costs no second compilation, and
	// the budget pays before regexp builds its own copy.
	n, perr := progSize(cleaned)
	if perr == nil {
		if n > MaxRegexInst {
			return nil, 0, &RegexError{Offset: -1, Msg: fmt.Sprintf("regex compiles to %d instructions, the limit is %d (use fewer or smaller repeats such as {1000})", n, MaxRegexInst)}
		}
		if ch != nil {
			if err := ch.Charge(n / RegexInstPerOp); err != nil {
				return nil, 0, err
			}
		}
	}
	re, cerr := regexp.Compile(cleaned)
	if cerr != nil {
		msg := strings.TrimPrefix(cerr.Error(), "error parsing regexp: ")
		return nil, 0, &RegexError{Offset: -1, Msg: "invalid regex: " + msg}
	}
	return re, n, nil
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
