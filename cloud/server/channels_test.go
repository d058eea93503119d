package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// owner is a connected owner with its channel.
type owner struct {
	sh  share
	tok string
	ws  *wsc
}

func (e *env) ownerUp(maxPeers int64) owner {
	e.t.Helper()
	tok := e.token(e.register(), "card-share", "channels")
	sh, r := e.openChannel(tok, 900, maxPeers)
	if r.status != 200 {
		e.t.Fatalf("open: %d %s", r.status, r.body)
	}
	ws := e.dial("/v1/channels/"+sh.id+"/ws", ownerHdr(tok))
	var hello protocol.OwnerInFrame
	if err := json.Unmarshal([]byte(ws.next()), &hello); err != nil || hello.T != "hello" || hello.ID != sh.id {
		e.t.Fatalf("owner hello: %+v %v", hello, err)
	}
	return owner{sh: sh, tok: tok, ws: ws}
}

func mustFrame[T any](t *testing.T, s string, dec func([]byte) (T, error)) T {
	t.Helper()
	f, err := dec([]byte(s))
	if err != nil {
		t.Fatalf("frame %s: %v", s, err)
	}
	return f
}

func TestChannelExchangeOverWebSocket(t *testing.T) {
	e := newEnv(t, nil)
	o := e.ownerUp(1)
	v, r := e.join(o.sh)
	if r.status != 200 {
		t.Fatalf("join: %d %s", r.status, r.body)
	}
	join := mustFrame(t, o.ws.next(), protocol.DecodeOwnerInFrame)
	if join.T != "join" || join.PeerID != v.peerID {
		t.Fatalf("owner join frame: %+v", join)
	}
	peer := e.dial("/v1/c/"+o.sh.id+"/ws?t="+v.token, nil)
	hello := mustFrame(t, peer.next(), protocol.DecodePeerInFrame)
	if hello.T != "hello" || hello.PeerID != v.peerID || !hello.OwnerOnline {
		t.Fatalf("peer hello: %+v", hello)
	}
	if got := o.ws.next(); got != `{"t":"peer","peerId":"`+v.peerID+`","online":true,"at":1796025600000}` {
		t.Errorf("presence: %s", got)
	}
	// Owner → peer, sealed with the per-peer key the owner derives.
	peerPub, _ := protocol.DecodeKey32(join.PeerPub)
	ownerKey, err := protocol.OwnerPeerKey(o.sh.chanPriv, peerPub, o.sh.encKey[:])
	if err != nil {
		t.Fatal(err)
	}
	env1, _ := protocol.Seal(ownerKey[:], map[string]string{"code": "1234"})
	o.ws.send(protocol.OwnerOutFrame{T: "msg", To: v.peerID, Env: env1})
	msg := mustFrame(t, peer.next(), protocol.DecodePeerInFrame)
	var got map[string]string
	if err := protocol.Open(v.key[:], &msg.Env, &got); err != nil || got["code"] != "1234" {
		t.Fatalf("peer opened %v, %v", got, err)
	}
	// Peer → owner.
	env2, _ := protocol.Seal(v.key[:], map[string]string{"ack": "ok"})
	peer.send(protocol.PeerOutFrame{T: "msg", Env: env2})
	back := mustFrame(t, o.ws.next(), protocol.DecodeOwnerInFrame)
	if back.T != "msg" || back.PeerID != v.peerID {
		t.Fatalf("owner got %+v", back)
	}
	if err := protocol.Open(ownerKey[:], &back.Env, &got); err != nil || got["ack"] != "ok" {
		t.Fatalf("owner opened %v, %v", got, err)
	}
	// Pings.
	peer.send(`{"t":"ping"}`)
	if f := peer.next(); f != `{"t":"pong","at":1796025600000}` {
		t.Errorf("peer pong: %s", f)
	}
	o.ws.send(`{"t":"ping"}`)
	if f := o.ws.next(); f != `{"t":"pong","at":1796025600000}` {
		t.Errorf("owner pong: %s", f)
	}
	// A frame the server cannot parse is answered with an error frame, not a disconnect.
	peer.send(`{"t":"kick","peerId":"x"}`)
	if f := peer.next(); f != `{"t":"error","code":"bad_request","message":"t: unknown peer frame type \"kick\""}` {
		t.Errorf("bad frame: %s", f)
	}
	// Peer goes away: the owner sees it offline; a frame to it is a conflict.
	peer.c.CloseNow()
	if f := o.ws.next(); f != `{"t":"peer","peerId":"`+v.peerID+`","online":false,"at":1796025600000}` {
		t.Errorf("offline presence: %s", f)
	}
	o.ws.send(protocol.OwnerOutFrame{T: "msg", To: v.peerID, Env: env1})
	if f := o.ws.next(); f != `{"t":"error","code":"conflict","message":"peer `+v.peerID+` is offline; use the mailbox"}` {
		t.Errorf("to offline peer: %s", f)
	}
}

func TestChannelReplacedConnection(t *testing.T) {
	e := newEnv(t, nil)
	o := e.ownerUp(1)
	second := e.dial("/v1/channels/"+o.sh.id+"/ws?t="+o.tok, nil)
	if f := mustFrame(t, second.next(), protocol.DecodeOwnerInFrame); f.T != "hello" {
		t.Fatalf("second owner: %+v", f)
	}
	if c := o.ws.closeCode(); c != 4009 {
		t.Errorf("replaced owner closed with %d, want 4009", c)
	}
}

func TestChannelFramesLimits(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Limits = protocol.DefaultLimits()
		c.Limits.Channels.FramesPerMin = 3
		c.Limits.Channels.FrameBytes = 64
	})
	o := e.ownerUp(1)
	v, _ := e.join(o.sh)
	o.ws.next() // join
	peer := e.dial("/v1/c/"+o.sh.id+"/ws?t="+v.token, nil)
	peer.next()                                                // hello
	o.ws.next()                                                // presence
	small, _ := protocol.SealBytes(v.key[:], make([]byte, 48)) // 64 bytes of ciphertext
	big, _ := protocol.SealBytes(v.key[:], make([]byte, 49))   // 65
	peer.send(protocol.PeerOutFrame{T: "msg", Env: big})
	if f := peer.next(); f != `{"t":"error","code":"payload_too_large","message":"frame ciphertext is 65 bytes, the limit is 64"}` {
		t.Errorf("oversized: %s", f)
	}
	peer.send(protocol.PeerOutFrame{T: "msg", Env: small})
	if f := mustFrame(t, o.ws.next(), protocol.DecodeOwnerInFrame); f.T != "msg" {
		t.Errorf("small frame: %+v", f)
	}
	peer.send(protocol.PeerOutFrame{T: "msg", Env: small})
	o.ws.next()
	peer.send(protocol.PeerOutFrame{T: "msg", Env: small}) // fourth frame in the minute
	if f := peer.next(); f != `{"t":"error","code":"rate_limited","message":"over the frame rate: 3 frames per minute"}` {
		t.Errorf("over rate: %s", f)
	}
	e.clk.Add(2 * time.Minute)
	peer.send(protocol.PeerOutFrame{T: "msg", Env: small})
	if f := mustFrame(t, o.ws.next(), protocol.DecodeOwnerInFrame); f.T != "msg" {
		t.Errorf("after a minute: %+v", f)
	}
	// The owner's budget is framesPerMin × maxPeers = 3.
	for range 3 {
		o.ws.send(protocol.OwnerOutFrame{T: "msg", To: v.peerID, Env: small})
		peer.next()
	}
	o.ws.send(protocol.OwnerOutFrame{T: "msg", To: v.peerID, Env: small})
	if f := o.ws.next(); f != `{"t":"error","code":"rate_limited","message":"over the frame rate: 3 frames per minute"}` {
		t.Errorf("owner over rate: %s", f)
	}
}

func TestChannelMaxPeersKickRejoin(t *testing.T) {
	e := newEnv(t, nil)
	o := e.ownerUp(1)
	v1, r := e.join(o.sh)
	if r.status != 200 {
		t.Fatal(r.status)
	}
	o.ws.next() // join
	if _, r := e.join(o.sh); r.status != 409 ||
		string(r.body) != `{"error":{"code":"conflict","message":"the channel is full (1 of 1 seats taken)"}}`+"\n" {
		t.Fatalf("second viewer: %d %s", r.status, r.body)
	}
	peer := e.dial("/v1/c/"+o.sh.id+"/ws?t="+v1.token, nil)
	peer.next()
	o.ws.next()
	o.ws.send(protocol.OwnerOutFrame{T: "kick", PeerID: v1.peerID})
	if f := peer.next(); f != `{"t":"closed","reason":"kicked"}` {
		t.Errorf("kicked peer got %s", f)
	}
	if c := peer.closeCode(); c != 4003 {
		t.Errorf("kick close code %d", c)
	}
	if f := o.ws.next(); f != `{"t":"leave","peerId":"`+v1.peerID+`","at":1796025600000}` {
		t.Errorf("owner leave: %s", f)
	}
	// The kicked token is dead; the seat is free again.
	if r := e.do("GET", "/v1/c/"+o.sh.id+"/mailbox", v1.token, nil); r.status != 401 {
		t.Errorf("kicked token: %d %s", r.status, r.body)
	}
	v2, r := e.join(o.sh)
	if r.status != 200 || v2.peerID == v1.peerID {
		t.Fatalf("rejoin: %d %s", r.status, r.body)
	}
	if f := mustFrame(t, o.ws.next(), protocol.DecodeOwnerInFrame); f.T != "join" || f.PeerID != v2.peerID {
		t.Errorf("rejoin frame %+v", f)
	}
	o.ws.send(`{"t":"kick","peerId":"nobody"}`)
	if f := o.ws.next(); f != `{"t":"error","code":"not_found","message":"no peer nobody"}` {
		t.Errorf("kick unknown: %s", f)
	}
}

func TestChannelExpiry(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.token(e.register(), "card-share", "channels")
	sh, _ := e.openChannel(tok, 60, 1)
	ow := e.dial("/v1/channels/"+sh.id+"/ws", ownerHdr(tok))
	ow.next()
	v, _ := e.join(sh)
	ow.next()
	peer := e.dial("/v1/c/"+sh.id+"/ws?t="+v.token, nil)
	peer.next()
	ow.next()
	e.clk.Add(59 * time.Second)
	e.srv.Sweep(context.Background())
	e.clk.Add(time.Second)
	e.srv.Sweep(context.Background())
	if f := peer.next(); f != `{"t":"closed","reason":"expired"}` {
		t.Errorf("peer: %s", f)
	}
	if c := peer.closeCode(); c != 4010 {
		t.Errorf("peer close %d", c)
	}
	if f := ow.next(); f != `{"t":"closed","reason":"expired"}` {
		t.Errorf("owner: %s", f)
	}
	if c := ow.closeCode(); c != 4010 {
		t.Errorf("owner close %d", c)
	}
	var info protocol.ChannelInfoResponse
	e.do("GET", "/v1/c/"+sh.id, "", nil).into(t, &info)
	if info.Status != "expired" {
		t.Errorf("status %s", info.Status)
	}
	if _, r := e.join(sh); r.status != 410 || r.code() != "gone" {
		t.Errorf("join expired: %d %s", r.status, r.body)
	}
}

func TestChannelExtendAndClose(t *testing.T) {
	e := newEnv(t, nil)
	o := e.ownerUp(2)
	v, _ := e.join(o.sh)
	peer := e.dial("/v1/c/"+o.sh.id+"/ws?t="+v.token, nil)
	peer.next()
	r := e.do("PATCH", "/v1/channels/"+o.sh.id, o.tok, `{"ttlS":100000}`)
	if r.status != 200 || string(r.body) != `{"expiresAt":1796112000000}`+"\n" { // capped at 86,400 s
		t.Fatalf("extend: %d %s", r.status, r.body)
	}
	if f := peer.next(); f != `{"t":"extended","expiresAt":1796112000000}` {
		t.Errorf("extended: %s", f)
	}
	other := e.token(e.register(), "card-share", "channels")
	if r := e.do("DELETE", "/v1/channels/"+o.sh.id, other, nil); r.status != 403 || r.code() != "forbidden" {
		t.Errorf("stranger close: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", "/v1/channels/"+o.sh.id, o.tok, nil); r.status != 200 {
		t.Fatalf("close: %d %s", r.status, r.body)
	}
	if f := peer.next(); f != `{"t":"closed","reason":"owner"}` {
		t.Errorf("peer: %s", f)
	}
	if c := peer.closeCode(); c != 4010 {
		t.Errorf("peer close %d", c)
	}
	if r := e.do("DELETE", "/v1/channels/"+o.sh.id, o.tok, nil); r.status != 410 {
		t.Errorf("close twice: %d %s", r.status, r.body)
	}
	if r := e.do("PATCH", "/v1/channels/nochannel1", o.tok, `{"ttlS":60}`); r.status != 404 {
		t.Errorf("unknown: %d %s", r.status, r.body)
	}
}

func TestChannelCreateErrors(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.token(e.register(), "card-share", "channels")
	tests := []struct {
		ttl, peers int64
		status     int
		body       string
	}{
		{59, 1, 400, `{"error":{"code":"bad_request","message":"ttlS: 59 is outside 60–86400"}}`},
		{86401, 1, 400, `{"error":{"code":"bad_request","message":"ttlS: 86401 is outside 60–86400"}}`},
		{60, 6, 400, `{"error":{"code":"bad_request","message":"maxPeers: 6 is over the limit of 5"}}`},
	}
	for _, tc := range tests {
		_, r := e.openChannel(tok, tc.ttl, tc.peers)
		if r.status != tc.status || string(r.body) != tc.body+"\n" {
			t.Errorf("ttl %d peers %d: %d %s", tc.ttl, tc.peers, r.status, r.body)
		}
	}
	for i := range 5 {
		if _, r := e.openChannel(tok, 60, 0); r.status != 200 {
			t.Fatalf("channel %d: %d %s", i, r.status, r.body)
		}
	}
	if _, r := e.openChannel(tok, 60, 0); r.status != 413 ||
		string(r.body) != `{"error":{"code":"quota","message":"this device already has 5 open channels"}}`+"\n" {
		t.Errorf("sixth: %d %s", r.status, r.body)
	}
	storeOnly := e.token(e.register(), "card-share", "store")
	if _, r := e.openChannel(storeOnly, 60, 0); r.status != 403 {
		t.Errorf("no channels service: %d", r.status)
	}
}

func TestJoinErrors(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Limits = protocol.DefaultLimits()
		c.Limits.JoinsPerIPPerMin = 3
	})
	o := e.ownerUp(1)
	bad := o.sh
	bad.authKey[0] ^= 1
	if _, r := e.join(bad); r.status != 403 || string(r.body) != `{"error":{"code":"forbidden","message":"wrong authKey"}}`+"\n" {
		t.Errorf("wrong authKey: %d %s", r.status, r.body)
	}
	zero := e.do("POST", "/v1/c/"+o.sh.id+"/join", "", protocol.JoinRequest{
		AuthKey: protocol.B64.EncodeToString(o.sh.authKey[:]), PeerPub: protocol.B64.EncodeToString(make([]byte, 32))})
	if zero.status != 400 || string(zero.body) != `{"error":{"code":"bad_request","message":"peerPub: a low-order X25519 key"}}`+"\n" {
		t.Errorf("all-zero peerPub: %d %s", zero.status, zero.body)
	}
	missing := o.sh
	missing.id = "AAAAAAAAAAAAAAAAAAAAAA"
	if _, r := e.join(missing); r.status != 404 {
		t.Errorf("unknown channel: %d %s", r.status, r.body)
	}
	e.join(o.sh)
	_, r := e.join(o.sh)
	if r.status != 429 || r.header.Get("Retry-After") != "60" || r.header.Get("RateLimit-Policy") != `"join";q=3;w=60` {
		t.Errorf("fourth join: %d %s %v", r.status, r.body, r.header)
	}
}

func TestChannelInfo(t *testing.T) {
	e := newEnv(t, nil)
	o := e.ownerUp(1)
	var info protocol.ChannelInfoResponse
	r := e.do("GET", "/v1/c/"+o.sh.id, "", nil)
	if err := protocol.Decode(r.body, &info); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	var meta map[string]string
	if err := protocol.Open(o.sh.encKey[:], &info.Meta, &meta); err != nil || meta["nameHint"] != "王_明" {
		t.Errorf("meta %v %v", meta, err)
	}
	if info.Status != "open" || !info.OwnerOnline || info.ExpiresAt != 1796025600000+900_000 {
		t.Errorf("info %+v", info)
	}
}

func TestPeerSSEAndSend(t *testing.T) {
	e := newEnv(t, nil)
	o := e.ownerUp(1)
	v, _ := e.join(o.sh)
	o.ws.next() // join
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/v1/c/"+o.sh.id+"/events?t="+v.token, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(res.Body)
	next := func() string {
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "data: ") {
				return l[6:]
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return ""
	}
	if f := mustFrame(t, next(), protocol.DecodePeerInFrame); f.T != "hello" || f.PeerID != v.peerID {
		t.Fatalf("hello %+v", f)
	}
	o.ws.next() // presence
	peerPub := protocol.B64.EncodeToString(v.priv.PublicKey().Bytes())
	pp, _ := protocol.DecodeKey32(peerPub)
	ownerKey, _ := protocol.OwnerPeerKey(o.sh.chanPriv, pp, o.sh.encKey[:])
	sealed, _ := protocol.Seal(ownerKey[:], "to the browser")
	o.ws.send(protocol.OwnerOutFrame{T: "msg", To: v.peerID, Env: sealed})
	msg := mustFrame(t, next(), protocol.DecodePeerInFrame)
	var s string
	if err := protocol.Open(v.key[:], &msg.Env, &s); err != nil || s != "to the browser" {
		t.Fatalf("opened %q %v", s, err)
	}
	reply, _ := protocol.Seal(v.key[:], "from the browser")
	b, _ := json.Marshal(protocol.PeerOutFrame{T: "msg", Env: reply})
	if r := e.do("POST", "/v1/c/"+o.sh.id+"/send", v.token, string(b)); r.status != 200 || string(r.body) != `{"ok":true}`+"\n" {
		t.Fatalf("send: %d %s", r.status, r.body)
	}
	got := mustFrame(t, o.ws.next(), protocol.DecodeOwnerInFrame)
	if err := protocol.Open(ownerKey[:], &got.Env, &s); err != nil || s != "from the browser" {
		t.Fatalf("owner opened %q %v", s, err)
	}
	if r := e.do("POST", "/v1/c/"+o.sh.id+"/send", v.token, `{"t":"ping"}`); r.status != 200 {
		t.Fatalf("ping: %d", r.status)
	}
	if f := next(); f != `{"t":"pong","at":1796025600000}` {
		t.Errorf("pong on stream: %s", f)
	}
	if r := e.do("POST", "/v1/c/"+o.sh.id+"/send", "", `{"t":"ping"}`); r.status != 401 {
		t.Errorf("no token: %d", r.status)
	}
	// The owner goes offline: a send is a conflict, and the stream hears about it.
	o.ws.c.CloseNow()
	if f := next(); f != `{"t":"owner","online":false}` {
		t.Errorf("owner offline: %s", f)
	}
	if r := e.do("POST", "/v1/c/"+o.sh.id+"/send", v.token, string(b)); r.status != 409 ||
		string(r.body) != `{"error":{"code":"conflict","message":"the owner is offline"}}`+"\n" {
		t.Errorf("send to offline owner: %d %s", r.status, r.body)
	}
	// Closing the channel ends the stream after a closed frame.
	e.do("DELETE", "/v1/channels/"+o.sh.id, o.tok, nil)
	if f := next(); f != `{"t":"closed","reason":"owner"}` {
		t.Errorf("closed: %s", f)
	}
}

func TestMailbox(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Limits = protocol.DefaultLimits()
		c.Limits.Channels.MailboxSlots = 2
	})
	tok := e.token(e.register(), "card-share", "channels")
	sh, _ := e.openChannel(tok, 600, 1) // the owner never connects
	blob, _ := protocol.Seal(sh.encKey[:], map[string]string{"last": "code"})
	put := func(slot string, ttl int64) resp {
		return e.do("PUT", "/v1/channels/"+sh.id+"/mailbox/"+slot, tok, protocol.MailboxPutRequest{Env: &blob, TtlS: ttl})
	}
	if r := put("latest", 60); r.status != 200 {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	put("b", 1)
	if r := put("c", 60); r.status != 413 || string(r.body) != `{"error":{"code":"quota","message":"the mailbox is full: 2 mailbox slots"}}`+"\n" {
		t.Errorf("third slot: %d %s", r.status, r.body)
	}
	if r := put("bad/slot", 60); r.status != 404 && r.status != 400 {
		t.Errorf("bad slot: %d", r.status)
	}
	v, _ := e.join(sh)
	e.clk.Add(2 * time.Second) // "b" expires
	r := e.do("GET", "/v1/c/"+sh.id+"/mailbox", v.token, nil)
	var list protocol.MailboxListResponse
	if err := protocol.Decode(r.body, &list); err != nil || len(list.Items) != 1 || list.Items[0].Slot != "latest" {
		t.Fatalf("mailbox: %s %v", r.body, err)
	}
	var got map[string]string
	if err := protocol.Open(sh.encKey[:], &list.Items[0].Env, &got); err != nil || got["last"] != "code" {
		t.Errorf("opened %v %v", got, err)
	}
	if r := e.do("DELETE", "/v1/channels/"+sh.id+"/mailbox/latest", tok, nil); r.status != 200 {
		t.Errorf("delete slot: %d", r.status)
	}
	if r := e.do("DELETE", "/v1/channels/"+sh.id+"/mailbox/latest", tok, nil); r.status != 404 {
		t.Errorf("delete twice: %d", r.status)
	}
	put("x", 60)
	if r := e.do("DELETE", "/v1/channels/"+sh.id+"/mailbox", tok, nil); r.status != 200 {
		t.Errorf("clear: %d", r.status)
	}
	if r := e.do("GET", "/v1/c/"+sh.id+"/mailbox", v.token, nil); string(r.body) != `{"items":[]}`+"\n" {
		t.Errorf("after clear: %s", r.body)
	}
}

func TestChannelRecordRetention(t *testing.T) {
	e := newEnv(t, nil)
	d := e.register()
	tok := e.token(d, "card-share", "channels")
	sh, _ := e.openChannel(tok, 60, 1)
	e.clk.Add(61 * time.Second)
	e.srv.Sweep(context.Background())
	if r := e.do("GET", "/v1/c/"+sh.id, "", nil); r.status != 200 || !strings.Contains(string(r.body), `"status":"expired"`) {
		t.Fatalf("just expired: %d %s", r.status, r.body)
	}
	e.clk.Add(24 * time.Hour)
	e.srv.Sweep(context.Background())
	if r := e.do("GET", "/v1/c/"+sh.id, "", nil); r.status != 404 {
		t.Errorf("a day later: %d %s", r.status, r.body)
	}
	// An expired channel no longer counts toward the five open ones.
	tok = e.token(d, "card-share", "channels")
	for i := range 5 {
		if _, r := e.openChannel(tok, 60, 1); r.status != 200 {
			t.Fatalf("channel %d: %d", i, r.status)
		}
	}
}

func TestChannelExpiredBetweenSweeps(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.token(e.register(), "card-share", "channels")
	sh, _ := e.openChannel(tok, 60, 1)
	o := owner{sh: sh, tok: tok, ws: e.dial("/v1/channels/"+sh.id+"/ws", ownerHdr(tok))}
	o.ws.next()            // hello
	e.clk.Add(time.Minute) // the TTL, with no sweep run
	if r := e.do("PATCH", "/v1/channels/"+o.sh.id, o.tok, `{"ttlS":600}`); r.status != 410 ||
		string(r.body) != `{"error":{"code":"gone","message":"the channel is expired"}}`+"\n" {
		t.Errorf("extend: %d %s", r.status, r.body)
	}
	if f := o.ws.next(); f != `{"t":"closed","reason":"expired"}` {
		t.Errorf("owner: %s", f)
	}
	if c := o.ws.closeCode(); c != 4010 {
		t.Errorf("close %d", c)
	}
}
