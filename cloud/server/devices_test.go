package server

import (
	"crypto/sha256"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\n got %s\nwant %s", name, got, want)
	}
}

func TestMeta(t *testing.T) {
	e := newEnv(t, nil)
	r := e.do("GET", "/v1/meta", "", nil)
	if r.status != 200 {
		t.Fatal(r.status)
	}
	var m protocol.MetaResponse
	if err := protocol.Decode(r.body, &m); err != nil {
		t.Fatalf("meta does not validate: %v", err)
	}
	// The salt is derived from a random server secret: mask it.
	masked := regexp.MustCompile(`"salt":"[A-Za-z0-9_-]{22}"`).ReplaceAll(r.body, []byte(`"salt":"SALT"`))
	golden(t, "meta.json", masked)
}

// nonceWithBits finds a nonce whose hash has exactly n leading zero bits.
func nonceWithBits(salt, sp, bp string, n int) string {
	prefix := protocol.PowPrefix(salt, sp, bp)
	for i := 0; ; i++ {
		s := strconv.Itoa(i)
		sum := sha256.Sum256(append(prefix, s...))
		if protocol.LeadingZeroBits(sum[:]) == n {
			return s
		}
	}
}

func TestRegister(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.PowDifficulty = 8; c.SaltRotation = time.Hour })
	m := e.meta()
	_, sp, bp := newKeys()
	post := func(salt, nonce string) resp {
		return e.do("POST", "/v1/devices", "", protocol.RegisterDeviceRequest{SignPub: sp, BoxPub: bp,
			Pow: protocol.PowSolution{Salt: salt, Nonce: nonce}})
	}
	// N−1 bits is refused, N bits accepted.
	if r := post(m.Pow.Salt, nonceWithBits(m.Pow.Salt, sp, bp, 7)); r.status != 400 || r.code() != "pow_invalid" {
		t.Errorf("7 bits: %d %s", r.status, r.body)
	}
	good := nonceWithBits(m.Pow.Salt, sp, bp, 8)
	// The previous salt still works after one rotation.
	e.clk.Add(time.Hour)
	if m2 := e.meta(); m2.Pow.Salt == m.Pow.Salt {
		t.Fatal("salt did not rotate")
	}
	r := post(m.Pow.Salt, good)
	if r.status != 200 {
		t.Fatalf("previous salt: %d %s", r.status, r.body)
	}
	// The same keys cannot register twice.
	if r := post(m.Pow.Salt, good); r.status != 409 || r.code() != "conflict" {
		t.Errorf("reused keys: %d %s", r.status, r.body)
	}
	// Two rotations later the salt is stale.
	e.clk.Add(time.Hour)
	_, sp, bp = newKeys()
	stale := nonceWithBits(m.Pow.Salt, sp, bp, 9)
	if r := post(m.Pow.Salt, stale); r.status != 400 || r.code() != "pow_invalid" ||
		string(r.body) != `{"error":{"code":"pow_invalid","message":"pow.salt is not the current or the previous salt; read GET /v1/meta again"}}`+"\n" {
		t.Errorf("stale salt: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v1/devices", "", `{"signPub":"x"}`); r.status != 400 || r.code() != "bad_request" {
		t.Errorf("bad body: %d %s", r.status, r.body)
	}
}

func TestRegisterRateLimit(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Registrations = RatePolicy{Name: "register", Quota: 2, Window: time.Hour} })
	e.register()
	e.register()
	r := e.do("POST", "/v1/devices", "", `{}`)
	if r.status != 429 || r.code() != "rate_limited" {
		t.Fatalf("third registration: %d %s", r.status, r.body)
	}
	h := r.header
	if h.Get("Retry-After") != "3600" || h.Get("RateLimit-Policy") != `"register";q=2;w=3600` || h.Get("RateLimit") != `"register";r=0;t=3600` {
		t.Errorf("headers: %v", h)
	}
	var b protocol.ErrorBody
	r.into(t, &b)
	if b.Error.RetryAfterS == nil || *b.Error.RetryAfterS != 3600 {
		t.Errorf("retryAfterS: %s", r.body)
	}
}

func TestAuthToken(t *testing.T) {
	e := newEnv(t, nil)
	d := e.register()
	tests := []struct {
		name   string
		mut    func(*protocol.AuthTokenRequest)
		resign bool
		status int
		body   string
	}{
		{"ok", nil, false, 200, ""},
		{"wrong aud", func(r *protocol.AuthTokenRequest) { r.Aud = "http://127.0.0.1:1" }, true, 401,
			`{"error":{"code":"unauthorized","message":"aud \"http://127.0.0.1:1\" is not this server's origin \"` + e.url + `\""}}`},
		// The seed's Base URL is http://localhost:8787: loopback spellings of the server's own
		// loopback origin name the same machine.
		{"aud localhost alias", func(r *protocol.AuthTokenRequest) { r.Aud = strings.Replace(e.url, "127.0.0.1", "localhost", 1) }, true, 200, ""},
		{"aud [::1] alias", func(r *protocol.AuthTokenRequest) { r.Aud = strings.Replace(e.url, "127.0.0.1", "[::1]", 1) }, true, 200, ""},
		{"aud localhost other port", func(r *protocol.AuthTokenRequest) { r.Aud = "http://localhost:1" }, true, 401,
			`{"error":{"code":"unauthorized","message":"aud \"http://localhost:1\" is not this server's origin \"` + e.url + `\""}}`},
		{"aud https alias", func(r *protocol.AuthTokenRequest) {
			r.Aud = strings.Replace(e.url, "http://127.0.0.1", "https://localhost", 1)
		}, true, 401, ""},
		{"aud other host same port", func(r *protocol.AuthTokenRequest) {
			r.Aud = strings.Replace(e.url, "127.0.0.1", "cloud.example.org", 1)
		}, true, 401, ""},
		{"ts 300001 ms early", func(r *protocol.AuthTokenRequest) { r.Ts -= 300_001 }, true, 401,
			`{"error":{"code":"unauthorized","message":"ts is 300001 ms from the server's clock; the limit is ±300000"}}`},
		{"ts 300001 ms late", func(r *protocol.AuthTokenRequest) { r.Ts += 300_001 }, true, 401,
			`{"error":{"code":"unauthorized","message":"ts is -300001 ms from the server's clock; the limit is ±300000"}}`},
		{"ts 300000 ms early", func(r *protocol.AuthTokenRequest) { r.Ts -= 300_000 }, true, 200, ""},
		{"bad signature", func(r *protocol.AuthTokenRequest) { r.Plugin = "demo"; r.Services = []string{"store"} }, false, 401,
			`{"error":{"code":"unauthorized","message":"bad signature"}}`},
		{"unknown device", func(r *protocol.AuthTokenRequest) { r.DeviceID = "AAAAAAAAAAAAAAAAAAAAAA" }, true, 401,
			`{"error":{"code":"unauthorized","message":"unknown device"}}`},
		{"push not offered", func(r *protocol.AuthTokenRequest) { r.Services = []string{"push"} }, true, 501,
			`{"error":{"code":"unsupported","message":"the push service is not offered by this provider"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := e.authReq(d, "card-share", "channels", "store")
			if tc.mut != nil {
				tc.mut(&req)
				if tc.resign {
					protocol.SignAuthChallenge(d.sign, &req)
				}
			}
			r := e.do("POST", "/v1/auth/token", "", req)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.body != "" && string(r.body) != tc.body+"\n" {
				t.Errorf("body %s\nwant %s", r.body, tc.body)
			}
		})
	}
	t.Run("replay", func(t *testing.T) {
		req := e.authReq(d, "card-share", "store")
		if r := e.do("POST", "/v1/auth/token", "", req); r.status != 200 {
			t.Fatalf("first: %d %s", r.status, r.body)
		}
		e.clk.Add(4 * time.Minute) // still inside the ±5 min window
		r := e.do("POST", "/v1/auth/token", "", req)
		if string(r.body) != `{"error":{"code":"unauthorized","message":"nonce already used"}}`+"\n" {
			t.Errorf("replay: %d %s", r.status, r.body)
		}
	})
	t.Run("token expires after 10 minutes", func(t *testing.T) {
		tok := e.token(d, "demo", "store")
		e.clk.Add(10*time.Minute - time.Millisecond)
		if r := e.do("GET", "/v1/store", tok, nil); r.status != 200 {
			t.Fatalf("before expiry: %d %s", r.status, r.body)
		}
		e.clk.Add(time.Millisecond)
		if r := e.do("GET", "/v1/store", tok, nil); r.status != 401 {
			t.Fatalf("after expiry: %d %s", r.status, r.body)
		}
	})
}

func TestDeleteDevice(t *testing.T) {
	e := newEnv(t, nil)
	d := e.register()
	tok := e.token(d, "demo", "store", "channels")
	other := e.register()
	otherTok := e.token(other, "demo", "store")
	e.do("PUT", "/v1/store/a", tok, `{"value":1}`)
	e.do("PUT", "/v1/store/a", otherTok, `{"value":2}`)
	sh, _ := e.openChannel(tok, 600, 1)
	v, _ := e.join(sh)
	peer := e.dial("/v1/c/"+sh.id+"/ws?t="+v.token, nil)
	peer.next() // hello
	if r := e.do("DELETE", "/v1/devices/me", tok, nil); r.status != 200 || string(r.body) != `{"ok":true}`+"\n" {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if got := peer.next(); got != `{"t":"closed","reason":"revoked"}` {
		t.Errorf("peer got %s", got)
	}
	if c := peer.closeCode(); c != 4010 {
		t.Errorf("close code %d", c)
	}
	if r := e.do("GET", "/v1/store/a", tok, nil); r.status != 401 {
		t.Errorf("old token after delete: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/c/"+sh.id, "", nil); r.status != 404 {
		t.Errorf("channel after delete: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/store/a", otherTok, nil); r.status != 200 {
		t.Errorf("other device's data: %d %s", r.status, r.body)
	}
}

func TestClientIP(t *testing.T) {
	tests := []struct {
		remote, xff string
		trust       bool
		want        string
	}{
		{"192.0.2.7:5555", "", false, "192.0.2.7"},
		{"[2001:db8:1:2:3:4:5:6]:443", "", false, "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.9]:1", "", false, "192.0.2.9"},
		{"127.0.0.1:1", "198.51.100.1, 203.0.113.5", false, "127.0.0.1"},
		{"127.0.0.1:1", "198.51.100.1, 203.0.113.5", true, "203.0.113.5"},
		{"127.0.0.1:1", "2001:db8::1", true, "2001:db8::/64"},
	}
	for _, tc := range tests {
		s := &Server{cfg: Config{TrustForwardedFor: tc.trust}}
		r := &http.Request{RemoteAddr: tc.remote, Header: http.Header{}}
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := s.clientIP(r); got != tc.want {
			t.Errorf("%s %q trust=%v: %s, want %s", tc.remote, tc.xff, tc.trust, got, tc.want)
		}
	}
}
