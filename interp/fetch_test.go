package interp

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"

	"github.com/pkuinfo/harness/lang/expr"
)

// testServer starts an https server whose handler sees every host name, and
// returns a transport that sends any host to it and trusts its certificate
// (verified as example.com, which the httptest certificate names). No
// request leaves the loopback interface.
func testServer(t testing.TB, h http.Handler) (*httptest.Server, *http.Transport) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	addr := srv.Listener.Addr().String()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	tr.TLSClientConfig.ServerName = "example.com"
	t.Cleanup(tr.CloseIdleConnections)
	return srv, tr
}

func TestHostAllowed(t *testing.T) {
	network := []string{"portal.pku.edu.cn", "*.example.com"}
	tests := []struct {
		host string
		want bool
	}{
		{"portal.pku.edu.cn", true},
		{"PORTAL.pku.edu.cn", true},
		{"portal.pku.edu.cn.", true},
		{"www.pku.edu.cn", false},
		{"pku.edu.cn", false},
		{"evilportal.pku.edu.cn", false},
		{"a.example.com", true},
		{"a.b.example.com", true},
		{"example.com", false},
		{"badexample.com", false},
		{"example.com.evil.org", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := hostAllowed(network, tc.host); got != tc.want {
			t.Errorf("hostAllowed(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

func TestPublicAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"162.105.129.122", true},
		{"2001:da8:201::1", true},
		{"127.0.0.1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"100.64.0.1", false},
		{"0.0.0.0", false},
		{"::1", false},
		{"::", false},
		{"fd00::1", false},
		{"fe80::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:8.8.8.8", true},
		{"224.0.0.1", false},
		{"255.255.255.255", false},
		{"64:ff9b::8.8.8.8", true},
		{"64:ff9b::127.0.0.1", false},
		{"64:ff9b::a9fe:a9fe", false},
		{"64:ff9b:1::8.8.8.8", false},
		{"2002:7f00:1::1", false},
		{"2002:808:808::1", true},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false},
		{"2001:db8::1", false},
		{"192.0.2.1", false},
		{"198.18.0.1", false},
		{"240.0.0.1", false},
		{"ff02::1", false},
		{"fe80::1%eth0", false},
	}
	for _, tc := range tests {
		if got := PublicAddr(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("PublicAddr(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

func TestEncodeQuery(t *testing.T) {
	tests := []struct {
		url   string
		query []param
		want  string
	}{
		{"https://a.com/x", []param{{"z", "1"}, {"a", "二教 101"}}, "https://a.com/x?z=1&a=%E4%BA%8C%E6%95%99%20101"},
		{"https://a.com/x?k=v", []param{{"q", "a+b&c=d/é"}}, "https://a.com/x?k=v&q=a%2Bb%26c%3Dd%2F%C3%A9"},
		{"https://a.com/x?", []param{{"q", "-_.!~*'()"}}, "https://a.com/x?q=-_.!~*'()"},
		{"https://a.com/x#f", []param{{"q", "1"}}, "https://a.com/x?q=1#f"},
		{"https://a.com/x", nil, "https://a.com/x"},
		{"https://a.com/x?b=二教 1&c=a+b&d=%E4&e=100%", nil, "https://a.com/x?b=%E4%BA%8C%E6%95%99%201&c=a+b&d=%E4&e=100%25"},
		{"https://a.com/x?q=\"<>\"#frag ment", []param{{"p", "1"}}, "https://a.com/x?q=%22%3C%3E%22&p=1#frag ment"},
	}
	for _, tc := range tests {
		r := &httpReq{URL: tc.url, Query: tc.query}
		if got := r.fullURL(); got != tc.want {
			t.Errorf("fullURL(%s, %v) = %s, want %s", tc.url, tc.query, got, tc.want)
		}
	}
}

func TestNetworkAllowlist(t *testing.T) {
	_, tr := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-undeclared":
			http.Redirect(w, r, "https://evil.org/steal", http.StatusFound)
		case "/to-http":
			http.Redirect(w, r, "http://api.example.com/plain", http.StatusFound)
		case "/to-declared":
			http.Redirect(w, r, "https://portal.pku.edu.cn/ok", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			w.Write([]byte("ok " + r.Host + r.URL.Path))
		}
	}))
	tests := []struct {
		url      string
		wantKind string
		want     string // body or error message
	}{
		{"https://portal.pku.edu.cn/ok", "", "ok portal.pku.edu.cn/ok"},
		{"https://api.example.com/ok", "", "ok api.example.com/ok"},
		{"https://example.com/ok", KindHTTP, "request refused: host example.com is not in network"},
		{"https://evil.org/x", KindHTTP, "request refused: host evil.org is not in network"},
		{"http://portal.pku.edu.cn/ok", KindHTTP, "request refused: http://portal.pku.edu.cn/ok: only https is allowed (got http)"},
		{"https://portal.pku.edu.cn:8443/ok", KindHTTP, "request refused: https://portal.pku.edu.cn:8443/ok: only the default https port is allowed"},
		{"/relative", KindHTTP, "request refused: /relative: only https is allowed (got no scheme)"},
		{"https://api.example.com/to-undeclared", KindHTTP, "redirect refused: host evil.org is not in network"},
		{"https://api.example.com/to-http", KindHTTP, "redirect refused: http://api.example.com/plain: only https is allowed (got http)"},
		{"https://api.example.com/to-declared", "", "ok portal.pku.edu.cn/ok"},
		{"https://api.example.com/loop", KindLimit, "redirects: more than 5, the limit is 5 (at https://api.example.com/loop)"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			c := newNetClient([]string{"portal.pku.edu.cn", "*.example.com"}, nil, &Options{Transport: tr})
			rep, err := c.do(context.Background(), &httpReq{Method: "GET", URL: tc.url})
			if tc.wantKind == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if string(rep.Body) != tc.want {
					t.Errorf("body = %q, want %q", rep.Body, tc.want)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Kind != tc.wantKind || e.Msg != tc.want {
				t.Errorf("err = %s %q\nwant  %s %q", e.Kind, e.Msg, tc.wantKind, tc.want)
			}
		})
	}
}

// TestDialRefusesPrivate checks the default transport: with a network entry
// that allows the host, a connection to a loopback address is still refused
// at dial time, both for an IP literal and for a name resolving to one.
func TestDialRefusesPrivate(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for _, host := range []string{"127.0.0.1", "localhost"} {
		tr := NewTransport(false)
		defer tr.CloseIdleConnections()
		req, _ := http.NewRequest("GET", "https://"+net.JoinHostPort(host, itoa(port))+"/", nil)
		_, err := tr.RoundTrip(req)
		if err == nil || !strings.Contains(err.Error(), "not a public address") {
			t.Errorf("%s: err = %v, want a refusal", host, err)
		}
	}
	// And the netClient refuses the loopback IP before dialing, by host.
	c := newNetClient([]string{"127.0.0.1"}, nil, &Options{})
	_, err := c.do(context.Background(), &httpReq{Method: "GET", URL: "https://127.0.0.1/"})
	if err == nil || !strings.Contains(err.Error(), "not a public address") {
		t.Errorf("netClient: err = %v, want a refusal at dial time", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestDecodeCharsets(t *testing.T) {
	gbk, _ := simplifiedchinese.GBK.NewEncoder().String("空闲教室：二教")
	gb18030, _ := simplifiedchinese.GB18030.NewEncoder().String("𠀀 二教")
	big5, _ := traditionalchinese.Big5.NewEncoder().String("北京大學")
	tests := []struct {
		name, ct, body, want string
	}{
		{"gbk header", "text/html; charset=GBK", gbk, "空闲教室：二教"},
		{"gb2312 header", "text/plain; charset=gb2312", gbk, "空闲教室：二教"},
		{"gb18030 4-byte", "text/plain; charset=gb18030", gb18030, "𠀀 二教"},
		{"gb2312 as gb18030", "text/plain; charset=gb2312", gb18030, "𠀀 二教"},
		{"big5 header", "text/html; charset=big5", big5, "北京大學"},
		{"meta charset", "text/html", `<html><head><meta charset="gbk"></head><body>` + gbk, `<html><head><meta charset="gbk"></head><body>空闲教室：二教`},
		{"meta http-equiv", "text/html", `<meta http-equiv="Content-Type" content="text/html; charset=gb2312">` + gbk, `<meta http-equiv="Content-Type" content="text/html; charset=gb2312">空闲教室：二教`},
		{"utf-8 bom", "text/plain", "\xef\xbb\xbfhi", "hi"},
		{"utf-8 default", "", "二教", "二教"},
	}
	for _, tc := range tests {
		if got := decodeText([]byte(tc.body), tc.ct); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestReadAs(t *testing.T) {
	hdr := func(ct string) http.Header { return http.Header{"Content-Type": {ct}} }
	tests := []struct {
		name   string
		rep    reply
		as     string
		want   string // JSON of the value, or the error message
		errKnd string
	}{
		{"json bom", reply{Status: 200, Header: hdr("text/plain"), Body: []byte("\xef\xbb\xbf{\"a\":1}")}, "json", `{"a":1}`, ""},
		{"default json", reply{Status: 200, Header: hdr("application/json; charset=utf-8"), Body: []byte(`[1,"x"]`)}, "", `[1,"x"]`, ""},
		{"default problem+json", reply{Status: 200, Header: hdr("application/problem+json"), Body: []byte(`{"b":2}`)}, "", `{"b":2}`, ""},
		{"default text", reply{Status: 200, Header: hdr("text/html"), Body: []byte(`{"a":1}`)}, "", `"{\"a\":1}"`, ""},
		{"json gbk", reply{Status: 200, Header: hdr("application/json; charset=gbk"), Body: []byte(mustGBK("{\"r\":\"二教\"}"))}, "json", `{"r":"二教"}`, ""},
		{"bad json", reply{Status: 200, Header: hdr("application/json"), Body: []byte(`<html>`)}, "json", "", KindHTTP},
		{"404", reply{Status: 404, Header: hdr("text/plain"), Body: []byte(`nope`)}, "text", "HTTP 404 Not Found from https://x/y", KindHTTP},
		{"response 404", reply{Status: 404, URL: "https://x/y", Header: http.Header{"Content-Type": {"text/plain"}, "X-B": {"1", "2"}}, Body: []byte(`nope`)}, "response",
			`{"status":404,"url":"https://x/y","headers":{"content-type":"text/plain","x-b":"1, 2"},"text":"nope"}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := readAs(&tc.rep, tc.as, "https://x/y")
			if tc.errKnd != "" {
				var e *Error
				if !errors.As(err, &e) || e.Kind != tc.errKnd || (tc.want != "" && e.Msg != tc.want) {
					t.Fatalf("err = %v, want kind %s %q", err, tc.errKnd, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := expr.ToJSON(v, "")
			if string(b) != tc.want {
				t.Errorf("got %s, want %s", b, tc.want)
			}
		})
	}
}

func mustGBK(s string) string {
	out, _ := simplifiedchinese.GBK.NewEncoder().String(s)
	return out
}

func TestResponseLimit(t *testing.T) {
	_, tr := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := MaxResponse
		if r.URL.Path == "/over" {
			n++
		}
		w.Write(bytes.Repeat([]byte("a"), n))
	}))
	c := newNetClient([]string{"a.example.com"}, nil, &Options{Transport: tr})
	rep, err := c.do(context.Background(), &httpReq{Method: "GET", URL: "https://a.example.com/exact"})
	if err != nil || len(rep.Body) != MaxResponse {
		t.Fatalf("exactly 2 MB: err = %v", err)
	}
	_, err = c.do(context.Background(), &httpReq{Method: "GET", URL: "https://a.example.com/over"})
	const want = "response: more than 2 MB from https://a.example.com/over, the limit is 2 MB"
	if e, ok := err.(*Error); !ok || e.Kind != KindLimit || e.Msg != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestRequestTimeout(t *testing.T) {
	release := make(chan struct{})
	_, tr := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			panic(http.ErrAbortHandler) // never a reply racing the client's timeout
		}
	}))
	defer close(release)
	c := newNetClient([]string{"a.example.com"}, nil, &Options{Transport: tr})
	start := time.Now()
	_, err := c.do(context.Background(), &httpReq{Method: "GET", URL: "https://a.example.com/slow", Timeout: 100 * time.Millisecond})
	const want = "request: no reply from https://a.example.com/slow within 100ms"
	if e, ok := err.(*Error); !ok || e.Kind != KindTimeout || e.Msg != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timeout took %v", d)
	}
}

func TestRequestCountAndConcurrency(t *testing.T) {
	var inflight, peak atomic.Int32
	_, tr := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		inflight.Add(-1)
	}))
	c := newNetClient([]string{"a.example.com"}, nil, &Options{Transport: tr})
	errs := make(chan error, MaxRequests+1)
	for range MaxRequests + 1 {
		go func() {
			_, err := c.do(context.Background(), &httpReq{Method: "GET", URL: "https://a.example.com/"})
			errs <- err
		}()
	}
	var failed []error
	for range MaxRequests + 1 {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) != 1 || failed[0].Error() != "requests: 61 requests, the limit is 60" {
		t.Errorf("failures = %v, want exactly the 61st request refused", failed)
	}
	if p := peak.Load(); p > MaxConcurrent || p < 2 {
		t.Errorf("peak concurrency %d, want 2..%d", p, MaxConcurrent)
	}
}

type fakeCampus struct{ got []string }

func (f *fakeCampus) Do(ctx context.Context, service string, req *http.Request) (*http.Response, error) {
	f.got = append(f.got, service+" "+req.Method+" "+req.URL.String())
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}, "Set-Cookie": {"session=secret"}}, Body: http.NoBody, Request: req}, nil
}

func TestCampusRequest(t *testing.T) {
	fc := &fakeCampus{}
	var recs []RequestRecord
	c := newNetClient(nil, []string{"treehole"}, &Options{Campus: fc, OnRequest: func(r RequestRecord) { recs = append(recs, r) }})
	rep, err := c.do(context.Background(), &httpReq{Campus: "treehole", Method: "POST", URL: "/chapi/api/x", Query: []param{{"page", "2"}}, Body: []byte(`{}`), ContentType: "application/json"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Header.Get("Set-Cookie") != "" || rep.Header.Get("Content-Type") != "application/json" || rep.URL != "/chapi/api/x?page=2" {
		t.Errorf("campus reply header %v, url %s: want no cookies and the path as URL", rep.Header, rep.URL)
	}
	if len(fc.got) != 1 || fc.got[0] != "treehole POST /chapi/api/x?page=2" {
		t.Errorf("campus got %v", fc.got)
	}
	if len(recs) != 1 || recs[0].Campus != "treehole" || recs[0].URL != "/chapi/api/x?page=2" || string(recs[0].Body) != "{}" || recs[0].Header.Get("Content-Type") != "application/json" {
		t.Errorf("records = %+v", recs)
	}
	tests := []struct {
		req  httpReq
		want string
	}{
		{httpReq{Campus: "card", Method: "GET", URL: "/x"}, "campus service card is not in campus"},
		{httpReq{Campus: "treehole", Method: "GET", URL: "https://evil.org/x"}, `campus treehole: url must be a path starting with / (got "https://evil.org/x")`},
	}
	for _, tc := range tests {
		if _, err := c.do(context.Background(), &tc.req); err == nil || err.Error() != tc.want {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
	noCampus := newNetClient(nil, []string{"treehole"}, &Options{})
	_, err = noCampus.do(context.Background(), &httpReq{Campus: "treehole", Method: "GET", URL: "/x"})
	if err == nil || !strings.Contains(err.Error(), "signed-in session") {
		t.Errorf("without a campus client: %v", err)
	}
}
