package fnrun

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/pkuinfo/harness/interp"
)

// A granted secret in one call: its binding and the stand-in the function sees for it.
type granted struct {
	b       *SecretBinding
	standIn string // "pkuh-secret-NAME-" + random
	needles []needle
}

// standIn makes the stand-in of secret name: unguessable, so it is only ever the function's
// copy, and of letters, digits and '-' only, so it passes through URL and JSON encoding as it
// is.
func standIn(name string) (full, random string) {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 26)
	rand.Read(b)
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return "pkuh-secret-" + name + "-" + string(b), string(b)
}

// grants makes the stand-ins of one call's secrets.
func grants(bs map[string]*SecretBinding) []*granted {
	var out []*granted
	for _, b := range bs {
		full, random := standIn(b.Name)
		out = append(out, &granted{b: b, standIn: full, needles: []needle{newNeedle(b.Name, random), newNeedle(b.Name, b.Value)}})
	}
	return out
}

func allNeedles(gs []*granted) []needle {
	var out []needle
	for _, g := range gs {
		out = append(out, g.needles...)
	}
	return out
}

// maskSecrets replaces each stand-in and value in msg (as it is and query-escaped) with
// [secret NAME].
func maskSecrets(msg string, gs []*granted) string {
	for _, g := range gs {
		for _, v := range []string{g.standIn, g.b.Value, url.QueryEscape(g.b.Value)} {
			if v != "" {
				msg = strings.ReplaceAll(msg, v, "[secret "+g.b.Name+"]")
			}
		}
	}
	return msg
}

// allowedText says where the operator lets secret b go.
func allowedText(b *SecretBinding) string {
	if len(b.Uses) == 0 {
		return "the operator allows it in no request (crypto.hmacSha256 only)"
	}
	var us []string
	for _, u := range b.Uses {
		if u.Header != "" {
			us = append(us, "header "+u.Header+" to "+u.Host)
		} else {
			us = append(us, "query parameter "+u.Query+" to "+u.Host)
		}
	}
	return "the operator allows it only in " + strings.Join(us, ", ")
}

// refusal is the guard's error: it names the secret and the place, never the value or the
// request's text, so Call can show it when the interpreter's message around it must be
// withheld.
type refusal struct{ msg string }

func (e *refusal) Error() string { return e.msg }

func refuse(format string, args ...any) error { return &refusal{fmt.Sprintf(format, args...)} }

// maxGuardedBody bounds a request body the guard reads to check it.
const maxGuardedBody = 4 << 20

// guard is the RoundTripper of one call with secrets: every request is checked and, where the
// operator allows, its stand-ins are swapped for the values; every reply is checked.
type guard struct {
	inner http.RoundTripper
	gs    []*granted
}

// A part of a request: where it is (for the error) and its text, with the stand-ins of the
// secrets allowed there taken out.
type part struct {
	where string
	text  string
	allow map[*granted]bool
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	host := strings.ToLower(req.URL.Hostname())
	allowedHere := func(gr *granted, header, query string) bool {
		for _, u := range gr.b.Uses {
			if u.Host == host && ((header != "" && u.Header == header) || (query != "" && u.Query == query)) {
				return true
			}
		}
		return false
	}
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(io.LimitReader(req.Body, maxGuardedBody+1))
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if len(b) > maxGuardedBody {
			return nil, fmt.Errorf("the request body to %s is over %d bytes, more than the secret check reads", host, maxGuardedBody)
		}
		body = b
	}
	parts := []part{{where: "the host name", text: req.URL.Host}, {where: "the URL path", text: req.URL.EscapedPath()}, {where: "the body", text: string(body)}}
	if req.URL.User != nil {
		parts = append(parts, part{where: "the URL's user info", text: req.URL.User.String()})
	}
	out := req.Clone(req.Context())
	// The query, parameter by parameter, as the raw text the server will read.
	var q []string
	for _, kv := range strings.Split(req.URL.RawQuery, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		p := part{where: "query parameter " + name, text: kv, allow: map[*granted]bool{}}
		for _, gr := range g.gs {
			if allowedHere(gr, "", name) && strings.Contains(v, gr.standIn) {
				p.allow[gr] = true
				v = strings.ReplaceAll(v, gr.standIn, url.QueryEscape(gr.b.Value))
			}
		}
		parts = append(parts, p)
		q = append(q, k+"="+v)
	}
	out.URL.RawQuery = strings.Join(q, "&")
	for k, vs := range req.Header {
		parts = append(parts, part{where: "a header name", text: k})
		for i, v := range vs {
			p := part{where: "header " + k, text: v, allow: map[*granted]bool{}}
			for _, gr := range g.gs {
				if allowedHere(gr, http.CanonicalHeaderKey(k), "") && strings.Contains(v, gr.standIn) {
					if strings.ContainsAny(gr.b.Value, "\r\n\x00") {
						return nil, refuse("secret %s has a line break or NUL, which header %s cannot carry", gr.b.Name, k)
					}
					p.allow[gr] = true
					out.Header[k][i] = strings.ReplaceAll(out.Header[k][i], gr.standIn, gr.b.Value)
				}
			}
			parts = append(parts, p)
		}
	}
	for _, p := range parts {
		for _, gr := range g.gs {
			text := p.text
			if p.allow[gr] {
				text = strings.ReplaceAll(text, gr.standIn, "")
			}
			if found(text, gr.needles) != "" {
				return nil, refuse("secret %s may not go in %s to %s: %s", gr.b.Name, p.where, host, allowedText(gr.b))
			}
		}
	}
	if body != nil {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		out.ContentLength = int64(len(body))
	}
	resp, err := g.inner.RoundTrip(out)
	if err != nil {
		if m := maskSecrets(err.Error(), g.gs); m != err.Error() {
			return nil, errors.New(m)
		}
		return nil, err
	}
	// The reply: a host that echoes a value back must not hand it to the function.
	b, err := io.ReadAll(io.LimitReader(resp.Body, interp.MaxResponse+1))
	resp.Body.Close()
	if err != nil {
		return nil, errors.New(maskSecrets(err.Error(), g.gs))
	}
	var hdr strings.Builder
	for k, vs := range resp.Header {
		hdr.WriteString(k + ": " + strings.Join(vs, ", ") + "\n")
	}
	for _, gr := range g.gs {
		vn := gr.needles[1:] // the value: the reply cannot hold the stand-in's meaning
		if found(hdr.String(), vn) != "" || found(string(b), vn) != "" {
			return nil, refuse("the reply from %s holds secret %s (as it is or in another form); refused", host, gr.b.Name)
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.Request = req // the function sees the URL it wrote, never the value
	return resp, nil
}
