// Package htmlx holds the HTML side of the plugin language's standard library (docs/DECISIONS.md §5
// "HTML" and §10 "htmlText", "tableRows"): parsing documents and fragments, visible text, table
// grids with rowspan and colspan expanded, attributes, serialisation and CSS selection.
//
// It is pure Go over golang.org/x/net/html and github.com/andybalholm/cascadia, and knows nothing
// of the expression language; lang/stdlib wraps it as html, select, first, htmlText, attr,
// innerHtml, outerHtml and tableRows. Work is charged to a Meter in units of one operation per
// kilobyte of HTML (docs/DECISIONS.md §2): text bytes count as they are, each element as 32 bytes.
// Walks are iterative, so deeply nested markup cannot exhaust the stack.
package htmlx

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/pkuinfo/harness/lang/internal/workcount"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Meter is charged for work: Charge(n) takes n operations and returns an error (the budget's own)
// when the budget is spent. lang/expr's *Call and *Budget satisfy it. A nil Meter charges nothing.
type Meter interface {
	Charge(n int) error
}

// KB is the number of bytes of HTML or text that cost one operation.
const KB = 1024

// elementWeight is what one element counts for, in bytes, when a walk is charged.
const elementWeight = 32

// meter accumulates weight and charges one operation per KB of it.
type meter struct {
	m   Meter
	acc int
}

// add counts n bytes of work and charges each whole KB.
func (mt *meter) add(n int) error {
	if mt.m == nil {
		return nil
	}
	mt.acc += n
	if mt.acc >= KB {
		ops := mt.acc / KB
		mt.acc %= KB
		return mt.m.Charge(ops)
	}
	return nil
}

// chargeBytes charges one operation per started KB of n bytes, before the work that reads them.
func chargeBytes(m Meter, n int) error {
	if m == nil {
		return nil
	}
	return m.Charge(n/KB + 1)
}

// ParseKBWeight is what each KB of parsed HTML costs, in operations: the tokenizer's buffers
// and the text nodes' copies come to several bytes of memory per byte of text.
const ParseKBWeight = 4

// NodesPerOp is how many parsed nodes one operation pays for, besides the KB of text: a page of
// "<br>" is 4 bytes per element, each of which is a node of about 200 bytes in memory.
const NodesPerOp = 8

// chargeParse charges for parsing text before the parse: 1 + ParseKBWeight operations per KB
// and one per NodesPerOp nodes the parse may create. Those are two per start tag
// (the element and the text after it) and the formatting elements the parser re-opens: it
// clones every formatting element (<a>, <b>, <font>, …) still open when a block that held it
// ends, so each tag and text can add as many clones as formatting tags are open at that point.
// The scan counts, in one pass, start tags (two nodes), end tags (one: the parser allocates a
// token for each), and for each tag the formatting tags opened and not yet closed by name. It returns the nodes paid for, for chargeNodes.
func chargeParse(m Meter, text string) (int, error) {
	if m == nil {
		return 0, nil
	}
	nodes := estimateNodes(text)
	if err := m.Charge(ParseKBWeight*(len(text)/KB) + 1 + nodes/NodesPerOp); err != nil {
		return 0, err
	}
	return nodes, nil
}

// formatting are the elements the HTML parser's list of active formatting elements holds.
var formatting = map[string]int{"a": 0, "b": 1, "big": 2, "code": 3, "em": 4, "font": 5, "i": 6, "nobr": 7, "s": 8, "small": 9, "strike": 10, "strong": 11, "tt": 12, "u": 13}

// estimateNodes is chargeParse's upper estimate of the nodes parsing text creates, beyond the
// few every document has.
func estimateNodes(text string) int {
	var open [14]int
	unclosed, nodes := 0, 0
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '<')
		if j < 0 || i+j+1 >= len(text) {
			break
		}
		i += j + 1
		end := false
		if text[i] == '/' {
			end = true
			i++
		}
		k := i
		for k < len(text) && k-i < 8 && (text[k]|0x20 >= 'a' && text[k]|0x20 <= 'z') {
			k++
		}
		if k == i {
			if !end && i < len(text) && text[i] == '!' {
				nodes++ // a comment or doctype
			}
			continue
		}
		nodes += unclosed // clones re-opened before this tag or the text after it
		var name [8]byte
		n := copy(name[:], text[i:k])
		for x := range n {
			name[x] |= 0x20
		}
		f, isFmt := formatting[string(name[:n])]
		switch {
		case end && isFmt && open[f] > 0:
			open[f]--
			unclosed--
			nodes++ // an end tag is a token the parser allocates, as a node is
		case end:
			nodes++
		default:
			nodes += 2
			if isFmt {
				open[f]++
				unclosed++
			}
		}
		i = k
	}
	return nodes
}

// chargeNodes charges for the nodes a parse made beyond the paid ones, should the estimate have
// been short (the adoption agency's clones of misnested formatting elements, a few per end
// tag), once the tree exists.
func chargeNodes(m Meter, root *html.Node, paid int) error {
	if m == nil {
		return nil
	}
	n := 0
	_ = walk(root, func(*html.Node) (bool, error) { n++; return true, nil }, nil)
	workcount.Add(2 * n)
	if extra := n - paid - 8; extra > 0 {
		return m.Charge(extra / NodesPerOp)
	}
	return nil
}

// ParseDocument parses text as a whole HTML document (html(text)): the result is a DocumentNode
// with <html>, <head> and <body> as a browser builds them. A leading BOM is dropped and
// entities are decoded. The parse costs 1 + ParseKBWeight operations per KB and one per
// NodesPerOp nodes it may create (see chargeParse), charged before it. The one way it fails is
// markup nesting more
// than 512 elements deep (a limit of golang.org/x/net/html).
func ParseDocument(text string, m Meter) (*html.Node, error) {
	paid, err := chargeParse(m, text)
	if err != nil {
		return nil, err
	}
	doc, err := html.Parse(strings.NewReader(strings.TrimPrefix(text, "\ufeff")))
	if err != nil {
		return nil, parseError(err)
	}
	if err := chargeNodes(m, doc, paid); err != nil {
		return nil, err
	}
	return doc, nil
}

// ParseNode turns an HTML string passed where a node is expected into a node (docs/DECISIONS.md §5:
// "any function that takes a node also takes an HTML string"). A string that starts (after
// spaces, a BOM, comments and an <?xml …?> declaration) with <!DOCTYPE, <html, <head or <body is
// parsed as a document; anything else is parsed as
// a fragment, in the context its first tag needs (a table row in a table body, a cell in a row,
// everything else in <body>), under a DocumentNode of its own — so attr('<a href=x>', 'href')
// and outerHtml('<b>x</b>') see just what was written. Costs as ParseDocument.
func ParseNode(text string, m Meter) (*html.Node, error) {
	head := skipProlog(text)
	for _, p := range []string{"<!doctype", "<html", "<head", "<body"} {
		if hasFoldPrefix(head, p) {
			return ParseDocument(text, m)
		}
	}
	paid, err := chargeParse(m, text)
	if err != nil {
		return nil, err
	}
	ctx := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	switch firstTag(head) {
	case "tr":
		ctx = &html.Node{Type: html.ElementNode, Data: "tbody", DataAtom: atom.Tbody}
	case "td", "th":
		ctx = &html.Node{Type: html.ElementNode, Data: "tr", DataAtom: atom.Tr}
	case "thead", "tbody", "tfoot", "caption", "colgroup", "col":
		ctx = &html.Node{Type: html.ElementNode, Data: "table", DataAtom: atom.Table}
	}
	nodes, err := html.ParseFragment(strings.NewReader(strings.TrimPrefix(text, "\ufeff")), ctx)
	if err != nil {
		return nil, parseError(err)
	}
	doc := &html.Node{Type: html.DocumentNode}
	for _, n := range nodes {
		doc.AppendChild(n)
	}
	if err := chargeNodes(m, doc, paid); err != nil {
		return nil, err
	}
	return doc, nil
}

// parseError words the parser's only failure on a string (more than 512 open elements).
func parseError(err error) error {
	if strings.Contains(err.Error(), "open stack of elements exceeds") {
		return errors.New("cannot parse HTML: elements nest more than 512 deep")
	}
	return fmt.Errorf("cannot parse HTML: %v", err)
}

// skipProlog drops what may come before a page's first tag: a BOM, white space, comments and
// processing instructions such as <?xml version="1.0"?>.
func skipProlog(s string) string {
	s = strings.TrimPrefix(s, "\ufeff")
	for {
		s = strings.TrimLeft(s, " \t\r\n\f")
		switch {
		case strings.HasPrefix(s, "<!--"):
			end := strings.Index(s, "-->")
			if end < 0 {
				return ""
			}
			s = s[end+3:]
		case strings.HasPrefix(s, "<?"):
			end := strings.IndexByte(s, '>')
			if end < 0 {
				return ""
			}
			s = s[end+1:]
		default:
			return s
		}
	}
}

func hasFoldPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// firstTag returns the lower-case name of the start tag at the front of s, or "".
func firstTag(s string) string {
	if len(s) < 2 || s[0] != '<' {
		return ""
	}
	i := 1
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
		i++
	}
	return strings.ToLower(s[1:i])
}

// Element returns the element a node stands for where one element is needed (attr): the node
// itself when it is an element, the first element child of a document, or nil.
func Element(n *html.Node) *html.Node {
	if n == nil {
		return nil
	}
	if n.Type == html.DocumentNode {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode {
				return c
			}
		}
		return nil
	}
	if n.Type != html.ElementNode {
		return nil
	}
	return n
}

// Attr returns the value of the attribute name (ASCII case-insensitive) of the element n stands
// for (see Element), and whether it is present. Entities in the value are already decoded.
func Attr(n *html.Node, name string) (string, bool) {
	v, ok, _ := AttrCharged(n, name, nil)
	return v, ok
}

// AttrCharged is Attr charged to m: each child of a document looked at for its first element
// and each attribute compared count as an element walked (32 bytes; one operation per KB).
func AttrCharged(n *html.Node, name string, m Meter) (string, bool, error) {
	if m != nil && n != nil {
		mt := meter{m: m}
		seen := 0
		if n.Type == html.DocumentNode {
			for c := n.FirstChild; c != nil && c.Type != html.ElementNode; c = c.NextSibling {
				seen++
			}
		}
		if el := Element(n); el != nil {
			seen += len(el.Attr)
		}
		if err := mt.add(seen * elementWeight); err != nil {
			return "", false, err
		}
	}
	el := Element(n)
	if el == nil {
		return "", false, nil
	}
	for _, a := range el.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, name) {
			return a.Val, true, nil
		}
	}
	return "", false, nil
}

// errLimitWriter stops rendering once the meter refuses.
type meteredWriter struct {
	buf bytes.Buffer
	mt  meter
	err error
}

func (w *meteredWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if err := w.mt.add(len(p)); err != nil {
		w.err = err
		return 0, err
	}
	return w.buf.Write(p)
}

// errNoRender is returned when html.Render refuses a tree (it cannot for parsed trees).
var errNoRender = errors.New("cannot serialise this node")

// OuterHTML serialises n with its own tag (outerHtml). A document serialises as a whole. Costs one
// operation per KB written, charged as it is written.
func OuterHTML(n *html.Node, m Meter) (string, error) {
	w := &meteredWriter{mt: meter{m: m}}
	if err := html.Render(w, n); err != nil {
		if w.err != nil {
			return "", w.err
		}
		return "", errNoRender
	}
	return w.buf.String(), nil
}

// InnerHTML serialises the children of n (innerHtml). Costs as OuterHTML.
func InnerHTML(n *html.Node, m Meter) (string, error) {
	w := &meteredWriter{mt: meter{m: m}}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if err := html.Render(w, c); err != nil {
			if w.err != nil {
				return "", w.err
			}
			return "", errNoRender
		}
	}
	return w.buf.String(), nil
}

// walk visits the subtree of root in document order, calling enter for each node and leave for
// each node after its children; enter returning false skips the node's children (leave is still
// called). It uses the tree's own links, not recursion.
func walk(root *html.Node, enter func(*html.Node) (bool, error), leave func(*html.Node)) error {
	n := root
	for {
		descend, err := enter(n)
		if err != nil {
			return err
		}
		if descend && n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		for {
			if leave != nil {
				leave(n)
			}
			if n == root {
				return nil
			}
			if n.NextSibling != nil {
				n = n.NextSibling
				break
			}
			n = n.Parent
		}
	}
}

// weight is what a node counts for when a walk is charged.
func weight(n *html.Node) int {
	if n.Type == html.TextNode {
		return len(n.Data)
	}
	return elementWeight
}
