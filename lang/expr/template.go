package expr

import (
	"context"
	"strings"
	"unsafe"
)

// Template is a parsed template (docs/DECISIONS.md §3): text with ${expr} holes. `$${` writes a
// literal `${`.
type Template struct {
	src   string
	strs  []string // len(strs) == len(exprs)+1
	exprs []*Expr
}

// ParseTemplate parses a template. Each ${…} holds one expression, parsed with the same rules
// and limits as Parse; positions are relative to src. Results are cached by source.
func (e *Env) ParseTemplate(src string) (*Template, error) {
	e.mu.RLock()
	t := e.tmpls[src]
	e.mu.RUnlock()
	if t != nil {
		return t, nil
	}
	t, errs := e.parseTemplate(src)
	if len(errs) > 0 {
		return nil, errs.Err()
	}
	e.mu.Lock()
	if len(e.tmpls) < maxParseCache {
		e.tmpls[src] = t
	}
	e.mu.Unlock()
	return t, nil
}

func (e *Env) parseTemplate(src string) (*Template, ErrorList) {
	t := &Template{src: src}
	var errs ErrorList
	var b strings.Builder
	i := 0
	for i < len(src) {
		j := strings.IndexByte(src[i:], '$')
		if j < 0 {
			b.WriteString(src[i:])
			break
		}
		j += i
		switch {
		case strings.HasPrefix(src[j:], "$${"):
			b.WriteString(src[i:j])
			b.WriteString("${")
			i = j + 3
		case strings.HasPrefix(src[j:], "${"):
			b.WriteString(src[i:j])
			root, end, perrs := parseHole(src, j)
			if len(perrs) > 0 {
				errs = append(errs, perrs...)
				if end < 0 {
					return nil, errs
				}
			}
			t.strs = append(t.strs, b.String())
			b.Reset()
			t.exprs = append(t.exprs, &Expr{src: src[j+2 : max(j+2, end-1)], full: src, root: root, env: e, limit: 1<<63 - 1})
			i = end
		default:
			b.WriteString(src[i : j+1])
			i = j + 1
		}
	}
	t.strs = append(t.strs, b.String())
	return t, errs
}

// parseHole parses the expression of the ${ at src[at] and returns it with the offset after its
// closing }, or -1 when the template cannot be read further.
func parseHole(src string, at int) (root node, end int, errs ErrorList) {
	p := newParser(src, at+2)
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			root, end, errs = nil, -1, p.errs
		}
	}()
	p.next()
	if p.is("}") {
		p.fail(posAt(src, at), "empty ${} in template")
	}
	if p.tok.kind == tEOF {
		p.fail(posAt(src, at), "unterminated '${' in template: missing '}'")
	}
	root = p.parseAssign(false)
	if !p.is("}") {
		if p.tok.kind == tEOF {
			p.fail(posAt(src, at), "unterminated '${' in template: missing '}'")
		}
		p.fail(p.tok.pos, "expected '}' to close '${', found %s", describeTok(p.tok))
	}
	if p.tok.end-at > MaxSourceLen {
		p.errorf(posAt(src, at), "expression is too long (%d bytes, the limit is %d)", p.tok.end-at, MaxSourceLen)
	}
	if len(p.errs) == 0 {
		compileFast(root)
	}
	return root, p.tok.end, p.errs
}

// Source returns the template's text.
func (t *Template) Source() string { return t.src }

// IsSingle reports whether the template is exactly one ${expr} with no text around it; such a
// template renders to the value itself, keeping its type (docs/DECISIONS.md §3).
func (t *Template) IsSingle() bool {
	return len(t.exprs) == 1 && t.strs[0] == "" && t.strs[1] == ""
}

// IsConstant reports whether the template has no ${…} at all.
func (t *Template) IsConstant() bool { return len(t.exprs) == 0 }

// Exprs returns the template's expressions in order.
func (t *Template) Exprs() []*Expr { return t.exprs }

// Render evaluates the template: the value itself when IsSingle, otherwise a string where each
// ${expr} is replaced by its text (strings as they are, numbers as in JavaScript, null as empty,
// lists and objects as JSON; a node is an error). Errors are *RuntimeError with positions in
// the template source.
func (t *Template) Render(ctx context.Context, vars Vars, b *Budget) (result any, err error) {
	if len(t.exprs) == 0 {
		return t.strs[0], nil
	}
	if b == nil {
		b = NewBudget(DefaultBudget)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	st := &state{ctx: ctx, vars: vars, b: b, scope: t.exprs[0]}
	defer st.finish(&result, &err)
	if t.IsSingle() {
		return t.exprs[0].root.eval(st)
	}
	// Evaluate every hole first (in order, charging as before), then build the text in one
	// buffer of the exact size. A number keeps its value and is spelled while writing.
	var textBuf [8]string
	var numBuf [8]float64
	var isNumBuf [8]bool
	texts, nums, isNum := textBuf[:0], numBuf[:0], isNumBuf[:0]
	if len(t.exprs) > len(textBuf) {
		texts, nums, isNum = make([]string, 0, len(t.exprs)), make([]float64, 0, len(t.exprs)), make([]bool, 0, len(t.exprs))
	}
	size := 0
	for _, s := range t.strs {
		size += len(s)
	}
	for _, x := range t.exprs {
		v, err := x.root.eval(st)
		if err != nil {
			return nil, err
		}
		if f, ok := v.(float64); ok {
			texts, nums, isNum = append(texts, ""), append(nums, f), append(isNum, true)
			size += 24 // the longest spelling of a number
			continue
		}
		var text string
		switch v.(type) {
		case []any, *Object:
			if text, err = st.text(v, x.root.Pos()); err != nil {
				return nil, err
			}
		default:
			if text, err = ToText(v); err != nil {
				return nil, &RuntimeError{Pos: x.root.Pos(), Kind: "expression", Msg: err.Error()}
			}
		}
		if size += len(text); size > MaxText {
			return nil, &RuntimeError{Pos: x.root.Pos(), Kind: "limit", Msg: (&SizeError{Limit: MaxText}).Error()}
		}
		size -= len(text)
		if len(text) >= 1024 {
			if err := st.charge(x.root.Pos(), len(text)/1024); err != nil {
				return nil, err
			}
		}
		texts, nums, isNum = append(texts, text), append(nums, 0), append(isNum, false)
		size += len(text)
	}
	buf := make([]byte, 0, size)
	for i, s := range t.strs {
		buf = append(buf, s...)
		if i == len(texts) {
			break
		}
		if isNum[i] {
			buf = appendNumberText(buf, nums[i])
		} else {
			buf = append(buf, texts[i]...)
		}
	}
	return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
}

// Check checks every expression of the template as Expr.Check does; positions are in the
// template source.
func (t *Template) Check(inScope func(name string) bool) ErrorList {
	var errs ErrorList
	for _, x := range t.exprs {
		errs = append(errs, x.Check(inScope)...)
	}
	errs.Sort()
	return errs
}
