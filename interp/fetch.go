package interp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/stdlib"
)

// httpReq is one rendered request of a request step (docs/DECISIONS.md §6).
type httpReq struct {
	Campus      string // campus service, or "" for a public request
	Method      string
	URL         string  // absolute https URL, or a path when Campus is set
	Query       []param // appended to URL's own query, in written order
	Headers     []param
	Body        []byte
	ContentType string        // of Body; "" when there is none
	Timeout     time.Duration // 0 = the run's deadline
}

type param struct{ Name, Value string }

// fullURL returns URL with Query appended, each value encoded as
// encodeURIComponent does (docs/DECISIONS.md §10). A query written into the
// URL itself (`?b=${input.building}`) keeps its separators, but bytes that
// may not appear in a query (spaces, non-ASCII text, quotes…) are
// percent-encoded so the request line stays valid.
func (r *httpReq) fullURL() string {
	u := r.URL
	if i := strings.IndexByte(u, '?'); i >= 0 {
		rest, frag, hasFrag := strings.Cut(u[i+1:], "#")
		u = u[:i+1] + escapeQuery(rest)
		if hasFrag {
			u += "#" + frag
		}
	}
	if len(r.Query) == 0 {
		return u
	}
	var b strings.Builder
	base, frag, _ := strings.Cut(u, "#")
	b.WriteString(base)
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
		if strings.HasSuffix(base, "?") || strings.HasSuffix(base, "&") {
			sep = ""
		}
	}
	for _, p := range r.Query {
		b.WriteString(sep)
		b.WriteString(encodeURIComponent(p.Name))
		b.WriteByte('=')
		b.WriteString(encodeURIComponent(p.Value))
		sep = "&"
	}
	if frag != "" {
		b.WriteString("#" + frag)
	}
	return b.String()
}

// escapeQuery percent-encodes the bytes of a raw query that RFC 3986 does
// not allow there, leaving separators and existing %XX escapes alone.
func escapeQuery(q string) string {
	const hex = "0123456789ABCDEF"
	isHex := func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@/?", c) >= 0:
			b.WriteByte(c)
		case c == '%' && i+2 < len(q) && isHex(q[i+1]) && isHex(q[i+2]):
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// encodeURIComponent escapes s as JavaScript's encodeURIComponent does:
// everything but A–Z a–z 0–9 - _ . ! ~ * ' ( ) is percent-encoded as UTF-8.
func encodeURIComponent(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// reply is a response read in full (at most MaxResponse bytes).
type reply struct {
	Status int
	URL    string // after redirects
	Header http.Header
	Body   []byte // raw bytes as received
}

// netClient sends a run's requests: it applies the network allowlist,
// https-only, the redirect rules, the request count and concurrency limits,
// and reads bodies under the response size limit. One netClient serves one
// run, including the tools it calls.
type netClient struct {
	network   []string
	campus    map[string]bool
	campusCli CampusClient
	client    *http.Client
	sem       chan struct{}
	sent      atomic.Int64
	onRequest func(RequestRecord)
	recMu     sync.Mutex
}

// redirectErr is returned by CheckRedirect so the caller can report it.
type redirectErr struct{ msg string }

func (e *redirectErr) Error() string { return e.msg }

func newNetClient(network, campus []string, o *Options) *netClient {
	rt := o.Transport
	if rt == nil {
		rt = defaultTransport
		if o.AllowPrivateAddrs {
			rt = privateTransport
		}
	}
	c := &netClient{
		network:   network,
		campus:    map[string]bool{},
		campusCli: o.Campus,
		sem:       make(chan struct{}, MaxConcurrent),
		onRequest: o.OnRequest,
	}
	for _, s := range campus {
		c.campus[s] = true
	}
	c.client = &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return &redirectErr{fmt.Sprintf("redirects: more than %d, the limit is %d (at %s)", MaxRedirects, MaxRedirects, req.URL.Redacted())}
			}
			if msg := checkURL(c.network, req.URL); msg != "" {
				return &redirectErr{"redirect refused: " + msg}
			}
			return nil
		},
	}
	return c
}

// do sends r and reads the whole reply. Errors are *Error of kind http,
// timeout or limit.
func (c *netClient) do(ctx context.Context, r *httpReq) (*reply, error) {
	target := r.fullURL()
	var u *url.URL
	if r.Campus != "" {
		if !c.campus[r.Campus] {
			return nil, errf(KindHTTP, "campus service %s is not in campus", r.Campus)
		}
		pu, err := url.Parse(target)
		if err != nil || pu.Scheme != "" || pu.Host != "" || !strings.HasPrefix(pu.Path, "/") {
			return nil, errf(KindHTTP, "campus %s: url must be a path starting with / (got %q)", r.Campus, target)
		}
		u = pu
	} else {
		pu, err := url.Parse(target)
		if err != nil {
			return nil, errf(KindHTTP, "bad url %q: %v", target, unwrapURLErr(err))
		}
		if msg := checkURL(c.network, pu); msg != "" {
			return nil, errf(KindHTTP, "request refused: %s", msg)
		}
		u = pu
	}
	if n := c.sent.Add(1); n > MaxRequests {
		return nil, limitErr("requests", fmt.Sprintf("%d requests", n), strconv.Itoa(MaxRequests))
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctxErr(ctx)
	}
	defer func() { <-c.sem }()
	if e := ctxErr(ctx); e != nil {
		return nil, e // a run past its deadline sends nothing more
	}

	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.Timeout, errReqTimeout)
		defer cancel()
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		return nil, errf(KindHTTP, "bad request %s %s: %v", r.Method, target, err)
	}
	for _, h := range r.Headers {
		req.Header.Add(h.Name, h.Value)
	}
	if r.ContentType != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	if c.onRequest != nil {
		c.recMu.Lock()
		if e := ctxErr(ctx); e != nil {
			// A run that Run has already given up on records nothing more.
			c.recMu.Unlock()
			return nil, e
		}
		c.onRequest(RequestRecord{Campus: r.Campus, Method: r.Method, URL: req.URL.String(), Header: req.Header.Clone(), Body: r.Body})
		c.recMu.Unlock()
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "pku-harness-plugin/1")
	}

	var resp *http.Response
	if r.Campus != "" {
		if c.campusCli == nil {
			return nil, errf(KindSession, "campus %s: needs the host's signed-in session (no campus client)", r.Campus)
		}
		resp, err = c.campusCli.Do(ctx, r.Campus, req)
	} else {
		resp, err = c.client.Do(req)
	}
	where := target
	if r.Campus != "" {
		where = "campus " + r.Campus + " " + target
	}
	if err != nil {
		return nil, transportErr(ctx, where, r.Timeout, err)
	}
	defer resp.Body.Close()
	// A body that ignores the context still stops when it is closed.
	stop := context.AfterFunc(ctx, func() { resp.Body.Close() })
	defer stop()
	if n := headerSize(resp.Header); n > MaxResponseHeader {
		return nil, limitErr("response headers", fmt.Sprintf("%d bytes from %s", n, where), "256 KB")
	}
	// A HEAD reply, a 204 and a 304 declare the length of a body they do not send.
	noBody := r.Method == http.MethodHead || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified
	if resp.ContentLength > MaxResponse && !noBody {
		return nil, limitErr("response", fmt.Sprintf("%d bytes from %s", resp.ContentLength, where), "2 MB")
	}
	// The body as delivered (after any decompression the transport does) is
	// read through the cap: a compression bomb stops at 2 MB + 1 byte.
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	if err != nil {
		return nil, transportErr(ctx, where, r.Timeout, err)
	}
	if len(b) > MaxResponse {
		return nil, limitErr("response", "more than 2 MB from "+where, "2 MB")
	}
	final := target
	hdr := resp.Header
	if r.Campus == "" {
		if resp.Request != nil && resp.Request.URL != nil {
			final = resp.Request.URL.String()
		}
	} else {
		// The user's session belongs to the host: a plugin never sees its cookies.
		hdr = hdr.Clone()
		for _, h := range []string{"Set-Cookie", "Set-Cookie2", "Authorization", "Www-Authenticate", "Proxy-Authenticate"} {
			hdr.Del(h)
		}
	}
	return &reply{Status: resp.StatusCode, URL: final, Header: hdr, Body: b}, nil
}

var errReqTimeout = errors.New("request timeout")

// headerSize is the bytes of a header as sent: names, values and ": \r\n"
// for each line.
func headerSize(h http.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// transportErr classifies a failed round trip.
func transportErr(ctx context.Context, where string, timeout time.Duration, err error) *Error {
	if e := ctxErr(ctx); e != nil {
		if errors.Is(context.Cause(ctx), errReqTimeout) {
			return &Error{Kind: KindTimeout, Msg: fmt.Sprintf("request: no reply from %s within %s", where, timeout), err: err}
		}
		return e
	}
	var re *redirectErr
	if errors.As(err, &re) {
		if strings.HasPrefix(re.msg, "redirects:") {
			return &Error{Kind: KindLimit, Msg: re.msg, err: err}
		}
		return &Error{Kind: KindHTTP, Msg: re.msg, err: err}
	}
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var se SessionError
	if errors.As(err, &se) {
		return &Error{Kind: KindSession, Msg: fmt.Sprintf("request to %s failed: %v", where, unwrapURLErr(err)), err: err}
	}
	return &Error{Kind: KindHTTP, Msg: fmt.Sprintf("request to %s failed: %v", where, unwrapURLErr(err)), err: err}
}

// SessionError is implemented by a CampusClient's error for a request it had
// no signed-in session for (host/campus.NotSignedInError): the run's error is
// then of kind KindSession, which faces turn into "sign in to SERVICE".
type SessionError interface {
	error
	// SessionMissing names the campus service that needs a sign-in.
	SessionMissing() string
}

func unwrapURLErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// decodeText returns the body as UTF-8 text, decoded from the charset the
// reply declares in its Content-Type header or, for HTML, a <meta> tag
// (docs/DECISIONS.md §6, §10). GBK and GB2312 are read as GB18030. A leading
// byte-order mark is dropped.
func decodeText(body []byte, contentType string) string {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	switch name {
	case "utf-8":
		body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
		if utf8.Valid(body) {
			return string(body)
		}
		return strings.ToValidUTF8(string(body), "\uFFFD")
	case "gbk", "gb2312", "gb18030":
		enc = simplifiedchinese.GB18030
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	return strings.TrimPrefix(string(out), "\uFEFF")
}

// isJSON reports whether a Content-Type names JSON (application/json or
// any +json type).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/json"
}

// readAs is readAsCharged without a budget: replies are parsed as they are,
// uncharged (for tests and the fuzzer of the reply reader).
func readAs(rep *reply, as, where string) (any, error) {
	return readAsCharged(context.Background(), rep, as, where, nil)
}

// parsers are the standard library's json(text) and html(text), evaluated
// in an environment of their own (a plugin's functions cannot replace them),
// so that a reply read `as: json` or `as: html` is parsed, charged and
// bounded exactly as the built-ins are (per kilobyte and per value or node
// they create; see "What things cost" in docs/PLUGIN-LANGUAGE.md).
var parsers = sync.OnceValues(func() (json, html *expr.Expr) {
	env := stdlib.NewEnv()
	var err error
	if json, err = env.Parse("json(text)"); err != nil {
		panic(err)
	}
	if html, err = env.Parse("html(text)"); err != nil {
		panic(err)
	}
	return json, html
})

// textVar is the scope of a parser: the one name text.
type textVar string

func (t textVar) Lookup(name string) (any, bool) { return string(t), name == "text" }

// parseCharged runs a parser over text, charged to b. A failure that is
// not the budget's, the deadline's or another limit is returned as msg.
func parseCharged(ctx context.Context, x *expr.Expr, text string, b *expr.Budget) (v any, msg string, err error) {
	v, err = x.Eval(ctx, textVar(text), b)
	if err == nil {
		return v, "", nil
	}
	if e := ctxErr(ctx); e != nil {
		return nil, "", e
	}
	var re *expr.RuntimeError
	if !errors.As(err, &re) {
		return nil, "", err
	}
	if re.Kind != KindLimit {
		return nil, re.Msg, nil
	}
	// The parser's own position (1:1 of "json(text)") means nothing to the plugin.
	return nil, "", &Error{Kind: KindLimit, Msg: re.Msg, err: err}
}

// chargeText charges a decoded text for the bytes it holds beyond the raw
// body already charged (a charset conversion can triple its size).
func chargeText(b *expr.Budget, raw int, text string) error {
	if b == nil || len(text) <= raw {
		return nil
	}
	return b.Charge((len(text) - raw) / 1024)
}

// readAsCharged turns a reply into the value a request step binds, by `as`
// (seed 004 "Steps"): json, text, html or response; "" picks json when the
// content type says JSON, text otherwise. Every form but response fails
// with kind http when the status is not 2xx. With a budget, parsing and any
// growth of the text in decoding are charged to it before they are kept.
func readAsCharged(ctx context.Context, rep *reply, as, where string, budget *expr.Budget) (any, error) {
	ct := rep.Header.Get("Content-Type")
	if as == "" {
		as = "text"
		if isJSON(ct) {
			as = "json"
		}
	}
	if as != "response" && (rep.Status < 200 || rep.Status > 299) {
		return nil, errf(KindHTTP, "HTTP %d %s from %s", rep.Status, http.StatusText(rep.Status), where)
	}
	switch as {
	case "json":
		b := bytes.TrimPrefix(rep.Body, []byte("\xef\xbb\xbf"))
		if _, params, err := mime.ParseMediaType(ct); err == nil {
			if cs := strings.ToLower(params["charset"]); cs != "" && cs != "utf-8" && cs != "utf8" {
				t := decodeText(b, ct)
				if err := chargeText(budget, len(b), t); err != nil {
					return nil, err
				}
				b = []byte(t)
			}
		}
		if budget == nil {
			v, err := expr.FromJSON(b)
			if err != nil {
				return nil, errf(KindHTTP, "reply from %s is not JSON: %v (%s)", where, err, snippet(b))
			}
			return v, nil
		}
		jsonX, _ := parsers()
		v, msg, err := parseCharged(ctx, jsonX, string(b), budget)
		if err != nil {
			return nil, err
		}
		if msg != "" {
			return nil, errf(KindHTTP, "reply from %s is not JSON: %s (%s)", where, msg, snippet(b))
		}
		return v, nil
	case "text":
		t := decodeText(rep.Body, ct)
		if err := chargeText(budget, len(rep.Body), t); err != nil {
			return nil, err
		}
		return t, nil
	case "html":
		t := decodeText(rep.Body, ct)
		if budget == nil {
			doc, err := html.Parse(strings.NewReader(t))
			if err != nil {
				return nil, errf(KindHTTP, "reply from %s is not HTML: %v", where, err)
			}
			return &expr.Node{N: doc}, nil
		}
		if err := chargeText(budget, len(rep.Body), t); err != nil {
			return nil, err
		}
		_, htmlX := parsers()
		v, msg, err := parseCharged(ctx, htmlX, t, budget)
		if err != nil {
			return nil, err
		}
		if msg != "" {
			return nil, errf(KindHTTP, "reply from %s is not HTML: %s", where, msg)
		}
		return v, nil
	case "response":
		h := expr.NewObject(len(rep.Header))
		keys := make([]string, 0, len(rep.Header))
		for k := range rep.Header {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			h.Set(strings.ToLower(k), strings.Join(rep.Header[k], ", "))
		}
		t := decodeText(rep.Body, ct)
		if err := chargeText(budget, len(rep.Body), t); err != nil {
			return nil, err
		}
		o := expr.NewObject(4)
		o.Set("status", float64(rep.Status))
		o.Set("url", rep.URL)
		o.Set("headers", h)
		o.Set("text", t)
		return o, nil
	}
	return nil, errf(KindHTTP, "unknown as: %q (want json, text, html or response)", as)
}

// snippet returns the start of b for an error message.
func snippet(b []byte) string {
	const n = 60
	s := strings.ToValidUTF8(string(b), "?")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}
