package client

import (
	"encoding/json"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// EventType names what happened on a channel.
type EventType string

// The events of a Channel (owner) and a Viewer (peer). Owner-only: Join, Leave, Peer. Viewer-
// only: Owner, Extended.
const (
	EventConnected    EventType = "connected"    // the socket is up (after a reconnect too)
	EventDisconnected EventType = "disconnected" // the socket dropped; Err says why; reconnecting
	EventJoin         EventType = "join"         // a viewer claimed a seat (PeerID); online once a peer event says so
	EventLeave        EventType = "leave"        // a viewer left or was kicked (PeerID)
	EventPeer         EventType = "peer"         // a viewer's presence changed (PeerID, Online)
	EventOwner        EventType = "owner"        // the owner's presence changed (Online)
	EventExtended     EventType = "extended"     // the owner extended the channel (ExpiresAt)
	EventMessage      EventType = "message"      // a decrypted frame (PeerID on the owner side, Msg)
	EventClosed       EventType = "closed"       // the channel ended (Reason); no more events
	EventError        EventType = "error"        // an `error` frame (Code, Message) or a frame that did not decrypt (Err)
)

// Event is one thing that happened on a channel. Msg is the decrypted JSON of a message: it
// comes from a party that holds the link, so validate it before use (seed 003 “对端发来的帧一律
// 先校验”).
type Event struct {
	Type      EventType          // what happened
	PeerID    string             // join, leave, peer, and owner-side message and error
	Online    bool               // peer and owner presence; connected (viewer: the owner's)
	Msg       json.RawMessage    // message: the decrypted JSON
	Reason    string             // closed: owner, expired, revoked, locked, server or kicked
	Code      protocol.ErrorCode // error frame: the wire code
	Message   string             // error frame: the server's message
	ExpiresAt time.Time          // connected, extended: the channel's expiry
	Err       error              // disconnected, undecryptable frames, and ends without a closed frame
}

// emit delivers ev unless the consumer is gone (done closed).
func emit(events chan<- Event, done <-chan struct{}, ev Event) {
	select {
	case events <- ev:
	case <-done:
	}
}
