package client

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// Broadcast is the Send target meaning every online peer.
const Broadcast = "*"

// OpenOptions are the options of OpenChannel (seed 003 “# 插件指南” §5, CreateChannelRequest).
type OpenOptions struct {
	// TTL is the channel's lifetime, 60 s – 24 h (rounded up to seconds); 0 means 15 minutes.
	TTL time.Duration
	// MaxPeers is how many viewers may hold a seat; 0 means 1, so a forwarded link is useless
	// once the first viewer claimed it.
	MaxPeers int
	// Page is the viewer page (PageName) the share link redirects to, e.g. "view".
	Page string
	// Meta is any JSON value, sealed with encKey: viewers read it before joining.
	Meta any
	// EventBuffer is the size of the Events channel; 0 means 64. The socket stops reading while
	// the buffer is full, so a slow consumer slows the relay rather than losing frames.
	EventBuffer int
}

// Channel is the owner's end of a relay channel. The server relays envelopes it cannot open:
// the share secret k lives only in the SecretLink, and each frame is sealed with the per-peer
// key HKDF(X25519(chanPriv, peerPub) ‖ encKey, salt = chanPub ‖ peerPub, info = …/peer).
// A background socket keeps the owner WebSocket open and reconnects with backoff; Events
// reports what happens until the channel ends.
type Channel struct {
	p        *Plugin
	id       string
	link     SecretLink
	encKey   [protocol.KeySize]byte
	chanPriv *ecdh.PrivateKey
	events   chan Event
	sock     *socket
	cancel   context.CancelFunc
	stop     <-chan struct{} // closed by Close and Disconnect: stop delivering events
	maxPeers int             // the seats the channel has: the server cannot make the owner keep more

	mu        sync.Mutex
	expiresAt time.Time
	peers     map[string]*peerState
	reason    string
	presence  chan struct{} // closed and replaced when a peer's presence or seat changes
}

type peerState struct {
	pub    string
	key    [protocol.KeySize]byte
	online bool
	// joining: the seat was claimed (a join frame) but its socket has not come up yet. The
	// server drops a frame to it with `conflict`, so Send waits for its presence instead.
	joining bool
}

// PeerInfo is what the owner knows of one viewer.
type PeerInfo struct {
	PeerID string // the seat
	Online bool   // whether its socket is connected
}

// OpenChannel opens a channel (POST /v1/channels) and connects its owner socket. The plugin
// must have the "channels" service.
func (p *Plugin) OpenChannel(ctx context.Context, opts OpenOptions) (*Channel, error) {
	ttl := opts.TTL
	if ttl == 0 {
		ttl = 15 * time.Minute
	}
	maxPeers := int64(max(opts.MaxPeers, 1))
	if opts.Page != "" && !protocol.ValidPageName(opts.Page) {
		return nil, fmt.Errorf("cloud channel: page %q is not a PageName", opts.Page)
	}
	var k [protocol.ShareSecretSize]byte
	if _, err := rand.Read(k[:]); err != nil {
		return nil, fmt.Errorf("cloud channel: share secret: %w", err)
	}
	authKey := protocol.AuthKey(k[:])
	chanPriv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("cloud channel: channel key: %w", err)
	}
	ch := &Channel{p: p, encKey: protocol.EncKey(k[:]), chanPriv: chanPriv, peers: map[string]*peerState{}, maxPeers: int(maxPeers)}
	meta := opts.Meta
	if meta == nil {
		meta = struct{}{}
	}
	env, err := protocol.Seal(ch.encKey[:], meta)
	if err != nil {
		return nil, fmt.Errorf("cloud channel: meta: %w", err)
	}
	req := protocol.CreateChannelRequest{
		TtlS:     int64((ttl + time.Second - 1) / time.Second),
		MaxPeers: &maxPeers,
		JoinHash: protocol.JoinHash(authKey[:]),
		Meta:     &env,
		ChanPub:  protocol.B64.EncodeToString(chanPriv.PublicKey().Bytes()),
		Page:     opts.Page,
	}
	var resp protocol.CreateChannelResponse
	if err := p.do(ctx, http.MethodPost, "/v1/channels", nil, &req, &resp); err != nil {
		return nil, err
	}
	ch.id = resp.ID
	ch.expiresAt = time.UnixMilli(resp.ExpiresAt)
	ch.link = newSecretLink(p.c.origin, resp.ID, k[:])
	buf := opts.EventBuffer
	if buf <= 0 {
		buf = 64
	}
	ch.events = make(chan Event, buf)
	ch.start()
	return ch, nil
}

func (ch *Channel) start() {
	ch.presence = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	ch.cancel, ch.stop = cancel, ctx.Done()
	s := newSocket()
	s.backoff = ch.p.c.backoff
	path := "/v1/channels/" + url.PathEscape(ch.id) + "/ws"
	s.dial = func(ctx context.Context) (*websocket.Conn, error) {
		tok, err := ch.p.Token(ctx)
		if err != nil {
			return nil, err
		}
		conn, err := dialWS(ctx, ch.p.c.hc, wsURL(ch.p.c.origin, path), http.Header{"Authorization": {"Bearer " + tok}})
		if IsCode(err, protocol.CodeUnauthorized) {
			ch.p.invalidate(tok)
		}
		return conn, err
	}
	s.handle = ch.handle
	s.state = func(up bool, err error) {
		if up {
			return // EventConnected follows the hello frame, once peers are known
		}
		emit(ch.events, ctx.Done(), Event{Type: EventDisconnected, Err: err})
	}
	ch.sock = s
	go func() {
		s.run(ctx)
		ch.mu.Lock()
		reason := ch.reason
		ch.mu.Unlock()
		if reason == "" && !errors.Is(s.Err(), ErrStopped) {
			// Ended without a closed frame (replaced, refused): say so if there is room.
			select {
			case ch.events <- Event{Type: EventClosed, Err: s.Err()}:
			default:
			}
		}
		close(ch.events)
	}()
}

// handle processes one server → owner frame; after `closed` it returns ErrChannelClosed.
func (ch *Channel) handle(data []byte) error {
	f, err := protocol.DecodeOwnerInFrame(data)
	if err != nil {
		emit(ch.events, ch.stop, Event{Type: EventError, Err: fmt.Errorf("cloud channel: bad frame from the server: %w", err)})
		return nil
	}
	switch f.T {
	case protocol.FrameHello:
		ch.mu.Lock()
		ch.expiresAt = time.UnixMilli(f.ExpiresAt)
		known := ch.peers
		ch.peers = make(map[string]*peerState, len(f.Peers))
		ch.mu.Unlock()
		for i, ps := range f.Peers {
			if i >= ch.maxPeers {
				emit(ch.events, ch.stop, Event{Type: EventError, PeerID: ps.PeerID, Err: fmt.Errorf("cloud channel: the server's hello lists more than the channel's %d seats", ch.maxPeers)})
				break
			}
			st := known[ps.PeerID]
			if st == nil || st.pub != ps.PeerPub {
				if st, err = ch.newPeer(ps.PeerPub); err != nil {
					emit(ch.events, ch.stop, Event{Type: EventError, PeerID: ps.PeerID, Err: err})
					continue
				}
			}
			ch.mu.Lock() // st may be shared with the old map, which Send reads under mu
			st.online, st.joining = ps.Online, false
			ch.peers[ps.PeerID] = st
			ch.mu.Unlock()
		}
		ch.mu.Lock()
		ch.presenceChanged()
		ch.mu.Unlock()
		emit(ch.events, ch.stop, Event{Type: EventConnected, ExpiresAt: time.UnixMilli(f.ExpiresAt)})
	case protocol.FrameJoin:
		ch.mu.Lock()
		_, known := ch.peers[f.PeerID]
		full := !known && len(ch.peers) >= ch.maxPeers
		ch.mu.Unlock()
		if full {
			emit(ch.events, ch.stop, Event{Type: EventError, PeerID: f.PeerID, Err: fmt.Errorf("cloud channel: the server announced a join past the channel's %d seats", ch.maxPeers)})
			return nil
		}
		st, err := ch.newPeer(f.PeerPub)
		if err != nil {
			emit(ch.events, ch.stop, Event{Type: EventError, PeerID: f.PeerID, Err: err})
			return nil
		}
		// The seat is claimed; the viewer is online once its socket is up, which the server
		// tells with a `peer` frame (a frame sent before would be dropped with `conflict`).
		st.joining = true
		ch.mu.Lock()
		ch.peers[f.PeerID] = st
		ch.presenceChanged()
		ch.mu.Unlock()
		emit(ch.events, ch.stop, Event{Type: EventJoin, PeerID: f.PeerID})
	case protocol.FrameLeave:
		ch.mu.Lock()
		delete(ch.peers, f.PeerID)
		ch.presenceChanged()
		ch.mu.Unlock()
		emit(ch.events, ch.stop, Event{Type: EventLeave, PeerID: f.PeerID})
	case protocol.FramePeer:
		ch.mu.Lock()
		if st := ch.peers[f.PeerID]; st != nil {
			st.online, st.joining = f.Online, false
		}
		ch.presenceChanged()
		ch.mu.Unlock()
		emit(ch.events, ch.stop, Event{Type: EventPeer, PeerID: f.PeerID, Online: f.Online})
	case protocol.FrameMsg:
		ch.mu.Lock()
		st := ch.peers[f.PeerID]
		ch.mu.Unlock()
		if st == nil {
			emit(ch.events, ch.stop, Event{Type: EventError, PeerID: f.PeerID, Err: fmt.Errorf("cloud channel: a frame from unknown peer %s", f.PeerID)})
			return nil
		}
		msg, err := protocol.OpenBytes(st.key[:], &f.Env)
		if err != nil || !json.Valid(msg) {
			emit(ch.events, ch.stop, Event{Type: EventError, PeerID: f.PeerID, Err: fmt.Errorf("cloud channel: a frame from peer %s did not open: %w", f.PeerID, errOr(err, "not JSON"))})
			return nil
		}
		emit(ch.events, ch.stop, Event{Type: EventMessage, PeerID: f.PeerID, Msg: msg})
	case protocol.FrameClosed:
		ch.mu.Lock()
		ch.reason = f.Reason
		ch.mu.Unlock()
		emit(ch.events, ch.stop, Event{Type: EventClosed, Reason: f.Reason})
		return ErrChannelClosed
	case protocol.FrameError:
		emit(ch.events, ch.stop, Event{Type: EventError, Code: f.Code, Message: f.Message})
	}
	return nil
}

// presenceChanged wakes the Sends waiting for a joining peer. ch.mu is held.
func (ch *Channel) presenceChanged() {
	close(ch.presence)
	ch.presence = make(chan struct{})
}

func errOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

func (ch *Channel) newPeer(pub string) (*peerState, error) {
	raw, err := protocol.DecodeKey32(pub)
	if err != nil {
		return nil, fmt.Errorf("cloud channel: peerPub: %w", err)
	}
	key, err := protocol.OwnerPeerKey(ch.chanPriv, raw, ch.encKey[:])
	if err != nil {
		return nil, fmt.Errorf("cloud channel: %w", err)
	}
	return &peerState{pub: pub, key: key}, nil
}

// ID is the channel id (not secret).
func (ch *Channel) ID() string { return ch.id }

// Link is the share link. It never prints; see SecretLink.
func (ch *Channel) Link() SecretLink { return ch.link }

// ExpiresAt is when the channel expires, as last heard from the server.
func (ch *Channel) ExpiresAt() time.Time {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.expiresAt
}

// Events delivers what happens on the channel; it is closed when the channel ends (closed,
// expired, replaced, Close or Disconnect).
func (ch *Channel) Events() <-chan Event { return ch.events }

// Done is closed when the channel's socket stops for good; Err then says why.
func (ch *Channel) Done() <-chan struct{} { return ch.sock.done }

// Err is nil while the channel runs, then ErrChannelClosed, ErrReplaced, ErrStopped or the
// error that refused the connection.
func (ch *Channel) Err() error { return ch.sock.Err() }

// Connected reports whether the owner socket is up now.
func (ch *Channel) Connected() bool { return ch.sock.connected() }

// Peers lists the viewers that hold a seat, in no particular order.
func (ch *Channel) Peers() []PeerInfo {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	out := make([]PeerInfo, 0, len(ch.peers))
	for id, st := range ch.peers {
		out = append(out, PeerInfo{PeerID: id, Online: st.online})
	}
	return out
}

// Send seals msg (any JSON-marshallable value) for peer `to` and sends it; Broadcast ("*")
// seals it separately for every online peer. While the socket reconnects Send waits, as long
// as ctx allows; so it does for a peer that has just joined until its socket is up (the
// server would drop the frame with `conflict`). Frames to offline or unknown peers are
// refused here rather than dropped by the server; use the Mailbox for offline delivery.
func (ch *Channel) Send(ctx context.Context, to string, msg any) error {
	plain, err := marshalFrame(msg)
	if err != nil {
		return err
	}
	type target struct {
		id  string
		key [protocol.KeySize]byte
	}
	var targets []target
	for {
		ch.mu.Lock()
		if to == Broadcast {
			for id, st := range ch.peers {
				if st.online {
					targets = append(targets, target{id, st.key})
				}
			}
			ch.mu.Unlock()
			break
		}
		st := ch.peers[to]
		if st != nil && st.online {
			targets = append(targets, target{to, st.key})
			ch.mu.Unlock()
			break
		}
		if st == nil || !st.joining {
			ch.mu.Unlock()
			return fmt.Errorf("cloud channel: send: peer %s is not online", to)
		}
		wake := ch.presence
		ch.mu.Unlock()
		select {
		case <-wake:
		case <-ch.sock.done:
			return ch.sock.Err()
		case <-ctx.Done():
			return fmt.Errorf("cloud channel: send: peer %s has joined but its socket is not up yet: %w", to, ctx.Err())
		}
	}
	buf := make([]byte, 0, 128+len(plain)*4/3)
	for _, t := range targets {
		env, err := protocol.SealBytes(t.key[:], plain)
		if err != nil {
			return fmt.Errorf("cloud channel: send: %w", err)
		}
		f := protocol.OwnerOutFrame{T: protocol.FrameMsg, To: t.id, Env: env}
		buf = f.AppendJSON(buf[:0])
		if err := ch.sock.write(ctx, buf); err != nil {
			return err
		}
	}
	return nil
}

// marshalFrame marshals a frame's plaintext and checks it fits the frame limit once sealed
// (limits.channels.frameBytes, 4,096 bytes of ciphertext by default): the server would drop
// a larger frame with an error frame, long after Send returned.
func marshalFrame(msg any) ([]byte, error) {
	plain, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("cloud channel: send: %w", err)
	}
	if n := len(plain) + protocol.Overhead; n > FrameBytes {
		return nil, fmt.Errorf("cloud channel: send: the frame is %d bytes sealed; the limit is %d", n, FrameBytes)
	}
	return plain, nil
}

// FrameBytes is the largest sealed frame (ciphertext ‖ tag) Send and Viewer.Send accept: the
// default limits.channels.frameBytes of seed 003.
const FrameBytes = 4096

// Kick drops a viewer and frees its seat, so the same link can serve someone else.
func (ch *Channel) Kick(ctx context.Context, peerID string) error {
	if !protocol.ValidPeerID(peerID) {
		return fmt.Errorf("cloud channel: kick: %q is not a PeerId", peerID)
	}
	f := protocol.OwnerOutFrame{T: protocol.FrameKick, PeerID: peerID}
	if err := ch.sock.write(ctx, f.AppendJSON(nil)); err != nil {
		return err
	}
	ch.mu.Lock()
	delete(ch.peers, peerID)
	ch.presenceChanged()
	ch.mu.Unlock()
	return nil
}

// Extend sets the expiry to now + ttl (capped by the server at limits.channels.maxTtlS) and
// returns the new expiry.
func (ch *Channel) Extend(ctx context.Context, ttl time.Duration) (time.Time, error) {
	req := protocol.PatchChannelRequest{TtlS: int64((ttl + time.Second - 1) / time.Second)}
	var resp protocol.PatchChannelResponse
	if err := ch.p.do(ctx, http.MethodPatch, "/v1/channels/"+url.PathEscape(ch.id), nil, &req, &resp); err != nil {
		return time.Time{}, err
	}
	exp := time.UnixMilli(resp.ExpiresAt)
	ch.mu.Lock()
	ch.expiresAt = exp
	ch.mu.Unlock()
	return exp, nil
}

// Close closes the channel on the server (viewers get `closed`, reason "owner") and stops the
// socket. Events is closed soon after.
func (ch *Channel) Close(ctx context.Context) error {
	err := ch.p.do(ctx, http.MethodDelete, "/v1/channels/"+url.PathEscape(ch.id), nil, nil, nil)
	if IsCode(err, protocol.CodeGone) {
		err = nil
	}
	ch.Disconnect()
	return err
}

// CloseChannel closes the channel id this device and plugin opened (DELETE /v1/channels/{id})
// without its keys or an owner socket: what a host needs to end a channel whose keys it has
// already forgotten. A channel already closed or expired (gone) counts as closed; a protocol
// error is a *protocol.Error (not_found when the provider never had it, forbidden when another
// device or plugin owns it), a transport failure the http client's error.
func (p *Plugin) CloseChannel(ctx context.Context, id string) error {
	if !protocol.ValidID(id) {
		return errors.New("cloud channel: close: not a channel id")
	}
	err := p.do(ctx, http.MethodDelete, "/v1/channels/"+url.PathEscape(id), nil, nil, nil)
	if IsCode(err, protocol.CodeGone) {
		err = nil
	}
	return err
}

// Disconnect stops the owner socket without closing the channel on the server; viewers see the
// owner go offline. The channel lives on until it expires.
func (ch *Channel) Disconnect() {
	ch.cancel()
	<-ch.sock.done
}

// Mailbox is the channel's mailbox: sealed blobs viewers can read while the owner is offline.
// They are sealed with encKey (derived from the link), not a per-peer key, because a viewer
// may join after the owner left, when no per-peer key exists yet.
func (ch *Channel) Mailbox() *Mailbox { return &Mailbox{ch: ch} }

// Mailbox writes the channel's mailbox slots (owner only).
type Mailbox struct{ ch *Channel }

// Put seals msg with encKey into slot (MailboxSlot) for ttl (rounded up to seconds, ≥ 1 s).
func (m *Mailbox) Put(ctx context.Context, slot string, msg any, ttl time.Duration) error {
	if !protocol.ValidMailboxSlot(slot) {
		return fmt.Errorf("cloud mailbox: %q is not a MailboxSlot", slot)
	}
	env, err := protocol.Seal(m.ch.encKey[:], msg)
	if err != nil {
		return fmt.Errorf("cloud mailbox: %w", err)
	}
	req := protocol.MailboxPutRequest{Env: &env, TtlS: max(1, int64((ttl+time.Second-1)/time.Second))}
	return m.ch.p.do(ctx, http.MethodPut, m.path()+"/"+url.PathEscape(slot), nil, &req, nil)
}

// Delete removes one slot.
func (m *Mailbox) Delete(ctx context.Context, slot string) error {
	if !protocol.ValidMailboxSlot(slot) {
		return fmt.Errorf("cloud mailbox: %q is not a MailboxSlot", slot)
	}
	return m.ch.p.do(ctx, http.MethodDelete, m.path()+"/"+url.PathEscape(slot), nil, nil, nil)
}

// Clear removes every slot.
func (m *Mailbox) Clear(ctx context.Context) error {
	return m.ch.p.do(ctx, http.MethodDelete, m.path(), nil, nil, nil)
}

func (m *Mailbox) path() string { return "/v1/channels/" + url.PathEscape(m.ch.id) + "/mailbox" }
