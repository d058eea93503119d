package interp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// buildRequest renders a request's templates into an httpReq
// (docs/DECISIONS.md §6): query and headers are objects whose null values are
// left out and whose list values repeat the name; body is text, json is
// sent as application/json, form as application/x-www-form-urlencoded.
func (r *run) buildRequest(ctx context.Context, s expr.Vars, rq *plugin.Request) (*httpReq, error) {
	u, err := r.renderText(ctx, s, rq.URL)
	if err != nil {
		return nil, err
	}
	h := &httpReq{Campus: rq.Campus, Method: rq.Method, URL: u, Timeout: rq.Timeout}
	if h.Method == "" {
		h.Method = "GET"
	}
	q, err := rq.Query.Render(ctx, s, r.budget)
	if err != nil {
		return nil, err
	}
	if h.Query, err = params("query", q, expr.ContextCharger(ctx, r.budget)); err != nil {
		return nil, err
	}
	hd, err := rq.Headers.Render(ctx, s, r.budget)
	if err != nil {
		return nil, err
	}
	if h.Headers, err = params("headers", hd, expr.ContextCharger(ctx, r.budget)); err != nil {
		return nil, err
	}
	switch {
	case rq.Body != nil:
		b, err := r.renderText(ctx, s, rq.Body)
		if err != nil {
			return nil, err
		}
		h.Body, h.ContentType = []byte(b), "text/plain; charset=utf-8"
	case rq.JSON != nil:
		v, err := rq.JSON.Render(ctx, s, r.budget)
		if err != nil {
			return nil, err
		}
		b, err := expr.EncodeJSON(v, "", expr.MaxText, expr.ContextCharger(ctx, r.budget))
		if err != nil {
			return nil, walkErr(ctx, err, "request json")
		}
		h.Body, h.ContentType = b, "application/json"
	case rq.Form != nil:
		v, err := rq.Form.Render(ctx, s, r.budget)
		if err != nil {
			return nil, err
		}
		ps, err := params("form", v, expr.ContextCharger(ctx, r.budget))
		if err != nil {
			return nil, err
		}
		h.Body, h.ContentType = []byte(formEncode(ps)), "application/x-www-form-urlencoded"
	}
	return h, nil
}

// params turns a rendered query, headers or form object into name/value
// pairs in written order.
func params(what string, v any, ch expr.Charger) ([]param, error) {
	if v == nil {
		return nil, nil
	}
	o, ok := v.(*expr.Object)
	if !ok {
		return nil, errf(KindExpression, "request %s: expected an object, got %s", what, expr.Describe(v))
	}
	var out []param
	for _, k := range o.Keys() {
		x, _ := o.Get(k)
		vals, isList := x.([]any)
		if !isList {
			vals = []any{x}
		}
		for _, e := range vals {
			if e == nil {
				continue
			}
			t, err := expr.TextOf(e, expr.MaxText, ch)
			if err != nil {
				return nil, walkErr(nil, err, "request "+what+"."+k)
			}
			out = append(out, param{k, t})
		}
	}
	return out, nil
}

func formEncode(ps []param) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(encodeURIComponent(p.Name) + "=" + encodeURIComponent(p.Value))
	}
	return b.String()
}

// where names a request in messages.
func (h *httpReq) where() string {
	if h.Campus != "" {
		return "campus " + h.Campus + " " + h.fullURL()
	}
	return h.fullURL()
}

// send sends h and reads the reply as `as` says, remembering the reply's
// URL under let for extract's url pipe.
func (r *run) send(ctx context.Context, h *httpReq, as, let string) (any, *reply, error) {
	rep, err := r.net.do(ctx, h)
	if err != nil {
		return nil, nil, err
	}
	// Reading a reply is work in proportion to its size (docs/DECISIONS.md §2).
	if err := r.budget.Charge(1 + len(rep.Body)/1024); err != nil {
		return nil, nil, err
	}
	v, err := readAsCharged(ctx, rep, as, h.where(), r.budget)
	if err != nil {
		return nil, nil, err
	}
	r.mu.Lock()
	r.lastURL = rep.URL
	if let != "" {
		r.replyAt[let] = rep.URL
	}
	if n, ok := v.(*expr.Node); ok {
		r.docURL[n.N] = rep.URL
	}
	r.mu.Unlock()
	return v, rep, nil
}

// request runs a request step.
func (r *run) request(ctx context.Context, s expr.Vars, rq *plugin.Request, as, let string) (any, error) {
	h, err := r.buildRequest(ctx, s, rq)
	if err != nil {
		return nil, err
	}
	v, _, err := r.send(ctx, h, as, let)
	return v, err
}

// each runs its body once per item of a list of at most MaxEachItems, with
// up to Concurrency items at once, and returns the results in list order
// (seed 004 "Steps"; docs/DECISIONS.md §6). The first failure cancels the
// items still running and is the step's error.
func (r *run) each(ctx context.Context, s *scope, st *plugin.Step, depth int) (any, error) {
	lv, err := r.eval(ctx, s, st.Each)
	if err != nil {
		return nil, err
	}
	list, ok := lv.([]any)
	if !ok {
		return nil, errf(KindExpression, "each: expected a list, got %s", expr.Describe(lv))
	}
	if len(list) > MaxEachItems {
		return nil, limitErr("each", fmt.Sprintf("%d items", len(list)), fmt.Sprint(MaxEachItems))
	}
	conc := st.Concurrency
	if conc > MaxConcurrent {
		return nil, limitErr("each", fmt.Sprintf("concurrency %d", conc), fmt.Sprint(MaxConcurrent))
	}
	if conc < 1 {
		conc = 1
	}
	out := make([]any, len(list))
	one := func(ctx context.Context, i int) error {
		c := s.child()
		c.set("item", list[i])
		c.set("index", float64(i))
		var v any
		var err error
		switch {
		case st.Request != nil:
			v, err = r.request(ctx, c, st.Request, st.As, "")
		case st.Value != nil:
			v, err = r.eval(ctx, c, st.Value)
		default:
			v, err = r.runSteps(ctx, c, st.Steps, depth)
			if err == nil && st.Return != nil {
				v, err = r.eval(ctx, c, st.Return)
			}
		}
		if err != nil {
			return err
		}
		out[i] = v
		return nil
	}
	if conc == 1 {
		for i := range list {
			if err := one(ctx, i); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     int
	)
	errEachFailed := errors.New("another item of each failed")
	for range min(conc, len(list)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := firstErr != nil
				mu.Unlock()
				if stop || i >= len(list) {
					return
				}
				if err := one(ctx, i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel(errEachFailed)
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// paginate repeats a request while `next` gives another page (seed 004
// "Steps"; docs/DECISIONS.md §6, §10). It stops quietly when next is null,
// when next repeats a request already made, or after max pages; without a
// written max, needing a 31st page is a limit error.
func (r *run) paginate(ctx context.Context, s *scope, st *plugin.Step) (any, error) {
	pg := st.Paginate
	max := pg.Max
	explicit := max > 0
	if max > MaxPages {
		return nil, limitErr("paginate", fmt.Sprintf("max %d pages", max), fmt.Sprint(MaxPages))
	}
	if !explicit {
		max = MaxPages
	}
	h, err := r.buildRequest(ctx, s, pg.Request)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	items := []any{}
	for pageIndex := 0; ; pageIndex++ {
		seen[h.identity()] = true
		page, rep, err := r.send(ctx, h, st.As, "")
		if err != nil {
			return nil, err
		}
		c := s.child()
		c.set("page", page)
		c.set("pageIndex", float64(pageIndex))
		c.set("items", items)
		got, err := r.eval(ctx, c, pg.Items)
		if err != nil {
			return nil, err
		}
		switch g := got.(type) {
		case nil:
		case []any:
			items = append(items[:len(items):len(items)], g...)
		default:
			return nil, errf(KindExpression, "paginate items: expected a list, got %s", expr.Describe(got))
		}
		if pg.Next == nil {
			return items, nil
		}
		c.set("items", items)
		nx, err := r.eval(ctx, c, pg.Next)
		if err != nil {
			return nil, err
		}
		if nx == nil {
			return items, nil
		}
		if pageIndex+1 >= max {
			if explicit {
				return items, nil
			}
			return nil, limitErr("paginate", fmt.Sprintf("more than %d pages", MaxPages), fmt.Sprint(MaxPages))
		}
		if h, err = nextRequest(h, rep.URL, nx, expr.ContextCharger(ctx, r.budget)); err != nil {
			return nil, err
		}
		if seen[h.identity()] {
			return items, nil
		}
	}
}

// identity is what makes two requests the same for paginate's repeat check.
func (h *httpReq) identity() string {
	return h.Campus + " " + h.Method + " " + h.fullURL() + "\n" + string(h.Body)
}

// nextRequest applies paginate's next value to the previous request: a URL
// string (resolved against the reply's URL) replaces the URL and its query;
// an object merges query and headers key by key (null removes a key) and
// replaces url, method, body, json and form (docs/DECISIONS.md §10).
func nextRequest(prev *httpReq, replyURL string, nx any, ch expr.Charger) (*httpReq, error) {
	h := *prev
	h.Query = append([]param(nil), prev.Query...)
	h.Headers = append([]param(nil), prev.Headers...)
	switch v := nx.(type) {
	case string:
		u, err := resolveRef(&h, replyURL, v)
		if err != nil {
			return nil, err
		}
		h.URL, h.Query = u, nil
		return &h, nil
	case *expr.Object:
		for _, k := range v.Keys() {
			x, _ := v.Get(k)
			switch k {
			case "url":
				sv, ok := x.(string)
				if !ok {
					return nil, errf(KindExpression, "paginate next.url: expected a string, got %s", expr.Describe(x))
				}
				u, err := resolveRef(&h, replyURL, sv)
				if err != nil {
					return nil, err
				}
				h.URL = u
			case "method":
				sv, ok := x.(string)
				if !ok {
					return nil, errf(KindExpression, "paginate next.method: expected a string, got %s", expr.Describe(x))
				}
				m, ok := plugin.RequestMethod(sv)
				if !ok {
					return nil, errf(KindHTTP, "paginate next.method: %q is not a method a request may use (GET, POST, PUT, PATCH, DELETE or HEAD)", sv)
				}
				h.Method = m
			case "query", "headers":
				o, ok := x.(*expr.Object)
				if !ok {
					return nil, errf(KindExpression, "paginate next.%s: expected an object, got %s", k, expr.Describe(x))
				}
				dst := &h.Query
				if k == "headers" {
					dst = &h.Headers
				}
				for _, name := range o.Keys() {
					val, _ := o.Get(name)
					ps, err := params("next."+k, objectOf(name, val), ch)
					if err != nil {
						return nil, err
					}
					*dst = mergeParam(*dst, name, ps, k == "headers")
				}
			case "body":
				t, err := expr.TextOf(x, expr.MaxText, ch)
				if err != nil {
					return nil, walkErr(nil, err, "paginate next.body")
				}
				h.Body, h.ContentType = []byte(t), "text/plain; charset=utf-8"
			case "json":
				b, err := expr.EncodeJSON(x, "", expr.MaxText, ch)
				if err != nil {
					return nil, walkErr(nil, err, "paginate next.json")
				}
				h.Body, h.ContentType = b, "application/json"
			case "form":
				ps, err := params("next.form", x, ch)
				if err != nil {
					return nil, err
				}
				h.Body, h.ContentType = []byte(formEncode(ps)), "application/x-www-form-urlencoded"
			default:
				return nil, errf(KindExpression, "paginate next: unknown field %q (use url, method, query, headers, body, json or form)", k)
			}
		}
		return &h, nil
	}
	return nil, errf(KindExpression, "paginate next: expected null, a URL string or an object, got %s", expr.Describe(nx))
}

func objectOf(k string, v any) *expr.Object {
	o := expr.NewObject(1)
	o.Set(k, v)
	return o
}

// mergeParam replaces the values of name in ps with repl, keeping the place
// of its first occurrence; with no earlier occurrence repl is appended.
// Header names compare case-insensitively.
func mergeParam(ps []param, name string, repl []param, fold bool) []param {
	same := func(a string) bool {
		if fold {
			return strings.EqualFold(a, name)
		}
		return a == name
	}
	out := make([]param, 0, len(ps)+len(repl))
	placed := false
	for _, p := range ps {
		if !same(p.Name) {
			out = append(out, p)
			continue
		}
		if !placed {
			out = append(out, repl...)
			placed = true
		}
	}
	if !placed {
		out = append(out, repl...)
	}
	return out
}

// resolveRef resolves a next URL: for a public request against the reply's
// URL; for a campus request it must stay a path.
func resolveRef(h *httpReq, base, ref string) (string, error) {
	if h.Campus != "" {
		if !strings.HasPrefix(ref, "/") {
			return "", errf(KindHTTP, "paginate next: campus %s takes a path starting with /, got %q", h.Campus, ref)
		}
		return ref, nil
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", errf(KindHTTP, "paginate next: bad base URL %q", base)
	}
	u, err := b.Parse(ref)
	if err != nil {
		return "", errf(KindHTTP, "paginate next: bad URL %q: %v", ref, unwrapURLErr(err))
	}
	return u.String(), nil
}

// walkErr reports an error of a charged walk over a value (its JSON or text) in
// where: the budget's, the run's deadline's and the size limit's are of kind
// limit, anything else of kind expression.
func walkErr(ctx context.Context, err error, where string) *Error {
	if ctx != nil {
		if e := ctxErr(ctx); e != nil {
			return e
		}
	}
	var re *expr.RuntimeError
	if errors.As(err, &re) && re.Kind == KindLimit {
		return &Error{Kind: KindLimit, Msg: where + ": " + re.Msg, err: err}
	}
	if errors.Is(err, expr.ErrTooLarge) || errors.Is(err, expr.ErrBudget) {
		return &Error{Kind: KindLimit, Msg: where + ": " + err.Error(), err: err}
	}
	return errf(KindExpression, "%s: %v", where, err)
}
