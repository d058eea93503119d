package server

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// clock is an injectable clock tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a running server on loopback with a fake clock.
type env struct {
	mu    sync.Mutex
	socks []*websocket.Conn
	t     *testing.T
	srv   *Server
	hs    *httptest.Server
	clk   *clock
	url   string
}

var testPages = fstest.MapFS{
	"demo/view/index.html": {Data: []byte("<!doctype html><title>view</title><script src=\"/w/demo/view/view.js\"></script>")},
	"demo/view/view.js":    {Data: []byte("console.log(1)")},
}

func newEnv(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	st, err := OpenSQLite(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	cfg := DefaultConfig(st)
	cfg.Now = clk.Now
	cfg.PowDifficulty = 4
	cfg.SweepInterval = time.Hour // tests call Sweep themselves
	cfg.Pages = testPages
	cfg.WriteTimeout = 2 * time.Second
	hs := httptest.NewUnstartedServer(nil)
	hs.Start()
	cfg.Origin = hs.URL
	if mod != nil {
		mod(&cfg)
	}
	srv, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = srv
	e := &env{t: t, srv: srv, hs: hs, clk: clk, url: hs.URL}
	t.Cleanup(func() {
		// Client sockets go first, so that Close does not wait for handshakes nobody answers.
		e.mu.Lock()
		for _, c := range e.socks {
			c.CloseNow()
		}
		e.mu.Unlock()
		srv.Close()
		hs.CloseClientConnections()
		hs.Close()
		st.Close()
	})
	return e
}

// resp is a decoded HTTP answer.
type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) code() string {
	var b protocol.ErrorBody
	json.Unmarshal(r.body, &b)
	return string(b.Error.Code)
}

func (r resp) into(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

func (e *env) do(method, path, token string, body any, hdr ...string) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultTransport.(*http.Transport).RoundTrip(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// device is a registered identity.
type device struct {
	id      string
	sign    ed25519.PrivateKey
	signPub string
	boxPub  string
}

func newKeys() (ed25519.PrivateKey, string, string) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	box, _ := ecdh.X25519().GenerateKey(rand.Reader)
	return priv, protocol.B64.EncodeToString(pub), protocol.B64.EncodeToString(box.PublicKey().Bytes())
}

func (e *env) meta() protocol.MetaResponse {
	var m protocol.MetaResponse
	e.do("GET", "/v1/meta", "", nil).into(e.t, &m)
	return m
}

func (e *env) register() device {
	e.t.Helper()
	priv, sp, bp := newKeys()
	m := e.meta()
	n, err := protocol.SolvePow(context.Background(), m.Pow.Salt, sp, bp, m.Pow.Difficulty)
	if err != nil {
		e.t.Fatal(err)
	}
	r := e.do("POST", "/v1/devices", "", protocol.RegisterDeviceRequest{SignPub: sp, BoxPub: bp,
		Pow: protocol.PowSolution{Salt: m.Pow.Salt, Nonce: n}})
	if r.status != 200 {
		e.t.Fatalf("register: %d %s", r.status, r.body)
	}
	var out protocol.RegisterDeviceResponse
	r.into(e.t, &out)
	return device{id: out.DeviceID, sign: priv, signPub: sp, boxPub: bp}
}

func (e *env) authReq(d device, plugin string, services ...string) protocol.AuthTokenRequest {
	n := make([]byte, 16)
	rand.Read(n)
	req := protocol.AuthTokenRequest{Aud: e.srv.cfg.Origin, DeviceID: d.id, Plugin: plugin, Services: services,
		Ts: e.clk.Now().UnixMilli(), Nonce: protocol.B64.EncodeToString(n)}
	protocol.SignAuthChallenge(d.sign, &req)
	return req
}

func (e *env) token(d device, plugin string, services ...string) string {
	e.t.Helper()
	r := e.do("POST", "/v1/auth/token", "", e.authReq(d, plugin, services...))
	if r.status != 200 {
		e.t.Fatalf("token: %d %s", r.status, r.body)
	}
	var out protocol.AuthTokenResponse
	r.into(e.t, &out)
	return out.Token
}

// share is an owner's view of an open channel: the secret and keys.
type share struct {
	id       string
	k        []byte
	encKey   [32]byte
	authKey  [32]byte
	chanPriv *ecdh.PrivateKey
}

func (e *env) openChannel(tok string, ttlS int64, maxPeers int64) (share, resp) {
	e.t.Helper()
	sh := share{k: make([]byte, 32)}
	rand.Read(sh.k)
	sh.encKey, sh.authKey = protocol.EncKey(sh.k), protocol.AuthKey(sh.k)
	sh.chanPriv, _ = ecdh.X25519().GenerateKey(rand.Reader)
	meta, _ := protocol.Seal(sh.encKey[:], map[string]any{"nameHint": "王_明"})
	req := map[string]any{"ttlS": ttlS, "joinHash": protocol.JoinHash(sh.authKey[:]), "meta": meta,
		"chanPub": protocol.B64.EncodeToString(sh.chanPriv.PublicKey().Bytes()), "page": "view"}
	if maxPeers > 0 {
		req["maxPeers"] = maxPeers
	}
	r := e.do("POST", "/v1/channels", tok, req)
	if r.status == 200 {
		var out protocol.CreateChannelResponse
		r.into(e.t, &out)
		sh.id = out.ID
	}
	return sh, r
}

// viewer is a joined peer.
type viewer struct {
	peerID string
	token  string
	priv   *ecdh.PrivateKey
	key    [32]byte
}

func (e *env) join(sh share) (viewer, resp) {
	e.t.Helper()
	var v viewer
	v.priv, _ = ecdh.X25519().GenerateKey(rand.Reader)
	r := e.do("POST", "/v1/c/"+sh.id+"/join", "", protocol.JoinRequest{
		AuthKey: protocol.B64.EncodeToString(sh.authKey[:]), PeerPub: protocol.B64.EncodeToString(v.priv.PublicKey().Bytes())})
	if r.status == 200 {
		var out protocol.JoinResponse
		r.into(e.t, &out)
		v.peerID, v.token = out.PeerID, out.PeerToken
		v.key, _ = protocol.ViewerPeerKey(v.priv, sh.chanPriv.PublicKey().Bytes(), sh.encKey[:])
	}
	return v, r
}

func (e *env) dial(path string, hdr http.Header) *wsc {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+path, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		st := 0
		if res != nil {
			st = res.StatusCode
		}
		e.t.Fatalf("dial %s: %v (status %d)", path, err, st)
	}
	c.SetReadLimit(1 << 20)
	e.mu.Lock()
	e.socks = append(e.socks, c)
	e.mu.Unlock()
	return &wsc{t: e.t, c: c}
}

// wsc is a test WebSocket client.
type wsc struct {
	t *testing.T
	c *websocket.Conn
}

func (w *wsc) send(v any) {
	w.t.Helper()
	var b []byte
	switch x := v.(type) {
	case string:
		b = []byte(x)
	default:
		b, _ = json.Marshal(v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, b); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

// next reads one frame as raw JSON; it fails the test on timeout or close.
func (w *wsc) next() string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, b, err := w.c.Read(ctx)
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	return string(b)
}

// closeCode reads until the socket closes and returns the close status.
func (w *wsc) closeCode() websocket.StatusCode {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		_, b, err := w.c.Read(ctx)
		if err != nil {
			return websocket.CloseStatus(err)
		}
		w.t.Logf("frame before close: %s", b)
	}
}

func ownerHdr(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
