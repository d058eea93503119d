package htmlx

import (
	"container/list"
	"fmt"
	"strings"
	"sync"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// MaxSelector is the longest CSS selector accepted, in bytes.
const MaxSelector = 1000

// Selector is a compiled CSS selector group (a, b > c, d:nth-child(2)).
type Selector struct {
	src   string
	group cascadia.SelectorGroup
	// deep counts the pseudo-classes that look inside each candidate's subtree (:has, :contains,
	// :matches and their Own forms), which make matching cost the subtree's size.
	deep int
	// complex holds group's selectors split into steps for the memoized matcher (match.go),
	// nil for one matched by cascadia directly (no descendant or '~' step: bounded by its
	// length per element).
	complex []*complexSel
	// nested counts the descendant combinators inside pseudo-classes (at most one each).
	nested int
	// steps is the number of compound selectors of each selector of the group.
	steps []int
}

// String returns the selector's source.
func (s *Selector) String() string { return s.src }

// Compile parses a CSS selector group with cascadia. The error says what is wrong, quoting the
// selector: bad CSS selector "div[": …
func Compile(css string) (*Selector, error) {
	if len(css) > MaxSelector {
		return nil, fmt.Errorf("CSS selector is %d bytes, the limit is %d", len(css), MaxSelector)
	}
	if strings.TrimSpace(css) == "" {
		return nil, fmt.Errorf("empty CSS selector")
	}
	g, err := cascadia.ParseGroup(css)
	if err != nil {
		return nil, fmt.Errorf("bad CSS selector %q: %v", css, err)
	}
	deep := 0
	for _, p := range []string{":has(", ":contains", ":matches"} {
		deep += strings.Count(strings.ToLower(css), p)
	}
	nested, err := checkNested(css)
	if err != nil {
		return nil, fmt.Errorf("CSS selector %q: %v", css, err)
	}
	s := &Selector{src: css, group: g, deep: deep, nested: nested}
	parts := splitGroup(css)
	if len(parts) != len(g) {
		return nil, fmt.Errorf("CSS selector %q is too complex to match in bounded time", css)
	}
	s.complex = make([]*complexSel, len(g))
	s.steps = make([]int, len(g))
	for i, p := range parts {
		_, combs := splitSteps(p)
		s.steps[i] = max(len(combs), 1)
		cs, err := compileComplex(p, g[i])
		if err == nil {
			s.complex[i] = cs
			continue
		}
		for _, c := range combs {
			if c == ' ' || c == '~' {
				return nil, fmt.Errorf("CSS selector %q is too complex to match in bounded time", css)
			}
		}
		// Without a descendant or '~' step cascadia does not backtrack: matched as it is.
	}
	return s, nil
}

// queryState is one query's matchers, one per selector of the group.
type queryState struct {
	s  *Selector
	ms []*matcher
	mt *meter
}

func (s *Selector) newQuery(mt *meter) *queryState {
	q := &queryState{s: s, mt: mt, ms: make([]*matcher, len(s.group))}
	for i, cs := range s.complex {
		if cs != nil {
			q.ms[i] = newMatcher(cs, mt, s.nested)
		}
	}
	return q
}

// match reports whether element n matches the group, charging each step tried.
func (q *queryState) match(n *html.Node) (bool, error) {
	// The walk's charge for n (its weight) pays for one evaluation: a plain selector such as
	// "p" costs what the walk costs.
	for i, sel := range q.s.group {
		if m := q.ms[i]; m != nil {
			ok, err := m.matchPaid(len(m.cs.steps)-1, n, i == 0)
			if err != nil || ok {
				return ok, err
			}
			continue
		}
		// Matched by cascadia: at most one evaluation per step (only '>' and '+').
		w := evalWeight(n, q.s.nested, false) * q.s.steps[i]
		if i == 0 {
			w -= stepWeight
		}
		if err := q.mt.add(w); err != nil {
			return false, err
		}
		if sel.Match(n) {
			return true, nil
		}
	}
	return false, nil
}

// subtreeSize counts the nodes under n (n included).
func subtreeSize(n *html.Node) int {
	size := 0
	_ = walk(n, func(*html.Node) (bool, error) { size++; return true, nil }, nil)
	return size
}

// query walks the descendants of root (not root itself, as querySelectorAll) in document order
// and collects the elements that match, stopping after limit matches when limit > 0. Each node
// walked costs its weight; for a deep selector each candidate element also costs its subtree
// (times the number of deep pseudo-classes), since matching it reads that subtree. The walk is
// written out rather than built on walk: it is the hot path of select and first.
func (s *Selector) query(root *html.Node, m Meter, limit int) ([]*html.Node, error) {
	var out []*html.Node
	mt := meter{m: m}
	q := s.newQuery(&mt)
	if err := mt.add(weight(root)); err != nil {
		return nil, err
	}
	n := root.FirstChild
	for n != nil {
		if err := mt.add(weight(n)); err != nil {
			return nil, err
		}
		if n.Type == html.ElementNode {
			if s.deep > 0 && m != nil {
				if err := mt.add(s.deep * subtreeSize(n) * elementWeight); err != nil {
					return nil, err
				}
			}
			ok, err := q.match(n)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, n)
				if limit > 0 && len(out) >= limit {
					break
				}
			}
		}
		// Next in document order: first child, else the next sibling of n or of an ancestor
		// below root.
		if n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		for n != root && n.NextSibling == nil {
			n = n.Parent
		}
		if n == root {
			break
		}
		n = n.NextSibling
	}
	return out, nil
}

// Select returns the descendants of root that match s, in document order (select). Costs one
// operation per KB walked (see the package comment), charged as it walks.
func (s *Selector) Select(root *html.Node, m Meter) ([]*html.Node, error) {
	return s.query(root, m, 0)
}

// First returns the first descendant of root that matches s, or nil (first). Costs as Select,
// for the part of the tree walked.
func (s *Selector) First(root *html.Node, m Meter) (*html.Node, error) {
	out, err := s.query(root, m, 1)
	if err != nil || len(out) == 0 {
		return nil, err
	}
	return out[0], nil
}

// SelectorCache is a bounded, least-recently-used cache of compiled selectors, safe for
// concurrent use. Errors are not cached.
type SelectorCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *Selector, most recent first
	byKey map[string]*list.Element
}

// NewSelectorCache returns a cache holding at most limit selectors (at least 1).
func NewSelectorCache(limit int) *SelectorCache {
	return &SelectorCache{max: max(limit, 1), order: list.New(), byKey: make(map[string]*list.Element)}
}

// Compile returns the compiled selector for css, from the cache when it is there.
func (c *SelectorCache) Compile(css string) (*Selector, error) {
	c.mu.Lock()
	if e, ok := c.byKey[css]; ok {
		c.order.MoveToFront(e)
		c.mu.Unlock()
		return e.Value.(*Selector), nil
	}
	c.mu.Unlock()
	s, err := Compile(css)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[css]; ok { // compiled meanwhile by another goroutine
		c.order.MoveToFront(e)
		return e.Value.(*Selector), nil
	}
	c.byKey[css] = c.order.PushFront(s)
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*Selector).src)
	}
	return s, nil
}

// Len returns the number of selectors held.
func (c *SelectorCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
