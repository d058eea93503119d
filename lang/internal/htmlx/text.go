package htmlx

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// hidden reports the elements that are never shown; their text is dropped (when they are not
// the node asked for).
func hidden(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Template, atom.Noscript, atom.Head, atom.Iframe, atom.Object:
		return true
	}
	return false
}

// block reports the elements whose start and end break the line.
func block(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body, atom.Caption,
		atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Dt,
		atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form, atom.H1, atom.H2,
		atom.H3, atom.H4, atom.H5, atom.H6, atom.Header, atom.Hgroup, atom.Hr, atom.Html,
		atom.Legend, atom.Li, atom.Main, atom.Menu, atom.Nav, atom.Ol, atom.Optgroup, atom.Option,
		atom.P, atom.Pre, atom.Section, atom.Summary, atom.Table, atom.Tbody, atom.Tfoot,
		atom.Thead, atom.Tr, atom.Ul:
		return true
	}
	return false
}

// textBuilder writes visible text with spaces and line breaks decided lazily, so that nothing
// is written before the first or after the last visible character.
type textBuilder struct {
	b        strings.Builder
	space    bool // white space seen since the last character
	newlines int  // line breaks owed before the next character
	pre      int  // depth of <pre> elements: white space is kept inside them
}

// char writes one visible character, preceded by what is owed.
func (t *textBuilder) char(r rune) {
	if t.b.Len() > 0 {
		if t.newlines > 0 {
			for range t.newlines {
				t.b.WriteByte('\n')
			}
		} else if t.space {
			t.b.WriteByte(' ')
		}
	}
	t.space, t.newlines = false, 0
	t.b.WriteRune(r)
}

// text adds the contents of a text node.
func (t *textBuilder) text(s string) {
	for i, r := range s {
		if r == '\u00a0' { // &nbsp; is an ordinary space (docs/DECISIONS.md §10)
			r = ' '
		}
		if t.pre > 0 {
			if r == '\r' {
				if i+1 < len(s) && s[i+1] == '\n' {
					continue
				}
				r = '\n'
			}
			if r == '\n' {
				t.newlines++
				continue
			}
			if r == ' ' || r == '\t' {
				// Inside <pre> a space is content, but never at the very start of the text.
				if t.b.Len() > 0 {
					t.char(r)
				}
				continue
			}
			t.char(r)
			continue
		}
		switch r {
		case ' ', '\t', '\n', '\r', '\f':
			t.space = true
		default:
			t.char(r)
		}
	}
}

// lineBreak makes sure the next character starts a new line (a block boundary).
func (t *textBuilder) lineBreak() { t.newlines = max(t.newlines, 1) }

// String returns the text; what is owed at the end is dropped, as is white space a <pre> left there.
func (t *textBuilder) String() string { return strings.TrimRight(t.b.String(), " \t\n") }

// Text returns the visible text of n (htmlText, docs/DECISIONS.md §5 and §10): entities decoded
// (by the parser), &nbsp; turned into an ordinary space, runs of white space collapsed to one
// space, <br> written as a line break and the start and end of each block element (p, div, li,
// tr, h1…) as one line break, cells (td, th) separated by a space, white space inside <pre>
// kept, the text of script, style, template, noscript, iframe, object and head dropped (unless n
// is itself such an element), comments dropped, no spaces or line breaks at either end.
// Costs one operation per KB of the subtree, charged as it is walked.
func Text(n *html.Node, m Meter) (string, error) {
	var t textBuilder
	mt := meter{m: m}
	err := walk(n, func(c *html.Node) (bool, error) {
		if err := mt.add(weight(c)); err != nil {
			return false, err
		}
		switch c.Type {
		case html.TextNode:
			t.text(c.Data)
		case html.ElementNode:
			if c != n && hidden(c.DataAtom) {
				return false, nil
			}
			switch {
			case c.DataAtom == atom.Br:
				t.newlines++
			case block(c.DataAtom):
				t.lineBreak()
			case c.DataAtom == atom.Td || c.DataAtom == atom.Th:
				t.space = true
			}
			if c.DataAtom == atom.Pre {
				t.pre++
			}
		case html.DocumentNode:
		default: // comments, doctypes
			return false, nil
		}
		return true, nil
	}, func(c *html.Node) {
		if c.Type != html.ElementNode || (c != n && hidden(c.DataAtom)) {
			return
		}
		switch {
		case block(c.DataAtom):
			t.lineBreak()
		case c.DataAtom == atom.Td || c.DataAtom == atom.Th:
			t.space = true
		}
		if c.DataAtom == atom.Pre {
			t.pre--
		}
	})
	if err != nil {
		return "", err
	}
	return t.String(), nil
}
