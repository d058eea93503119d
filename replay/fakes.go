package replay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"sync"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
)

// Recorded answers a run's requests and ability calls from one Case. Its Transport (an
// http.RoundTripper for interp.Options.Transport), Campus (an interp.CampusClient) and
// Abilities (an interp.Abilities) share one record of what went unanswered, so a request that
// no response matches fails the test even when the plugin catches the error. Safe for
// concurrent use (a concurrent `each`).
type Recorded struct {
	c *Case

	mu         sync.Mutex
	unanswered []string // "no recorded response for GET https://…" messages
	used       map[*AbilityCallAnswer]bool
	sent       []interp.RequestRecord // from OnRequest, in order
}

// NewRecorded returns the fakes for one run of c.
func NewRecorded(c *Case) *Recorded {
	return &Recorded{c: c, used: map[*AbilityCallAnswer]bool{}}
}

// Unanswered lists, in order, every request or ability call the run made that the test had no
// answer for; each message names the request.
func (r *Recorded) Unanswered() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.unanswered...)
}

// OnRequest records a request the interpreter sent (interp.Options.OnRequest).
func (r *Recorded) OnRequest(rec interp.RequestRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, rec)
}

// Sent returns the requests recorded by OnRequest, in order.
func (r *Recorded) Sent() []interp.RequestRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]interp.RequestRecord(nil), r.sent...)
}

// Transport returns the fake transport for public requests.
func (r *Recorded) Transport() http.RoundTripper { return transport{r} }

// Campus returns the fake campus client.
func (r *Recorded) Campus() interp.CampusClient { return campus{r} }

// Abilities returns the fake host abilities.
func (r *Recorded) Abilities() interp.Abilities { return abilities{r} }

// UnansweredError is what the fakes return for a request or call the test has no answer for.
type UnansweredError struct {
	Msg string // "no recorded response for GET https://…" or "no recorded answer for ability …"
}

// Error implements error.
func (e *UnansweredError) Error() string { return e.Msg }

type transport struct{ r *Recorded }

// RoundTrip answers req from the first public response (no `campus:`) that matches it.
func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.r.answer(req, "")
}

type campus struct{ r *Recorded }

// Do answers req from the first response with `campus: service` that matches it.
func (c campus) Do(ctx context.Context, service string, req *http.Request) (*http.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.r.answer(req, service)
}

// describeRequest names a request in messages: "GET https://host/path?q" or
// "GET treehole:/path?q" for a campus request.
func describeRequest(method, service, url string) string {
	if service != "" {
		return fmt.Sprintf("%s %s:%s", method, service, url)
	}
	return method + " " + url
}

func (r *Recorded) answer(req *http.Request, service string) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	url := req.URL.String()
	for _, resp := range r.c.Responses {
		if resp.Campus != service || !URLContains(url, resp.Match) {
			continue
		}
		if resp.Method != "" && resp.Method != strings.ToUpper(method) {
			continue
		}
		return &http.Response{
			Status:        fmt.Sprintf("%d %s", resp.Status, http.StatusText(resp.Status)),
			StatusCode:    resp.Status,
			Proto:         "HTTP/1.1",
			ProtoMajor:    1,
			ProtoMinor:    1,
			Header:        resp.Header.Clone(),
			Body:          io.NopCloser(bytes.NewReader(resp.Body)),
			ContentLength: int64(len(resp.Body)),
			Request:       req,
		}, nil
	}
	msg := "no recorded response for " + describeRequest(method, service, url)
	if service != "" {
		msg += fmt.Sprintf(" (add a response with campus: %s and a match: found in the URL)", service)
	}
	r.mu.Lock()
	r.unanswered = append(r.unanswered, msg)
	r.mu.Unlock()
	return nil, &UnansweredError{Msg: msg}
}

// URLContains reports whether match occurs in the URL rawURL, as sent (percent-encoded) or
// decoded, so that `match: building=理教` finds `building=%E7%90%86%E6%95%99`.
func URLContains(rawURL, match string) bool {
	if strings.Contains(rawURL, match) {
		return true
	}
	decoded, err := neturl.PathUnescape(rawURL)
	return err == nil && strings.Contains(decoded, match)
}

type abilities struct{ r *Recorded }

// Call answers an ability call from the test's `abilities:` map.
func (a abilities) Call(ctx context.Context, call interp.AbilityCall) (any, error) {
	name := call.Group + "." + call.Op
	ans := a.r.c.Abilities[name]
	if ans == nil {
		msg := fmt.Sprintf("no recorded answer for ability %s (add abilities: { %s: … } to the test)", name, name)
		a.r.mu.Lock()
		a.r.unanswered = append(a.r.unanswered, msg)
		a.r.mu.Unlock()
		return nil, &UnansweredError{Msg: msg}
	}
	if ans.Calls == nil {
		return ans.Value, nil
	}
	a.r.mu.Lock()
	defer a.r.mu.Unlock()
	var last *AbilityCallAnswer
	for _, ca := range ans.Calls {
		if ca.HasArgs && !Contains(call.Args, ca.Args) {
			continue
		}
		last = ca
		if !a.r.used[ca] {
			break
		}
	}
	if last == nil {
		msg := fmt.Sprintf("no recorded answer for ability %s with args %s (no entry of abilities.%s.calls matches)", name, Show(call.Args), name)
		a.r.unanswered = append(a.r.unanswered, msg)
		return nil, &UnansweredError{Msg: msg}
	}
	a.r.used[last] = true
	if last.Error != "" {
		return nil, &interp.Error{Kind: interp.KindAbility, Msg: last.Error}
	}
	return last.Result, nil
}

// Contains reports whether got contains want: objects by the keys want names (recursively),
// every other value by expr.Equal.
func Contains(got, want any) bool {
	w, ok := want.(*expr.Object)
	if !ok {
		return expr.Equal(got, want)
	}
	g, ok := got.(*expr.Object)
	if !ok {
		return false
	}
	for _, k := range w.Keys() {
		wv, _ := w.Get(k)
		gv, has := g.Get(k)
		if !has || !Contains(gv, wv) {
			return false
		}
	}
	return true
}
