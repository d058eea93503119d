package stdlib

import (
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/internal/htmlx"
	"golang.org/x/net/html"
)

func init() { extra = append(extra, registerHTML) }

// registerHTML adds the HTML functions of docs/DECISIONS.md §5 "HTML" and §10: html, select, first,
// htmlText, attr, innerHtml, outerHtml and tableRows. Each function that takes a node also takes
// HTML text (parsed as by htmlx.ParseNode) and returns null (select and tableRows: an empty list)
// for null, so a chain over first(…) that found nothing stays null. Work is charged before it
// happens: parsing per KB and per node it may create, walking and writing per KB, selectors per
// (element × step) tried, tables per slot (docs/PLUGIN-LANGUAGE.md "What things cost").
func registerHTML(env *expr.Env) {
	m := expr.Method()
	env.Register("html", fnHTML, m, expr.Args(1, 1))
	env.Register("select", fnSelect, m, expr.Args(2, 2))
	env.Register("first", fnFirst, m, expr.Args(2, 2))
	env.Register("htmlText", fnHTMLText, m, expr.Args(1, 1))
	env.Register("attr", fnAttr, m, expr.Args(2, 2))
	env.Register("innerHtml", fnSerialise(htmlx.InnerHTML), m, expr.Args(1, 1))
	env.Register("outerHtml", fnSerialise(htmlx.OuterHTML), m, expr.Args(1, 1))
	env.Register("tableRows", fnTableRows, m, expr.Args(1, 2))
}

// selectorCacheSize bounds the compiled selectors kept per Env.
const selectorCacheSize = 256

// selectorCaches maps each Env (weakly, so an Env can be collected) to its selector cache.
var selectorCaches sync.Map // weak.Pointer[expr.Env] → *htmlx.SelectorCache

// selectorCache returns env's bounded cache of compiled CSS selectors, making it on first use;
// it is dropped when env is garbage-collected.
func selectorCache(env *expr.Env) *htmlx.SelectorCache {
	key := weak.Make(env)
	if v, ok := selectorCaches.Load(key); ok {
		return v.(*htmlx.SelectorCache)
	}
	v, loaded := selectorCaches.LoadOrStore(key, htmlx.NewSelectorCache(selectorCacheSize))
	if !loaded {
		runtime.AddCleanup(env, func(k weak.Pointer[expr.Env]) { selectorCaches.Delete(k) }, key)
	}
	return v.(*htmlx.SelectorCache)
}

// compileSelector reads argument i as a CSS selector through the Env's cache, charging one
// operation per 100 bytes of it.
func compileSelector(c *expr.Call, args []any, i int) (*htmlx.Selector, error) {
	css, ok := args[i].(string)
	if !ok {
		return nil, fmt.Errorf("argument %d must be a CSS selector string, got %s", i+1, expr.Describe(args[i]))
	}
	if err := c.Charge(1 + len(css)/100); err != nil {
		return nil, err
	}
	return selectorCache(c.Env).Compile(css)
}

// argNode reads argument i as an HTML node: a node, or HTML text parsed now. null reports isNull.
func argNode(c *expr.Call, args []any, i int) (n *html.Node, isNull bool, err error) {
	switch x := args[i].(type) {
	case nil:
		return nil, true, nil
	case *expr.Node:
		if x == nil || x.N == nil {
			return nil, true, nil
		}
		return x.N, false, nil
	case string:
		n, err := htmlx.ParseNode(x, c)
		return n, false, err
	}
	return nil, false, fmt.Errorf("argument %d must be an HTML node or HTML text, got %s", i+1, expr.Describe(args[i]))
}

// fnHTML is html(text) → a document node (docs/DECISIONS.md §5), parsed as a browser parses a page:
// <html>, <head> and <body> are added where missing, entities decoded. A node is returned as it
// is; null gives null.
func fnHTML(c *expr.Call, args []any) (any, error) {
	switch x := args[0].(type) {
	case nil:
		return nil, nil
	case *expr.Node:
		return x, nil
	case string:
		doc, err := htmlx.ParseDocument(x, c)
		if err != nil {
			return nil, err
		}
		return &expr.Node{N: doc}, nil
	}
	return nil, fmt.Errorf("argument 1 must be HTML text, got %s", expr.Describe(args[0]))
}

// fnSelect is select(node, css) → the list of descendants matching css, in document order.
func fnSelect(c *expr.Call, args []any) (any, error) {
	n, isNull, err := argNode(c, args, 0)
	if err != nil {
		return nil, err
	}
	sel, err := compileSelector(c, args, 1)
	if err != nil || isNull {
		if isNull && err == nil {
			return []any{}, nil
		}
		return nil, err
	}
	nodes, err := sel.Select(n, c)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(nodes))
	boxes := make([]expr.Node, len(nodes)) // one allocation for all the node values
	for i, x := range nodes {
		boxes[i].N = x
		out[i] = &boxes[i]
	}
	return out, nil
}

// fnFirst is first(node, css) → the first descendant matching css, or null.
func fnFirst(c *expr.Call, args []any) (any, error) {
	n, isNull, err := argNode(c, args, 0)
	if err != nil {
		return nil, err
	}
	sel, err := compileSelector(c, args, 1)
	if err != nil || isNull {
		return nil, err
	}
	x, err := sel.First(n, c)
	if err != nil || x == nil {
		return nil, err
	}
	return &expr.Node{N: x}, nil
}

// fnHTMLText is htmlText(node) → the visible text (htmlx.Text: entities decoded, &nbsp; a space,
// white space collapsed, <br> and block ends as line breaks, script and style dropped).
func fnHTMLText(c *expr.Call, args []any) (any, error) {
	n, isNull, err := argNode(c, args, 0)
	if err != nil || isNull {
		return nil, err
	}
	s, err := htmlx.Text(n, c)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// fnAttr is attr(node, name) → the attribute's value, or null when the element has none. A
// document or parsed text stands for its first element.
func fnAttr(c *expr.Call, args []any) (any, error) {
	n, isNull, err := argNode(c, args, 0)
	if err != nil {
		return nil, err
	}
	name, err := argString(args, 1)
	if err != nil || isNull {
		return nil, err
	}
	v, ok, err := htmlx.AttrCharged(n, name, c)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	return v, nil
}

// fnSerialise makes innerHtml (the children's HTML) and outerHtml (the node's own HTML).
func fnSerialise(render func(*html.Node, htmlx.Meter) (string, error)) expr.Builtin {
	return func(c *expr.Call, args []any) (any, error) {
		n, isNull, err := argNode(c, args, 0)
		if err != nil || isNull {
			return nil, err
		}
		s, err := render(n, c)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// fnTableRows is tableRows(node, options?) over node when it is a <table>, else over the first
// table inside it (docs/DECISIONS.md §5, §10), with rowspan and colspan expanded:
//
//   - { header: true }: one object per row after the first, keyed by the first row's labels
//     (htmlx.Grid.Labels: colspan repeats a label, repeats get _2, _3, …, an empty one is colN);
//     a slot with no cell is null;
//   - { cells: true }: one list per row of { text, row, col, rowspan, colspan, id } per slot, row
//     and col the slot's 0-based coordinates, id the 0-based index of the source cell in document
//     order, so every slot of a merged cell has that cell's text, spans and id; null where no cell;
//   - no options: one list of cell texts per row (null where no cell).
//
// No table gives an empty list. Unknown options are an error.
func fnTableRows(c *expr.Call, args []any) (any, error) {
	header, cells := false, false
	if len(args) > 1 && args[1] != nil {
		opts, ok := args[1].(*expr.Object)
		if !ok {
			return nil, fmt.Errorf("argument 2 must be an options object such as { header: true }, got %s", expr.Describe(args[1]))
		}
		for _, k := range opts.Keys() {
			v, _ := opts.Get(k)
			switch k {
			case "header":
				header = expr.Truthy(v)
			case "cells":
				cells = expr.Truthy(v)
			default:
				return nil, fmt.Errorf("unknown option '%s' (the options are header and cells)", k)
			}
		}
		if header && cells {
			return nil, fmt.Errorf("choose one of { header: true } and { cells: true }")
		}
	}
	n, isNull, err := argNode(c, args, 0)
	if err != nil {
		return nil, err
	}
	if isNull {
		return []any{}, nil
	}
	table, err := htmlx.FindTableCharged(n, c)
	if err != nil {
		return nil, err
	}
	if table == nil {
		return []any{}, nil
	}
	g, err := htmlx.TableGrid(table, c)
	if err != nil {
		return nil, err
	}
	switch {
	case header:
		return headerRows(c, g)
	case cells:
		return cellRows(g), nil
	}
	return textRows(g), nil
}

func headerRows(c *expr.Call, g *htmlx.Grid) (any, error) {
	labels, err := g.LabelsCharged(c)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, max(len(g.Slots)-1, 0))
	for y := 1; y < len(g.Slots); y++ {
		o := expr.NewObject(g.Width)
		for x, cell := range g.Slots[y] {
			if cell == nil {
				o.Set(labels[x], nil)
			} else {
				o.Set(labels[x], cell.Text)
			}
		}
		out = append(out, o)
	}
	return out, nil
}

func cellRows(g *htmlx.Grid) []any {
	out := make([]any, len(g.Slots))
	for y, slots := range g.Slots {
		row := make([]any, len(slots))
		for x, cell := range slots {
			if cell == nil {
				continue
			}
			o := expr.NewObject(6)
			o.Set("text", cell.Text)
			o.Set("row", float64(y))
			o.Set("col", float64(x))
			o.Set("rowspan", float64(cell.RowSpan))
			o.Set("colspan", float64(cell.ColSpan))
			o.Set("id", float64(cell.ID))
			row[x] = o
		}
		out[y] = row
	}
	return out
}

func textRows(g *htmlx.Grid) []any {
	out := make([]any, len(g.Slots))
	for y, slots := range g.Slots {
		row := make([]any, len(slots))
		for x, cell := range slots {
			if cell != nil {
				row[x] = cell.Text
			}
		}
		out[y] = row
	}
	return out
}
