package cli

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/interp"
)

func init() {
	RegisterHostSetup(func(*store.DB) ([]host.Option, error) {
		bases, err := campus.EndpointsFromEnv()
		if err != nil || len(bases) == 0 {
			return nil, err
		}
		rt, err := newStandInTransport(bases)
		if err != nil || rt == nil {
			return nil, err
		}
		return []host.Option{host.WithTransport(rt)}, nil
	})
}

// standInTransport sends plugins' public https requests to the servers campus.EndpointsEnv
// names in place of the real campus hosts (stand-ins in tests: `portal=http://127.0.0.1:4001`
// makes a plugin's request to https://portal.pku.edu.cn/… go to the stand-in, the path and
// query kept). The plugin's network allowlist is checked on the real URL before the transport
// is used, as always. Every other host goes through the interpreter's own public-only transport.
type standInTransport struct {
	to    map[string]*url.URL // real host → stand-in base
	local http.RoundTripper   // to the stand-ins, which may be on loopback
	other http.RoundTripper   // everything else: public addresses only
}

// newStandInTransport maps each named server's real host (campus.DefaultBases, or a campus
// service's Base) to its stand-in; nil when none of the names has a public host to stand in
// for.
func newStandInTransport(bases map[string]string) (http.RoundTripper, error) {
	t := &standInTransport{to: map[string]*url.URL{}, other: interp.NewTransport(false),
		local: &http.Transport{Proxy: nil, TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: 30 * time.Second}}
	for name, base := range bases {
		real := campus.DefaultBases[name]
		if s := campus.Lookup(name); real == "" && s != nil {
			real = s.Base
		}
		ru, err := url.Parse(real)
		if err != nil || ru.Host == "" {
			continue
		}
		su, err := url.Parse(base)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", campus.EndpointsEnv, name, err)
		}
		t.to[ru.Host] = su
	}
	if len(t.to) == 0 {
		return nil, nil
	}
	return t, nil
}

// RoundTrip implements http.RoundTripper.
func (t *standInTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	su, ok := t.to[req.URL.Host]
	if !ok {
		return t.other.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	u := *req.URL
	u.Scheme, u.Host = su.Scheme, su.Host
	u.Path = su.Path + req.URL.Path
	if req.URL.RawPath != "" {
		u.RawPath = su.Path + req.URL.RawPath
	}
	r.URL, r.Host = &u, ""
	return t.local.RoundTrip(r)
}
