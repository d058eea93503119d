package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// seat is a peer holding a place in a room.
type seat struct {
	p    Peer
	conn *conn
	rate frameRate
	at   int64 // when conn attached, Unix ns: the newer of two connections wins

	// remote is the node holding the seat's connection when it is not here ("" for none).
	remote   string
	remoteAt int64
}

// room is an open channel with its live parties. Its mutex guards everything in it; the hub's
// mutex is always taken before a room's, never after.
type room struct {
	mu        sync.Mutex
	ch        Channel // Peers unused: see seats
	closed    bool
	owner     *conn
	ownerRate frameRate
	seats     map[string]*seat // by peer id
	byToken   map[string]*seat // by token hash
	ownerAt   int64            // when owner attached, Unix ns

	// With several nodes: the bus, this room's subscription, and the node holding the owner's
	// connection when it is not here ("" for none).
	cl            *cluster
	unsub         func()
	remoteOwner   string
	remoteOwnerAt int64
}

// hub is the relay: the open channels that have been touched since start, by id.
type hub struct {
	s     *Server
	cl    *cluster // nil on a single node
	mu    sync.Mutex
	rooms map[string]*room
}

func newHub(s *Server) *hub { return &hub{s: s, rooms: map[string]*room{}} }

// room returns the open room id, loading it from storage. not_found for an unknown id, gone
// for a closed or expired channel.
func (h *hub) room(ctx context.Context, id string) (*room, error) {
	if !protocol.ValidID(id) {
		return nil, errf(protocol.CodeNotFound, "no channel %q", id)
	}
	now := h.s.nowMs()
	h.mu.Lock()
	if rm := h.rooms[id]; rm != nil {
		rm.mu.Lock()
		expired := rm.ch.ExpiresAt <= now
		rm.mu.Unlock()
		h.mu.Unlock()
		if expired { // between two sweeps: expire it now rather than serve it
			h.expire(ctx, now)
			h.mu.Lock()
			still := h.rooms[id] == rm // extended on another node (see recheckExpiry)
			h.mu.Unlock()
			if !still {
				return nil, errf(protocol.CodeGone, "the channel is expired")
			}
		}
		return rm, nil
	}
	defer h.mu.Unlock()
	unsub := func() {}
	if h.cl != nil {
		var err error
		if unsub, err = h.cl.subscribe(id); err != nil {
			return nil, fmt.Errorf("bus: %w", err)
		}
	}
	ch, err := h.s.st.Channel(ctx, id)
	if errors.Is(err, ErrNotFound) {
		unsub()
		return nil, errf(protocol.CodeNotFound, "no channel %q", id)
	} else if err != nil {
		unsub()
		return nil, err
	}
	if ch.Status != protocol.StatusOpen {
		unsub()
		return nil, errf(protocol.CodeGone, "the channel is %s", ch.Status)
	}
	if ch.ExpiresAt <= now {
		unsub()
		if err := h.s.st.SetChannelStatus(ctx, id, protocol.StatusExpired); err != nil {
			return nil, err
		}
		return nil, errf(protocol.CodeGone, "the channel is expired")
	}
	rm := &room{ch: ch, seats: map[string]*seat{}, byToken: map[string]*seat{}, cl: h.cl, unsub: unsub}
	for _, p := range ch.Peers {
		st := &seat{p: p}
		rm.seats[p.ID] = st
		rm.byToken[p.TokenHash] = st
	}
	rm.ch.Peers = nil
	h.rooms[id] = rm
	rm.pub(event{K: evSync}) // the other nodes answer with who is online there
	return rm, nil
}

// ownerOnline reports whether a loaded room has its owner connected.
func (h *hub) ownerOnline(id string) bool {
	h.mu.Lock()
	rm := h.rooms[id]
	h.mu.Unlock()
	if rm == nil {
		return false
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.owner != nil || rm.remoteOwner != ""
}

// dropRoom forgets a room and closes it for everyone with reason, on every node (the storage
// record is the caller's to update).
func (h *hub) dropRoom(id, reason string) {
	if h.cl != nil {
		h.cl.publish(id, event{K: evClosed, Reason: reason})
	}
	h.dropLocal(id, reason)
}

// dropLocal forgets a room and closes it for the parties connected to this node.
func (h *hub) dropLocal(id, reason string) {
	h.mu.Lock()
	rm := h.rooms[id]
	delete(h.rooms, id)
	h.mu.Unlock()
	if rm != nil {
		rm.closeAll(reason)
	}
}

// expire closes every loaded room whose expiry has passed.
func (h *hub) expire(ctx context.Context, now int64) {
	if h.cl != nil {
		h.recheckExpiry(ctx, now)
	}
	var due []*room
	h.mu.Lock()
	for id, rm := range h.rooms {
		rm.mu.Lock()
		if rm.ch.ExpiresAt <= now {
			due = append(due, rm)
			delete(h.rooms, id)
		}
		rm.mu.Unlock()
	}
	h.mu.Unlock()
	for _, rm := range due {
		if err := h.s.st.SetChannelStatus(ctx, rm.ch.ID, protocol.StatusExpired); err != nil {
			h.s.log.Error("expire channel", "channel", rm.ch.ID, "err", err)
		}
		rm.closeAll(protocol.ReasonExpired)
	}
}

// recheckExpiry, with several nodes, reads the stored expiry of every loaded room that seems
// due before it is expired: another node may have extended the channel (its event lost or still
// in flight), and the stored record is the truth.
func (h *hub) recheckExpiry(ctx context.Context, now int64) {
	var due []*room
	h.mu.Lock()
	for _, rm := range h.rooms {
		rm.mu.Lock()
		if rm.ch.ExpiresAt <= now {
			due = append(due, rm)
		}
		rm.mu.Unlock()
	}
	h.mu.Unlock()
	for _, rm := range due {
		ch, err := h.s.st.Channel(ctx, rm.ch.ID)
		if err == nil && ch.Status == protocol.StatusOpen && ch.ExpiresAt > now {
			rm.mu.Lock()
			rm.ch.ExpiresAt = max(rm.ch.ExpiresAt, ch.ExpiresAt)
			rm.mu.Unlock()
		}
	}
}

// shutdown closes every live connection with 1001 (server going away: reconnect).
func (h *hub) shutdown() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, rm := range h.rooms {
		rm.mu.Lock()
		if rm.owner != nil {
			rm.owner.close(protocol.CloseGoingAway, "server shutdown")
		}
		for _, st := range rm.seats {
			if st.conn != nil {
				st.conn.close(protocol.CloseGoingAway, "server shutdown")
			}
		}
		rm.mu.Unlock()
	}
}

// ----- frames -----

func ownerFrame(f protocol.OwnerInFrame) []byte { return f.AppendJSON(make([]byte, 0, 64)) }
func peerFrame(f protocol.PeerInFrame) []byte   { return f.AppendJSON(make([]byte, 0, 64)) }

func ownerError(code protocol.ErrorCode, msg string) []byte {
	return ownerFrame(protocol.OwnerInFrame{T: protocol.FrameError, Code: code, Message: msg})
}

func peerError(code protocol.ErrorCode, msg string) []byte {
	return peerFrame(protocol.PeerInFrame{T: protocol.FrameError, Code: code, Message: msg})
}

// closeAll tells every party the channel closed (a `closed` frame, then close code 4010).
func (rm *room) closeAll(reason string) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.closed {
		return
	}
	rm.closed = true
	if rm.unsub != nil {
		rm.unsub()
	}
	if rm.owner != nil {
		rm.owner.enqueue(ownerFrame(protocol.OwnerInFrame{T: protocol.FrameClosed, Reason: reason}))
		rm.owner.close(protocol.CloseClosed, "channel "+reason)
		rm.owner = nil
	}
	b := peerFrame(protocol.PeerInFrame{T: protocol.FrameClosed, Reason: reason})
	for _, st := range rm.seats {
		if st.conn != nil {
			st.conn.enqueue(b)
			st.conn.close(protocol.CloseClosed, "channel "+reason)
			st.conn = nil
		}
	}
}

// attachOwner makes c the owner's connection, replacing (4009) an older one, and greets it.
// False when the room closed meanwhile.
func (rm *room) attachOwner(c *conn, now int64) bool {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.closed {
		return false
	}
	wasOnline := rm.owner != nil || rm.remoteOwner != ""
	if rm.owner != nil {
		rm.owner.close(protocol.CloseReplaced, "replaced by a newer connection")
	}
	rm.owner = c
	rm.ownerAt = time.Now().UnixNano()
	if rm.remoteOwner != "" { // one owner socket: the other node closes its own
		rm.remoteOwner = ""
	}
	rm.pub(event{K: evOwner, On: true, At: rm.ownerAt})
	hello := protocol.OwnerInFrame{T: protocol.FrameHello, ID: rm.ch.ID, ExpiresAt: rm.ch.ExpiresAt,
		Peers: make([]protocol.PeerSummary, 0, len(rm.seats))}
	for _, st := range rm.seats {
		hello.Peers = append(hello.Peers, protocol.PeerSummary{PeerID: st.p.ID, PeerPub: st.p.Pub,
			JoinedAt: st.p.JoinedAt, Online: st.conn != nil || st.remote != ""})
	}
	sortPeers(hello.Peers)
	c.enqueue(ownerFrame(hello))
	if !wasOnline {
		b := peerFrame(protocol.PeerInFrame{T: protocol.FrameOwner, Online: true})
		for _, st := range rm.seats {
			if st.conn != nil {
				st.conn.enqueue(b)
			}
		}
	}
	return true
}

func sortPeers(p []protocol.PeerSummary) {
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && (p[j].JoinedAt < p[j-1].JoinedAt ||
			p[j].JoinedAt == p[j-1].JoinedAt && p[j].PeerID < p[j-1].PeerID); j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}

// detachOwner forgets c if it is still the owner's connection and tells the peers.
func (rm *room) detachOwner(c *conn) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.owner != c {
		return
	}
	rm.owner = nil
	rm.pub(event{K: evOwner, On: false})
	if rm.remoteOwner != "" {
		return
	}
	rm.toPeers(peerFrame(protocol.PeerInFrame{T: protocol.FrameOwner, Online: false}))
}

// attachPeer makes c the connection of the seat with this token hash, replacing (4009) an older
// one, greets it and tells the owner. Nil when there is no such seat (kicked, or never joined).
func (rm *room) attachPeer(tokenHash string, c *conn, now int64) *seat {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	st := rm.byToken[tokenHash]
	if st == nil || rm.closed {
		return nil
	}
	if st.conn != nil {
		st.conn.close(protocol.CloseReplaced, "replaced by a newer connection")
	} else if rm.owner != nil && st.remote == "" {
		rm.owner.enqueue(ownerFrame(protocol.OwnerInFrame{T: protocol.FramePeer, PeerID: st.p.ID, Online: true, At: now}))
	}
	st.conn = c
	st.at = time.Now().UnixNano()
	st.remote = "" // one socket per seat: the other node closes its own
	rm.pub(event{K: evPeer, Peer: st.p.ID, On: true, At: st.at})
	c.enqueue(peerFrame(protocol.PeerInFrame{T: protocol.FrameHello, PeerID: st.p.ID,
		OwnerOnline: rm.owner != nil || rm.remoteOwner != "", ExpiresAt: rm.ch.ExpiresAt}))
	return st
}

// detachPeer forgets c if it is still the seat's connection and tells the owner.
func (rm *room) detachPeer(st *seat, c *conn, now int64) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if st.conn != c {
		return
	}
	st.conn = nil
	if rm.seats[st.p.ID] == st {
		rm.pub(event{K: evPeer, Peer: st.p.ID, On: false})
	}
	if rm.owner != nil && rm.seats[st.p.ID] == st && st.remote == "" {
		rm.owner.enqueue(ownerFrame(protocol.OwnerInFrame{T: protocol.FramePeer, PeerID: st.p.ID, Online: false, At: now}))
	}
}

// addSeat adds p's seat if the room does not have it yet, and returns the room's seat for p;
// nil when the room is closed.
func (rm *room) addSeat(p Peer) *seat {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.closed {
		return nil
	}
	if st := rm.seats[p.ID]; st != nil {
		return st
	}
	st := &seat{p: p}
	rm.seats[p.ID] = st
	rm.byToken[p.TokenHash] = st
	return st
}

// seatByToken finds a seat by its token hash.
func (rm *room) seatByToken(tokenHash string) *seat {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.closed {
		return nil
	}
	return rm.byToken[tokenHash]
}

// relayOwnerFrame handles one frame from the owner and returns the frame to answer the owner with
// (an error or a pong), or nil.
func (s *Server) relayOwnerFrame(rm *room, data []byte) []byte {
	f, err := protocol.DecodeOwnerOutFrame(data)
	if err != nil {
		return ownerError(protocol.CodeBadRequest, err.Error())
	}
	now := s.nowMs()
	lim := &s.cfg.Limits.Channels
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.closed {
		return nil
	}
	if !rm.ownerRate.allow(now, int(lim.FramesPerMin)*rm.ch.MaxPeers) {
		return ownerError(protocol.CodeRateLimited, "over the frame rate: "+itoa(lim.FramesPerMin*int64(rm.ch.MaxPeers))+" frames per minute")
	}
	switch f.T {
	case protocol.FramePing:
		return ownerFrame(protocol.OwnerInFrame{T: protocol.FramePong, At: now})
	case protocol.FrameMsg:
		if n := f.Env.CiphertextLen(); int64(n) > lim.FrameBytes {
			return ownerError(protocol.CodePayloadTooLarge, "frame ciphertext is "+itoa(int64(n))+" bytes, the limit is "+itoa(lim.FrameBytes))
		}
		st := rm.seats[f.To]
		if st == nil {
			return ownerError(protocol.CodeNotFound, "no peer "+f.To)
		}
		if st.conn == nil && st.remote == "" {
			return ownerError(protocol.CodeConflict, "peer "+f.To+" is offline; use the mailbox")
		}
		out := protocol.PeerInFrame{T: protocol.FrameMsg, Env: f.Env}
		b := out.AppendJSON(make([]byte, 0, len(f.Env.N)+len(f.Env.C)+40))
		if st.conn == nil {
			rm.pub(event{K: evToPeer, Peer: st.p.ID, Frame: b})
			return nil
		}
		if !st.conn.offer(b) {
			return ownerError(protocol.CodeRateLimited, "peer "+f.To+" is not reading fast enough; frame dropped")
		}
	case protocol.FrameKick:
		st := rm.seats[f.PeerID]
		if st == nil {
			return ownerError(protocol.CodeNotFound, "no peer "+f.PeerID)
		}
		if err := s.st.RemovePeer(context.Background(), rm.ch.ID, f.PeerID); err != nil && !errors.Is(err, ErrNotFound) {
			s.log.Error("kick", "channel", rm.ch.ID, "err", err)
			return ownerError(protocol.CodeServer, "kick failed")
		}
		delete(rm.seats, st.p.ID)
		delete(rm.byToken, st.p.TokenHash)
		rm.pub(event{K: evKick, Peer: st.p.ID})
		if st.conn != nil {
			st.conn.enqueue(peerFrame(protocol.PeerInFrame{T: protocol.FrameClosed, Reason: protocol.ReasonKicked}))
			st.conn.close(protocol.CloseKicked, "kicked")
			st.conn = nil
		}
		return ownerFrame(protocol.OwnerInFrame{T: protocol.FrameLeave, PeerID: st.p.ID, At: now})
	}
	return nil
}

// relayPeerFrame handles one frame from a peer. It returns the wire error (for POST /send) and the
// frame to answer the peer with on its socket (an error or a pong), or nil.
func (s *Server) relayPeerFrame(rm *room, st *seat, data []byte) (*protocol.Error, []byte) {
	f, err := protocol.DecodePeerOutFrame(data)
	if err != nil {
		return errf(protocol.CodeBadRequest, "%v", err), peerError(protocol.CodeBadRequest, err.Error())
	}
	now := s.nowMs()
	lim := &s.cfg.Limits.Channels
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.closed || rm.seats[st.p.ID] != st {
		return errf(protocol.CodeGone, "the seat is gone"), nil
	}
	if !st.rate.allow(now, int(lim.FramesPerMin)) {
		e := errf(protocol.CodeRateLimited, "over the frame rate: %d frames per minute", lim.FramesPerMin)
		e.RetryAfterS = st.rate.retryAfter(now, int(lim.FramesPerMin))
		return e, peerError(protocol.CodeRateLimited, e.Message)
	}
	switch f.T {
	case protocol.FramePing:
		return nil, peerFrame(protocol.PeerInFrame{T: protocol.FramePong, At: now})
	case protocol.FrameMsg:
		if n := f.Env.CiphertextLen(); int64(n) > lim.FrameBytes {
			e := errf(protocol.CodePayloadTooLarge, "frame ciphertext is %d bytes, the limit is %d", n, lim.FrameBytes)
			return e, peerError(e.Code, e.Message)
		}
		if rm.owner == nil && rm.remoteOwner == "" {
			e := errf(protocol.CodeConflict, "the owner is offline")
			return e, peerError(e.Code, e.Message)
		}
		out := protocol.OwnerInFrame{T: protocol.FrameMsg, PeerID: st.p.ID, Env: f.Env}
		b := out.AppendJSON(make([]byte, 0, len(st.p.ID)+len(f.Env.N)+len(f.Env.C)+56))
		if rm.owner == nil {
			rm.pub(event{K: evToOwner, Peer: st.p.ID, Frame: b})
			return nil, nil
		}
		if !rm.owner.offer(b) {
			e := errf(protocol.CodeRateLimited, "the owner is not reading fast enough; frame dropped")
			e.RetryAfterS = 1
			return e, peerError(e.Code, e.Message)
		}
	}
	return nil, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
