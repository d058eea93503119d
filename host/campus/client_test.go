package campus

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host/campus/campustest"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/plugin"
)

func TestServicesMatchCatalogue(t *testing.T) {
	var names []string
	for _, s := range Services {
		names = append(names, s.Name)
		if !strings.HasPrefix(s.Base, "https://") || s.sign == nil || s.Source == "" {
			t.Errorf("%s: base %q, sign set %v, source %q", s.Name, s.Base, s.sign != nil, s.Source)
		}
	}
	if !reflect.DeepEqual(names, plugin.CampusServices) {
		t.Fatalf("adapters %v, catalogue %v", names, plugin.CampusServices)
	}
}

// seen is what the stand-in server received.
type seen struct {
	Method, Path, Query, Body string
	Header                    http.Header
}

func standIn(t *testing.T) (*httptest.Server, *[]seen) {
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Method, r.URL.Path, r.URL.RawQuery, string(b), r.Header.Clone()})
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "fresh", Value: "v2"})
			http.SetCookie(w, &http.Cookie{Name: "old", Value: "", MaxAge: -1})
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func TestSigning(t *testing.T) {
	tests := []struct {
		name    string
		service string
		sess    Session
		method  string
		target  string
		ctype   string
		body    string
		header  map[string]string // plugin-set headers
		want    map[string]string // headers the server must see ("" = absent)
		query   string
		wantBdy string
	}{
		{name: "treehole bearer, uuid, cookies", service: "treehole",
			sess:   Session{Token: "jwt.abc", Cookies: map[string]string{"pku_uid": "1", "XSRF-TOKEN": "x"}, Device: "0123456789ab"},
			method: "GET", target: "/chapi/api/course/score_v2",
			header: map[string]string{"Authorization": "Bearer stolen", "Cookie": "a=b"},
			want: map[string]string{"Authorization": "Bearer jwt.abc", "Cookie": "XSRF-TOKEN=x; pku_uid=1",
				"Uuid":       "Web_PKUHOLE_2.0.0_WEB_UUID_30313233-3435-3637-3839-0123456789ab",
				"Accept":     "application/json, text/plain, */*",
				"User-Agent": uaDesktop146}},
		{name: "card GET adds synAccessSource", service: "card", sess: Session{Token: "jwt.card"},
			method: "GET", target: "/berserker-app/ykt/tsm/queryCard?x=1",
			want: map[string]string{"Synjones-Auth": "bearer jwt.card", "Synaccesssource": "h5",
				"User-Agent": uaCardApp, "X-Requested-With": "cn.edu.pku.PKUAndroid", "Cookie": ""},
			query: "x=1&synAccessSource=h5"},
		{name: "card POST JSON gets the field", service: "card", sess: Session{Token: "t"},
			method: "POST", target: "/berserker-app/useCard/setUseCardConfig", ctype: "application/json", body: `{"cardType":1}`,
			want: map[string]string{"Synjones-Auth": "bearer t"}, wantBdy: `{"cardType":1,"synAccessSource":"h5"}`},
		{name: "card POST JSON keeps an explicit field", service: "card", sess: Session{Token: "t"},
			method: "POST", target: "/p", ctype: "application/json", body: `{"synAccessSource":"h5"}`,
			want: map[string]string{}, wantBdy: `{"synAccessSource":"h5"}`},
		{name: "its referer and cookies", service: "its", sess: Session{Cookies: map[string]string{"JSESSIONID": "s1"}},
			method: "GET", target: "/netportal/itsUtil?operation=info",
			header: map[string]string{"Referer": "https://its.pku.edu.cn/x"},
			want:   map[string]string{"Cookie": "JSESSIONID=s1", "Referer": "https://its.pku.edu.cn/x", "User-Agent": uaDesktop147, "Authorization": ""},
			query:  "operation=info"},
		{name: "elective cookie", service: "elective", sess: Session{Cookies: map[string]string{"JSESSIONID": "e"}},
			method: "GET", target: "/elective2008/x", want: map[string]string{"Cookie": "JSESSIONID=e", "Accept-Language": "zh,zh-CN;q=0.9"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, got := standIn(t)
			ss := &MemorySessions{}
			tc.sess.Service = tc.service
			ss.Put(context.Background(), &tc.sess)
			c := &Client{Sessions: ss, Bases: map[string]string{tc.service: srv.URL}}
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, _ := http.NewRequest(tc.method, tc.target, body)
			req.Header.Set("User-Agent", "pku-harness-plugin/1")
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := c.Do(context.Background(), tc.service, req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(*got) != 1 {
				t.Fatalf("server saw %d requests", len(*got))
			}
			s := (*got)[0]
			for k, v := range tc.want {
				if s.Header.Get(k) != v {
					t.Errorf("header %s = %q, want %q", k, s.Header.Get(k), v)
				}
			}
			if tc.query != "" && s.Query != tc.query {
				t.Errorf("query %q, want %q", s.Query, tc.query)
			}
			if tc.wantBdy != "" && s.Body != tc.wantBdy {
				t.Errorf("body %q, want %q", s.Body, tc.wantBdy)
			}
		})
	}
}

func TestNotSignedIn(t *testing.T) {
	ss := &MemorySessions{}
	ss.Put(context.Background(), &Session{Service: "card", Cookies: map[string]string{"a": "b"}}) // card needs a token
	c := &Client{Sessions: ss}
	tests := []struct{ service, want string }{
		{"treehole", "not signed in to treehole: run harness campus login treehole"},
		{"card", "not signed in to card: run harness campus login card"},
		{"library", "not signed in to library: run harness campus login library"},
		{"canteen", `campus: unknown service "canteen" (known: card, its, treehole, blackboard, elective, cwfw, cwpay, bdkj, library, library-space)`},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest("GET", "/x", nil)
		_, err := c.Do(context.Background(), tc.service, req)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.service, err, tc.want)
		}
	}
}

func TestExpiredSessionAndAbsoluteURL(t *testing.T) {
	now := time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC)
	ss := &MemorySessions{}
	ss.Put(context.Background(), &Session{Service: "treehole", Token: "t", Expires: now.Add(-time.Second)})
	c := &Client{Sessions: ss, Now: func() time.Time { return now }}
	req, _ := http.NewRequest("GET", "/x", nil)
	_, err := c.Do(context.Background(), "treehole", req)
	want := "not signed in to treehole: the session expired at 2030-02-28T23:59:59Z: run harness campus login treehole"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	req, _ = http.NewRequest("GET", "https://evil.example/x", nil)
	_, err = c.Do(context.Background(), "treehole", req)
	if err == nil || !strings.Contains(err.Error(), "must be a path") {
		t.Fatalf("absolute URL: %v", err)
	}
}

func TestCookieJarAndDevice(t *testing.T) {
	srv, _ := standIn(t)
	ctx := context.Background()
	db, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ss := NewSQLSessions(db)
	if _, err := Login(ctx, ss, "treehole", "old=1; keep=2", "Bearer jwt", time.UnixMilli(1e12)); err != nil {
		t.Fatal(err)
	}
	c := &Client{Sessions: ss, Bases: map[string]string{"treehole": srv.URL}}
	req, _ := http.NewRequest("GET", "/set", nil)
	resp, err := c.Do(ctx, "treehole", req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s, ok, err := ss.Get(ctx, "treehole")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if got := s.CookieHeader(); got != "fresh=v2; keep=2" {
		t.Errorf("cookies after reply: %q", got)
	}
	if len(s.Device) != 12 || s.Token != "jwt" {
		t.Errorf("device %q token %q", s.Device, s.Token)
	}
	// A new login keeps the device id.
	dev := s.Device
	if _, err := Login(ctx, ss, "treehole", "", "jwt2", time.UnixMilli(1e12)); err != nil {
		t.Fatal(err)
	}
	s, _, _ = ss.Get(ctx, "treehole")
	if s.Device != dev || s.Token != "jwt2" || s.Cookies != nil {
		t.Errorf("after re-login: %+v", s)
	}
	list, _ := ss.List(ctx)
	if len(list) != 1 || list[0].Service != "treehole" {
		t.Errorf("list %+v", list)
	}
	if err := Logout(ctx, ss, "treehole"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ss.Get(ctx, "treehole"); ok {
		t.Error("session survived logout")
	}
}

func TestLoginErrors(t *testing.T) {
	ss := &MemorySessions{}
	tests := []struct{ service, cookie, token, want string }{
		{"nope", "a=b", "", `campus login: unknown service "nope" (known: card, its, treehole, blackboard, elective, cwfw, cwpay, bdkj, library, library-space)`},
		{"its", "", "", "campus login its: give --cookie or --token"},
		{"treehole", "a=b", "", "campus login treehole: treehole signs requests with a token: give --token"},
		{"its", "novalue", "", `campus login its: cookie "novalue": want NAME=VALUE`},
		{"its", " ; ", "", "campus login its: no cookies given"},
	}
	for _, tc := range tests {
		_, err := Login(context.Background(), ss, tc.service, tc.cookie, tc.token, time.Now())
		if err == nil || err.Error() != tc.want {
			t.Errorf("Login(%q, %q, %q) = %v, want %q", tc.service, tc.cookie, tc.token, err, tc.want)
		}
	}
}

func FuzzParseCookies(f *testing.F) {
	for _, s := range []string{"a=1; b=2", "JSESSIONID=abc", "x", "=v", "a=b=c; ;d= e "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseCookies(s)
		if err != nil {
			return
		}
		// Invariant: printing and re-reading gives the same cookies.
		sess := Session{Cookies: m}
		m2, err := ParseCookies(sess.CookieHeader())
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("%q → %v → %q → %v, %v", s, m, sess.CookieHeader(), m2, err)
		}
	})
}

// Without a Transport the client speaks HTTP/1.1 only, even to a server
// that offers HTTP/2 (the card server cannot take HTTP/2).
func TestHTTP1Only(t *testing.T) {
	var proto string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { proto = r.Proto }))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	if !http1Transport.Protocols.HTTP1() || http1Transport.Protocols.HTTP2() {
		t.Fatalf("protocols %v", http1Transport.Protocols)
	}
	tr := http1Transport.Clone()
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	ss := &MemorySessions{}
	ss.Put(context.Background(), &Session{Service: "card", Token: "t"})
	c := &Client{Sessions: ss, Transport: tr, Bases: map[string]string{"card": srv.URL}}
	req, _ := http.NewRequest("GET", "/x", nil)
	resp, err := c.Do(context.Background(), "card", req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if proto != "HTTP/1.1" {
		t.Fatalf("the server saw %s", proto)
	}
	// The same server does speak HTTP/2 to a client that offers it.
	resp, err = srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if proto != "HTTP/2.0" {
		t.Fatalf("control: the server saw %s", proto)
	}
}

// The Treehole stand-in holds a JWT to the device id it was issued for (docs/CAMPUS-PROTOCOLS.md §5.1,
// §5.2), so a client that sent another device's uuid header would be caught.
func TestTreeholeDeviceKept(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	if res := r.signer.SignIn(ctx, "treehole", campustest.User, campustest.Password, SignInOptions{}); !res.OK {
		t.Fatal(res.Err)
	}
	get := func() error {
		req, _ := http.NewRequest("GET", "/chapi/api/v3/hole/list", nil)
		resp, err := r.client.Do(ctx, "treehole", req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatal(err)
	}
	s, _, _ := r.ss.Get(ctx, "treehole")
	s.Device = "0123456789ab"
	r.ss.Put(ctx, s)
	var ne *NotSignedInError
	if err := get(); !errors.As(err, &ne) {
		t.Fatalf("another device's uuid: %v", err)
	}
}

// Plugins never sign in (docs/CAMPUS-PROTOCOLS.md §2): a plugin request to a service's sign-in step, e.g.
// with an IAAA token of another account, would put that account's session in the person's
// stored one (cookies a reply sets are kept). The client refuses them before they are sent.
func TestSignInPathsRefused(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	for _, svc := range []string{"card", "its", "treehole", "elective", "cwfw"} {
		if res := r.signer.SignIn(ctx, svc, campustest.User, campustest.Password, SignInOptions{}); !res.OK {
			t.Fatal(res.Err)
		}
	}
	before := len(r.stand.Log)
	for _, tc := range []struct{ service, method, url string }{
		{"treehole", "GET", "/chapi/cas_iaaa_login?version=3&uuid=0123456789ab&plat=web&token=iaaa-other"},
		{"treehole", "GET", "/chapi//cas_iaaa_login?token=x"},
		{"card", "GET", "/berserker-auth/cas/login/pku?token=ST-other&targetUrl=x"},
		{"its", "POST", "/cas/webLogin"},
		{"its", "POST", "/cas/ITSweb"},
		{"its", "POST", "/CAS/webLogin"},
		{"elective", "GET", "/elective2008/ssoLogin.do?_rand=0.1&token=iaaa-other"},
		{"cwfw", "GET", "/WFManager/home2.jsp?token=iaaa-other"},
	} {
		req, _ := http.NewRequest(tc.method, tc.url, nil)
		if _, err := r.client.Do(ctx, tc.service, req); err == nil || !strings.Contains(err.Error(), "sign-in") {
			t.Errorf("%s %s: %v", tc.service, tc.url, err)
		}
	}
	if len(r.stand.Log) != before {
		t.Errorf("sent: %v", r.stand.Log[before:])
	}
	// The same pages without a token are ordinary pages.
	req, _ := http.NewRequest("GET", "/WFManager/home2.jsp", nil)
	if _, err := r.client.Do(ctx, "cwfw", req); err != nil {
		t.Fatal(err)
	}
}
