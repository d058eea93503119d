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

// ViewerOptions configure Join.
type ViewerOptions struct {
	// HTTPClient makes the requests and the WebSocket dial; nil means a client without Timeout.
	HTTPClient *http.Client
	// Backoff paces reconnects; zero means DefaultBackoff.
	Backoff Backoff
	// EventBuffer is the size of the Events channel; 0 means 64.
	EventBuffer int
}

// Viewer is the peer's end of a channel, what someone who opened the share link runs (seed 003
// “# 通道(对端)”): it read the sealed meta, claimed a seat with authKey and an ephemeral X25519
// key, and exchanges frames sealed with the per-peer key. The server never sees k, encKey or
// the per-peer key.
type Viewer struct {
	hc     *http.Client
	origin string
	id     string
	encKey [protocol.KeySize]byte
	key    [protocol.KeySize]byte
	peerID string
	token  string
	meta   json.RawMessage
	events chan Event
	sock   *socket
	cancel context.CancelFunc
	stop   <-chan struct{}

	mu          sync.Mutex
	expiresAt   time.Time
	ownerOnline bool
	reason      string
}

// Join opens link: GET /v1/c/{id} (status, sealed meta, chanPub), opens the meta with encKey,
// claims a seat (POST /v1/c/{id}/join; `conflict` when the channel is full, `forbidden` for a
// wrong key) and connects the peer socket, which reconnects with backoff until the channel
// ends, this viewer is kicked, or Leave is called.
func Join(ctx context.Context, link SecretLink, opts ViewerOptions) (*Viewer, error) {
	if link.IsZero() {
		return nil, errors.New("cloud viewer: empty link")
	}
	v := &Viewer{hc: opts.HTTPClient, origin: link.Origin(), id: link.ChannelID()}
	if v.hc == nil {
		v.hc = &http.Client{}
	}
	base := "/v1/c/" + url.PathEscape(v.id)
	var info protocol.ChannelInfoResponse
	if _, err := doJSON(ctx, v.hc, v.origin, http.MethodGet, base, "", nil, nil, &info); err != nil {
		return nil, err
	}
	if info.Status != "open" {
		return nil, fmt.Errorf("cloud viewer: the channel is %s: %w", info.Status, ErrChannelClosed)
	}
	k := link.secret()
	authKey := protocol.AuthKey(k)
	v.encKey = protocol.EncKey(k)
	var meta json.RawMessage
	if err := protocol.Open(v.encKey[:], &info.Meta, &meta); err != nil {
		return nil, fmt.Errorf("cloud viewer: meta: %w (wrong link?)", err)
	}
	v.meta = meta
	chanPub, err := protocol.DecodeKey32(info.ChanPub)
	if err != nil {
		return nil, fmt.Errorf("cloud viewer: chanPub: %w", err)
	}
	peerPriv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("cloud viewer: peer key: %w", err)
	}
	if v.key, err = protocol.ViewerPeerKey(peerPriv, chanPub, v.encKey[:]); err != nil {
		return nil, fmt.Errorf("cloud viewer: %w", err)
	}
	req := protocol.JoinRequest{AuthKey: protocol.B64.EncodeToString(authKey[:]), PeerPub: protocol.B64.EncodeToString(peerPriv.PublicKey().Bytes())}
	var joined protocol.JoinResponse
	if _, err := doJSON(ctx, v.hc, v.origin, http.MethodPost, base+"/join", "", nil, &req, &joined); err != nil {
		return nil, err
	}
	v.peerID, v.token = joined.PeerID, joined.PeerToken
	v.expiresAt = time.UnixMilli(info.ExpiresAt)
	v.ownerOnline = info.OwnerOnline
	buf := opts.EventBuffer
	if buf <= 0 {
		buf = 64
	}
	v.events = make(chan Event, buf)
	backoff := opts.Backoff
	if backoff == (Backoff{}) {
		backoff = DefaultBackoff
	}
	v.start(backoff)
	return v, nil
}

func (v *Viewer) start(backoff Backoff) {
	ctx, cancel := context.WithCancel(context.Background())
	v.cancel, v.stop = cancel, ctx.Done()
	s := newSocket()
	s.backoff = backoff
	u := wsURL(v.origin, "/v1/c/"+url.PathEscape(v.id)+"/ws?t="+url.QueryEscape(v.token))
	s.dial = func(ctx context.Context) (*websocket.Conn, error) {
		conn, err := dialWS(ctx, v.hc, u, nil)
		if IsCode(err, protocol.CodeUnauthorized) {
			// A peer token cannot be renewed: the seat is gone.
			return nil, &permanentError{err}
		}
		return conn, err
	}
	s.handle = v.handle
	s.state = func(up bool, err error) {
		if !up {
			emit(v.events, v.stop, Event{Type: EventDisconnected, Err: err})
		}
	}
	v.sock = s
	go func() {
		s.run(ctx)
		v.mu.Lock()
		reason := v.reason
		v.mu.Unlock()
		if reason == "" && !errors.Is(s.Err(), ErrStopped) {
			ev := Event{Type: EventClosed, Err: s.Err()}
			if errors.Is(s.Err(), ErrKicked) {
				ev.Reason = "kicked"
			}
			select {
			case v.events <- ev:
			default:
			}
		}
		close(v.events)
	}()
}

func (v *Viewer) handle(data []byte) error {
	f, err := protocol.DecodePeerInFrame(data)
	if err != nil {
		emit(v.events, v.stop, Event{Type: EventError, Err: fmt.Errorf("cloud viewer: bad frame from the server: %w", err)})
		return nil
	}
	switch f.T {
	case protocol.FrameHello:
		v.mu.Lock()
		v.ownerOnline, v.expiresAt = f.OwnerOnline, time.UnixMilli(f.ExpiresAt)
		v.mu.Unlock()
		emit(v.events, v.stop, Event{Type: EventConnected, PeerID: f.PeerID, Online: f.OwnerOnline, ExpiresAt: time.UnixMilli(f.ExpiresAt)})
	case protocol.FrameOwner:
		v.mu.Lock()
		v.ownerOnline = f.Online
		v.mu.Unlock()
		emit(v.events, v.stop, Event{Type: EventOwner, Online: f.Online})
	case protocol.FrameExtended:
		v.mu.Lock()
		v.expiresAt = time.UnixMilli(f.ExpiresAt)
		v.mu.Unlock()
		emit(v.events, v.stop, Event{Type: EventExtended, ExpiresAt: time.UnixMilli(f.ExpiresAt)})
	case protocol.FrameMsg:
		msg, err := protocol.OpenBytes(v.key[:], &f.Env)
		if err != nil || !json.Valid(msg) {
			emit(v.events, v.stop, Event{Type: EventError, Err: fmt.Errorf("cloud viewer: a frame did not open: %w", errOr(err, "not JSON"))})
			return nil
		}
		emit(v.events, v.stop, Event{Type: EventMessage, Msg: msg})
	case protocol.FrameClosed:
		v.mu.Lock()
		v.reason = f.Reason
		v.mu.Unlock()
		emit(v.events, v.stop, Event{Type: EventClosed, Reason: f.Reason})
		if f.Reason == "kicked" {
			return ErrKicked
		}
		return ErrChannelClosed
	case protocol.FrameError:
		emit(v.events, v.stop, Event{Type: EventError, Code: f.Code, Message: f.Message})
	}
	return nil
}

// PeerID is this viewer's seat.
func (v *Viewer) PeerID() string { return v.peerID }

// Meta is the channel's decrypted meta (JSON, as the owner sealed it; validate before use).
func (v *Viewer) Meta() json.RawMessage { return v.meta }

// OwnerOnline reports whether the owner was online at the last news.
func (v *Viewer) OwnerOnline() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ownerOnline
}

// ExpiresAt is the channel's expiry as last heard.
func (v *Viewer) ExpiresAt() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.expiresAt
}

// Events delivers what happens on the channel; it is closed when the viewer's part ends.
func (v *Viewer) Events() <-chan Event { return v.events }

// Done is closed when the peer socket stops for good; Err then says why.
func (v *Viewer) Done() <-chan struct{} { return v.sock.done }

// Err is nil while the viewer runs, then ErrChannelClosed, ErrKicked, ErrReplaced, ErrStopped
// or the error that refused the connection.
func (v *Viewer) Err() error { return v.sock.Err() }

// Connected reports whether the peer socket is up now.
func (v *Viewer) Connected() bool { return v.sock.connected() }

// Send seals msg with the per-peer key and sends it to the owner, waiting for the socket while
// ctx allows.
func (v *Viewer) Send(ctx context.Context, msg any) error {
	plain, err := marshalFrame(msg)
	if err != nil {
		return err
	}
	env, err := protocol.SealBytes(v.key[:], plain)
	if err != nil {
		return fmt.Errorf("cloud viewer: send: %w", err)
	}
	f := protocol.PeerOutFrame{T: protocol.FrameMsg, Env: env}
	return v.sock.write(ctx, f.AppendJSON(nil))
}

// MailboxMessage is one opened mailbox slot.
type MailboxMessage struct {
	Slot      string          // the MailboxSlot
	Msg       json.RawMessage // the opened JSON; validate before use
	ExpiresAt time.Time       // when the server drops the slot
}

// Mailbox reads the blobs the owner left (GET /v1/c/{id}/mailbox) and opens them with encKey.
// A slot that does not open is an error naming the slot.
func (v *Viewer) Mailbox(ctx context.Context) ([]MailboxMessage, error) {
	var resp protocol.MailboxListResponse
	if _, err := doJSON(ctx, v.hc, v.origin, http.MethodGet, "/v1/c/"+url.PathEscape(v.id)+"/mailbox", v.token, nil, nil, &resp); err != nil {
		return nil, err
	}
	out := make([]MailboxMessage, 0, len(resp.Items))
	for _, it := range resp.Items {
		msg, err := protocol.OpenBytes(v.encKey[:], &it.Env)
		if err != nil || !json.Valid(msg) {
			return nil, fmt.Errorf("cloud viewer: mailbox slot %s: %w", it.Slot, errOr(err, "not JSON"))
		}
		out = append(out, MailboxMessage{Slot: it.Slot, Msg: msg, ExpiresAt: time.UnixMilli(it.ExpiresAt)})
	}
	return out, nil
}

// Leave stops the peer socket; the seat stays claimed until the owner kicks it or the channel
// ends (the protocol has no leave request).
func (v *Viewer) Leave() {
	v.cancel()
	<-v.sock.done
}
