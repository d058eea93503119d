package stdlib

import (
	"context"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/internal/workcount"
)

// Finding every match is a loop of searches, each from where the last match ended, and RE2's
// search from position p may read to the end of the text before it answers (the pattern
// (a|b)*c keeps a thread alive over any run of a and b), so the loop's work is not one scan
// of the text but the sum of what each search reads: up to quadratic. regexp's FindAll hides
// that sum, so findAll runs each search over a scanReader instead, which charges every byte
// the engine reads before handing it over. The first len(s) bytes read were paid for by the
// one scan textAndRegex charged; every KB read past them costs the same again. A search that
// reads only its match (the common case) makes the total about one scan, as before.

// scanReader hands the text to RE2 one rune at a time from pos, charging c for each KB read
// past what is paid. When a charge fails, or the run's context ends, it records the error and
// reports the end of the text, so that the search stops within a KB; its answer is then
// dropped.
type scanReader struct {
	c     *expr.Call
	ctx   context.Context
	s     string
	pos   int
	read  int // bytes read by all searches of the call, and skipped to a literal prefix
	paid  int // bytes of reading paid for
	next  int // read at which to look at the context (every KB) or pay again
	perKB int // operations per KB read
	err   error
}

// ReadRune returns the rune at pos, as regexp decodes a string (an invalid byte is
// utf8.RuneError of width 1), or io.EOF at the end of the text or once the budget is out.
func (r *scanReader) ReadRune() (rune, int, error) {
	if r.pos >= len(r.s) || r.err != nil {
		return 0, 0, io.EOF
	}
	if r.read >= r.next && !r.check() {
		return 0, 0, io.EOF
	}
	c := r.s[r.pos]
	if c < utf8.RuneSelf {
		r.pos++
		r.read++
		return rune(c), 1, nil
	}
	x, w := utf8.DecodeRuneInString(r.s[r.pos:])
	r.pos += w
	r.read += w
	return x, w, nil
}

// check looks at the run's context, which RE2 cannot, and pays for the next KB when the
// reading has used what was paid; false (with err set) when either refuses. It runs every KB
// read, so a cancelled run stops within a KB even inside the scan paid for up front.
func (r *scanReader) check() bool {
	if err := r.ctx.Err(); err != nil {
		r.err = expr.Limitf("stopped: %v", err)
		return false
	}
	if r.read >= r.paid && !r.pay() {
		return false
	}
	r.next = min(r.read+1024, r.paid)
	return true
}

// pay charges one more KB of reading; false (with err set) when the budget refuses it.
func (r *scanReader) pay() bool {
	if err := r.c.Charge(r.perKB); err != nil {
		r.err = err
		return false
	}
	r.paid += 1024
	return true
}

// skipTo moves pos to the next occurrence of prefix, looking only at bytes already paid for
// (paying a KB at a time past them); false when there is none or the budget is out.
func (r *scanReader) skipTo(prefix string) bool {
	for {
		end := min(len(r.s), r.pos+r.paid-r.read)
		if end-r.pos >= len(prefix) {
			if i := strings.Index(r.s[r.pos:end], prefix); i >= 0 {
				r.pos += i
				r.read += i
				return true
			}
			if end == len(r.s) {
				r.read += end - r.pos
				return false
			}
			adv := end - r.pos - len(prefix) + 1
			r.pos += adv
			r.read += adv
		} else if end == len(r.s) {
			return false
		}
		if !r.pay() {
			return false
		}
	}
}

// leftContext reports whether a pattern has an assertion that looks at the text before the
// position it is tried at (^, \A, \b, \B), which a search started mid-text must be shown.
func leftContext(cleaned string) (*syntax.Regexp, bool) {
	if !strings.ContainsAny(cleaned, `^\`) {
		return nil, false
	}
	t, err := syntax.Parse(cleaned, syntax.Perl)
	if err != nil {
		return nil, false
	}
	var walk func(*syntax.Regexp) bool
	walk = func(n *syntax.Regexp) bool {
		switch n.Op {
		case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			return true
		}
		for _, s := range n.Sub {
			if walk(s) {
				return true
			}
		}
		return false
	}
	return t, walk(t)
}

// findAll returns the submatch indexes of every match of re in s, as
// re.FindAllStringSubmatchIndex(s, -1) does, charging c before each search for its slots
// (1 + (groups+1)/16 operations) and, through a scanReader, for every byte the searches read
// (one operation per KB, times the program's size in expr.RegexScanInstPerOp units), the
// first len(s) bytes having been paid for by textAndRegex. The list never outgrows the
// budget, nor does the reading.
func findAll(c *expr.Call, re *regexp.Regexp, prog int, s string) ([][]int, error) {
	per := 1 + (re.NumSubexp()+1)/16
	r := &scanReader{c: c, ctx: c.Context(), s: s, paid: kilo(len(s)) * 1024, perKB: 1 + prog/expr.RegexScanInstPerOp}
	defer func() { workcount.Add(max(0, r.read-len(s)) * prog / 256) }()
	// after finds the pattern's first match from a position past 0 with the rune before it
	// as context: (?s:.)(?:pattern) searched from that rune. Only a pattern that looks left
	// needs it; the others are searched from the position itself.
	var after *regexp.Regexp
	if t, ok := leftContext(re.String()); ok {
		a, _, err := c.RegexpProg("(?s:.)(?:" + t.String() + ")")
		if err != nil || a.NumSubexp() != re.NumSubexp() {
			return findAllBounded(c, re, prog, s, per)
		}
		after = a
	}
	prefix, _ := re.LiteralPrefix()
	var ms [][]int
	for pos, prevEnd := 0, -1; pos <= len(s); {
		if err := c.Charge(per); err != nil {
			return nil, err
		}
		start := pos
		if prefix != "" {
			r.pos = pos
			if !r.skipTo(prefix) {
				if r.err != nil {
					return nil, r.err
				}
				break
			}
			start = r.pos
		}
		var m []int
		if after == nil || start == 0 {
			r.pos = start
			m = re.FindReaderSubmatchIndex(r)
			shift(m, start)
		} else {
			_, w := utf8.DecodeLastRuneInString(s[:start])
			r.pos = start - w
			m = after.FindReaderSubmatchIndex(r)
			if m != nil {
				shift(m, start-w)
				_, w := utf8.DecodeRuneInString(s[m[0]:])
				m[0] += w
			}
		}
		if r.err != nil {
			return nil, r.err
		}
		if m == nil {
			break
		}
		accept := true
		if m[1] == pos {
			// An empty match: none is allowed right after a match; move on a rune.
			accept = m[0] != prevEnd
			if _, w := utf8.DecodeRuneInString(s[pos:]); w > 0 {
				pos += w
			} else {
				pos = len(s) + 1
			}
		} else {
			pos = m[1]
		}
		prevEnd = m[1]
		if accept {
			ms = append(ms, m)
		}
	}
	return ms, nil
}

// shift turns indexes read from position base into indexes in the text.
func shift(m []int, base int) {
	for i, v := range m {
		if v >= 0 {
			m[i] = v + base
		}
	}
}

// findAllBounded is findAll for a pattern whose search from mid-text could not be built (its
// printed form is past MaxRegexLen): regexp's own loop, with no more searches than the budget
// pays for at a whole scan of the text each, charged before the list is kept.
func findAllBounded(c *expr.Call, re *regexp.Regexp, prog int, s string, per int) ([][]int, error) {
	each := per + matchCost(s, prog)
	most := c.Remaining()/each + 1
	var ms [][]int
	if err := scan(c, s, func() { ms = re.FindAllStringSubmatchIndex(s, most) }); err != nil {
		return nil, err
	}
	workcount.Add(len(ms) * len(s) * prog / 256)
	if err := c.Charge(len(ms) * each); err != nil {
		return nil, err
	}
	return ms, nil
}
