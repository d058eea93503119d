package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// Bus carries relay events between server nodes that share one Storage (several `harness cloud
// serve` processes on one PostgreSQL), so that an owner on one node and a viewer on another talk
// as if on one node (docs/CLOUD.md "Running several nodes"). cloud/server/natsbus implements it
// over NATS. Subjects are dot-separated tokens of [A-Za-z0-9_-] ("ch.ID", "nodes"). Delivery is
// at most once and in order per subject from one publisher, to every subscriber, the
// publisher's own subscriptions included (the relay skips the events of its own node).
type Bus interface {
	// Publish sends data to the subscribers of subject. It does not wait for them; an error
	// says the bus is down (the event is lost).
	Publish(subject string, data []byte) error
	// Subscribe calls handle with every message on subject, one at a time in arrival order,
	// until unsubscribe is called. The subscription is in force when Subscribe returns.
	Subscribe(subject string, handle func(data []byte)) (unsubscribe func(), err error)
}

// Event kinds fanned out on a channel's subject.
const (
	evOwner   = "owner"  // the owner is online (On) or offline on Node; At orders attachments
	evPeer    = "peer"   // seat Peer is online (On) or offline on Node
	evJoin    = "join"   // a new seat (Peer, Pub, Tok, At)
	evKick    = "kick"   // seat Peer was kicked
	evClosed  = "closed" // the channel closed with Reason
	evExtend  = "extend" // the channel's expiry moved to At
	evToPeer  = "topeer" // deliver Frame to seat Peer's local connection
	evToOwner = "toown"  // deliver Frame (from seat Peer) to the local owner connection
	evOwnErr  = "ownerr" // deliver Frame (an error) to the local owner connection
	evPeerErr = "peerr"  // deliver Frame (an error) to seat Peer's local connection
	evSync    = "sync"   // a node loaded the room: say who is online here
	evAlive   = "alive"  // on "nodes": Node is up
	evGone    = "gone"   // on "nodes": Node shut down
	evRates   = "rates"  // on "rates": Node's new request counts per device (Counts) in the window at At
)

// event is one message on the bus: a small JSON header, then (for frame deliveries) a newline
// and the frame's bytes as they go to the receiving party.
type event struct {
	Node   string         `json:"n"`
	K      string         `json:"k"`
	Peer   string         `json:"p,omitempty"`
	Pub    string         `json:"pub,omitempty"`
	Tok    string         `json:"tok,omitempty"`
	On     bool           `json:"on,omitempty"`
	At     int64          `json:"at,omitempty"`
	Reason string         `json:"r,omitempty"`
	Counts map[string]int `json:"c,omitempty"`
	Frame  []byte         `json:"-"`
}

func (e *event) encode() []byte {
	b, _ := json.Marshal(e)
	if e.Frame != nil {
		b = append(append(b, '\n'), e.Frame...)
	}
	return b
}

func decodeEvent(data []byte) (event, bool) {
	var e event
	head, frame, _ := bytes.Cut(data, []byte{'\n'})
	if err := json.Unmarshal(head, &e); err != nil || e.Node == "" {
		return e, false
	}
	if frame != nil {
		e.Frame = frame
	}
	return e, true
}

// nodeTimeout is how long a node may stay silent on "nodes" before its parties count as
// offline (it was killed, or cut off from the bus). Nodes say they are alive every second.
const (
	aliveEvery  = time.Second
	nodeTimeout = 3500 * time.Millisecond
)

// cluster is the relay's side of the Bus: this node's id, the other nodes it has heard from,
// and the per-room subscriptions.
type cluster struct {
	h    *hub
	bus  Bus
	node string

	mu        sync.Mutex
	seen      map[string]int64 // node id → last alive, Unix ms by the local clock
	forgotten map[string]bool  // nodes whose parties were marked offline when they fell silent
	unsub     func()
	unsubRate func()
}

// gossipEvery is how often a node tells the others the per-device request counts it added
// (limiter.allowGossip): the most a device can exceed its request limit by is what it sends
// to the other nodes in this time.
const gossipEvery = 200 * time.Millisecond

func newCluster(h *hub, bus Bus, node string) (*cluster, error) {
	cl := &cluster{h: h, bus: bus, node: node, seen: map[string]int64{}, forgotten: map[string]bool{}}
	unsub, err := bus.Subscribe("nodes", cl.onNodes)
	if err != nil {
		return nil, err
	}
	cl.unsub = unsub
	if cl.unsubRate, err = bus.Subscribe("rates", cl.onRates); err != nil {
		unsub()
		return nil, err
	}
	cl.alive()
	return cl, nil
}

// gossipRates publishes the per-device request counts this node added since the last call.
func (cl *cluster) gossipRates() {
	start, counts := cl.h.s.requests.takePending()
	if counts == nil {
		return
	}
	e := event{Node: cl.node, K: evRates, At: start, Counts: counts}
	if err := cl.bus.Publish("rates", e.encode()); err != nil {
		cl.h.s.log.Warn("bus publish", "kind", evRates, "err", err)
	}
}

func (cl *cluster) onRates(data []byte) {
	e, ok := decodeEvent(data)
	if !ok || e.Node == cl.node || e.K != evRates {
		return
	}
	cl.h.s.requests.addRemote(e.At, e.Counts)
}

func (cl *cluster) publish(channel string, e event) {
	e.Node = cl.node
	if err := cl.bus.Publish("ch."+channel, e.encode()); err != nil {
		cl.h.s.log.Warn("bus publish", "channel", channel, "kind", e.K, "err", err)
	}
}

func (cl *cluster) alive() {
	e := event{Node: cl.node, K: evAlive}
	cl.bus.Publish("nodes", e.encode())
}

// stop tells the other nodes this one is gone (its parties are offline) and unsubscribes.
func (cl *cluster) stop() {
	e := event{Node: cl.node, K: evGone}
	cl.bus.Publish("nodes", e.encode())
	cl.unsub()
	cl.unsubRate()
}

func (cl *cluster) onNodes(data []byte) {
	e, ok := decodeEvent(data)
	if !ok || e.Node == cl.node {
		return
	}
	switch e.K {
	case evAlive:
		cl.mu.Lock()
		cl.seen[e.Node] = time.Now().UnixMilli()
		back := cl.forgotten[e.Node]
		delete(cl.forgotten, e.Node)
		cl.mu.Unlock()
		if back {
			// A node heard again after a silence (a partition, or the bus down on one side):
			// its parties may still be connected, so ask every room again who is online.
			cl.h.s.log.Info("node back; resyncing presence", "node", e.Node)
			cl.h.resync()
		}
	case evGone:
		cl.mu.Lock()
		delete(cl.seen, e.Node)
		cl.mu.Unlock()
		cl.h.forgetNode(e.Node)
	}
}

// tick, called by the sweeper, says this node is alive and forgets the parties of nodes that
// have fallen silent.
func (cl *cluster) tick() {
	cl.alive()
	now := time.Now().UnixMilli()
	var dead []string
	cl.mu.Lock()
	for n, at := range cl.seen {
		if now-at > nodeTimeout.Milliseconds() {
			dead = append(dead, n)
			delete(cl.seen, n)
			cl.forgotten[n] = true
		}
	}
	cl.mu.Unlock()
	for _, n := range dead {
		cl.h.s.log.Warn("node silent; its parties are offline", "node", n)
		cl.h.forgetNode(n)
	}
}

// heard notes that node n is alive (any event from it counts).
func (cl *cluster) heard(n string) {
	cl.mu.Lock()
	if _, ok := cl.seen[n]; !ok {
		cl.seen[n] = time.Now().UnixMilli()
	}
	cl.mu.Unlock()
}

// subscribe starts the room's subscription. hub.room calls it with the hub's mutex held, before
// it reads the channel from storage, so no event published after that read is missed.
func (cl *cluster) subscribe(id string) (func(), error) {
	return cl.bus.Subscribe("ch."+id, func(data []byte) {
		e, ok := decodeEvent(data)
		if !ok || e.Node == cl.node {
			return
		}
		cl.heard(e.Node)
		cl.h.onEvent(id, e)
	})
}

// ----- the hub's handling of remote events -----

// onEvent applies one remote event to the room id.
func (h *hub) onEvent(id string, e event) {
	h.mu.Lock() // held by hub.room while it loads the room: the event waits for it
	rm := h.rooms[id]
	h.mu.Unlock()
	if rm == nil {
		return
	}
	if e.K == evClosed {
		h.dropLocal(id, e.Reason)
		return
	}
	rm.apply(h.s, e)
}

// apply handles a remote event in the room.
func (rm *room) apply(s *Server, e event) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.closed {
		return
	}
	now := s.nowMs()
	switch e.K {
	case evSync:
		if rm.owner != nil {
			rm.cl.publish(rm.ch.ID, event{K: evOwner, On: true, At: rm.ownerAt})
		}
		for _, st := range rm.seats {
			if st.conn != nil {
				rm.cl.publish(rm.ch.ID, event{K: evPeer, Peer: st.p.ID, On: true, At: st.at})
			}
		}
	case evOwner:
		if e.On {
			if rm.owner != nil {
				if rm.ownerAt > e.At || rm.ownerAt == e.At && rm.cl.node > e.Node {
					return // ours is newer: the other node closes its own
				}
				rm.owner.close(protocol.CloseReplaced, "replaced by a newer connection")
				rm.owner = nil
			}
			was := rm.remoteOwner != ""
			rm.remoteOwner, rm.remoteOwnerAt = e.Node, e.At
			if !was {
				rm.toPeers(peerFrame(protocol.PeerInFrame{T: protocol.FrameOwner, Online: true}))
			}
		} else if rm.remoteOwner == e.Node {
			rm.remoteOwner = ""
			if rm.owner == nil {
				rm.toPeers(peerFrame(protocol.PeerInFrame{T: protocol.FrameOwner, Online: false}))
			}
		}
	case evPeer:
		st := rm.seats[e.Peer]
		if st == nil {
			return
		}
		if e.On {
			if st.conn != nil {
				if st.at > e.At || st.at == e.At && rm.cl.node > e.Node {
					return
				}
				st.conn.close(protocol.CloseReplaced, "replaced by a newer connection")
				st.conn = nil
			} else if st.remote == "" && rm.owner != nil {
				rm.owner.enqueue(ownerFrame(protocol.OwnerInFrame{T: protocol.FramePeer, PeerID: st.p.ID, Online: true, At: now}))
			}
			st.remote, st.remoteAt = e.Node, e.At
		} else if st.remote == e.Node {
			st.remote = ""
			if st.conn == nil && rm.owner != nil {
				rm.owner.enqueue(ownerFrame(protocol.OwnerInFrame{T: protocol.FramePeer, PeerID: st.p.ID, Online: false, At: now}))
			}
		}
	case evJoin:
		if rm.seats[e.Peer] != nil {
			return
		}
		st := &seat{p: Peer{ID: e.Peer, Pub: e.Pub, TokenHash: e.Tok, JoinedAt: e.At}}
		rm.seats[st.p.ID] = st
		rm.byToken[st.p.TokenHash] = st
		if rm.owner != nil {
			rm.owner.enqueue(ownerFrame(protocol.OwnerInFrame{T: protocol.FrameJoin, PeerID: st.p.ID, PeerPub: st.p.Pub, At: e.At}))
		}
	case evKick:
		st := rm.seats[e.Peer]
		if st == nil {
			return
		}
		delete(rm.seats, st.p.ID)
		delete(rm.byToken, st.p.TokenHash)
		if st.conn != nil {
			st.conn.enqueue(peerFrame(protocol.PeerInFrame{T: protocol.FrameClosed, Reason: protocol.ReasonKicked}))
			st.conn.close(protocol.CloseKicked, "kicked")
			st.conn = nil
		}
	case evExtend:
		rm.ch.ExpiresAt = e.At
		rm.toPeers(peerFrame(protocol.PeerInFrame{T: protocol.FrameExtended, ExpiresAt: e.At}))
	case evToPeer:
		st := rm.seats[e.Peer]
		if st == nil || st.conn == nil {
			return
		}
		if !st.conn.offer(e.Frame) {
			rm.cl.publish(rm.ch.ID, event{K: evOwnErr, Frame: ownerError(protocol.CodeRateLimited,
				"peer "+e.Peer+" is not reading fast enough; frame dropped")})
		}
	case evToOwner:
		st := rm.seats[e.Peer]
		if rm.owner == nil || st == nil {
			return
		}
		// The seat's frame rate is counted here too, where the owner is, so that a viewer
		// sending through several nodes still gets one allowance.
		lim := int(s.cfg.Limits.Channels.FramesPerMin)
		if !st.rate.allow(now, lim) {
			rm.cl.publish(rm.ch.ID, event{K: evPeerErr, Peer: e.Peer, Frame: peerError(protocol.CodeRateLimited,
				"over the frame rate: "+itoa(int64(lim))+" frames per minute")})
			return
		}
		if !rm.owner.offer(e.Frame) {
			rm.cl.publish(rm.ch.ID, event{K: evPeerErr, Peer: e.Peer, Frame: peerError(protocol.CodeRateLimited,
				"the owner is not reading fast enough; frame dropped")})
		}
	case evOwnErr:
		if rm.owner != nil {
			rm.owner.offer(e.Frame)
		}
	case evPeerErr:
		if st := rm.seats[e.Peer]; st != nil && st.conn != nil {
			st.conn.offer(e.Frame)
		}
	}
}

// toPeers queues b for every locally connected peer. rm.mu is held.
func (rm *room) toPeers(b []byte) {
	for _, st := range rm.seats {
		if st.conn != nil {
			st.conn.enqueue(b)
		}
	}
}

// pub publishes e on the room's subject when the server is one of several nodes.
func (rm *room) pub(e event) {
	if rm.cl != nil {
		rm.cl.publish(rm.ch.ID, e)
	}
}

// syncWait bounds how long GET /v1/c/{id} waits for the other nodes to say whether they hold the
// owner of a channel this node has not loaded.
const syncWait = 50 * time.Millisecond

// ownerOnlineAnywhere loads room id (which asks the other nodes who is online there) when it is
// not loaded yet, and waits up to syncWait for a node to say it holds the owner. A room already
// loaded has heard already: its answer is immediate.
func (h *hub) ownerOnlineAnywhere(ctx context.Context, id string) bool {
	h.mu.Lock()
	loaded := h.rooms[id] != nil
	h.mu.Unlock()
	if loaded {
		return h.ownerOnline(id)
	}
	if _, err := h.room(ctx, id); err != nil {
		return false
	}
	deadline := time.Now().Add(syncWait)
	for {
		if h.ownerOnline(id) {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// resync, after a silence on the bus, first brings every loaded room in line with storage (the
// closes, kicks and extensions whose events were lost while the bus was cut), then asks the
// other nodes who is online there.
func (h *hub) resync() {
	h.mu.Lock()
	rooms := make([]*room, 0, len(h.rooms))
	for _, rm := range h.rooms {
		rooms = append(rooms, rm)
	}
	h.mu.Unlock()
	ctx := context.Background()
	for _, rm := range rooms {
		ch, err := h.s.st.Channel(ctx, rm.ch.ID)
		switch {
		case errors.Is(err, ErrNotFound):
			h.dropLocal(rm.ch.ID, protocol.ReasonRevoked)
			continue
		case err != nil:
			h.s.log.Error("resync channel", "channel", rm.ch.ID, "err", err)
		case ch.Status == protocol.StatusExpired:
			h.dropLocal(rm.ch.ID, protocol.ReasonExpired)
			continue
		case ch.Status != protocol.StatusOpen:
			h.dropLocal(rm.ch.ID, protocol.ReasonOwner)
			continue
		default:
			rm.reconcile(ch)
		}
		rm.pub(event{K: evSync})
	}
}

// reconcile applies the stored record ch to the room: its expiry, seats given elsewhere, and
// seats gone (kicked elsewhere: their connections here close with 4003).
func (rm *room) reconcile(ch Channel) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.closed {
		return
	}
	rm.ch.ExpiresAt = max(rm.ch.ExpiresAt, ch.ExpiresAt)
	stored := map[string]bool{}
	for _, p := range ch.Peers {
		stored[p.ID] = true
		if rm.seats[p.ID] == nil {
			st := &seat{p: p}
			rm.seats[p.ID] = st
			rm.byToken[p.TokenHash] = st
		}
	}
	for id, st := range rm.seats {
		if stored[id] {
			continue
		}
		delete(rm.seats, id)
		delete(rm.byToken, st.p.TokenHash)
		if st.conn != nil {
			st.conn.enqueue(peerFrame(protocol.PeerInFrame{T: protocol.FrameClosed, Reason: protocol.ReasonKicked}))
			st.conn.close(protocol.CloseKicked, "kicked")
			st.conn = nil
		}
	}
}

// forgetNode marks every party connected through node n offline, in every loaded room.
func (h *hub) forgetNode(n string) {
	h.mu.Lock()
	rooms := make([]*room, 0, len(h.rooms))
	for _, rm := range h.rooms {
		rooms = append(rooms, rm)
	}
	h.mu.Unlock()
	for _, rm := range rooms {
		rm.apply(h.s, event{Node: n, K: evOwner, On: false})
		rm.mu.Lock()
		var ids []string
		for id, st := range rm.seats {
			if st.remote == n {
				ids = append(ids, id)
			}
		}
		rm.mu.Unlock()
		for _, id := range ids {
			rm.apply(h.s, event{Node: n, K: evPeer, Peer: id, On: false})
		}
	}
}
