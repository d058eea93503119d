package client

import (
	"context"
	"crypto/ecdh"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// ChannelState is what the host keeps so a channel survives an app restart (seed 003 “# 插件
// 指南” §5: channels.get(id) and list() keep working because the channel keys are in the system
// keystore): the channel id, the share secret k, the channel's X25519 private key and the
// expiry last heard. It is as secret as the link: it prints as "[channel state]" and only
// MarshalBinary writes the keys, for the keystore.
type ChannelState struct {
	ID        string                         // the ChannelId
	Secret    [protocol.ShareSecretSize]byte // the share secret k of the link
	ChanPriv  [protocol.KeySize]byte         // the channel's X25519 private key
	ExpiresAt time.Time                      // the expiry last heard
	MaxPeers  int                            // the seats it was opened with; 0 unknown (MaxResumePeers)
}

// MaxResumePeers is how many viewers a resumed channel whose state does not say its maxPeers
// keeps at most (a state saved before the field existed).
const MaxResumePeers = 64

const redactedState = "[channel state]"

// String returns "[channel state]".
func (s ChannelState) String() string { return redactedState }

// GoString returns "[channel state]".
func (s ChannelState) GoString() string { return redactedState }

// Format writes "[channel state]" whatever the verb.
func (s ChannelState) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redactedState)) }

// MarshalJSON returns the JSON string "[channel state]"; use MarshalBinary for the keystore.
func (s ChannelState) MarshalJSON() ([]byte, error) { return []byte(`"` + redactedState + `"`), nil }

type channelStateFile struct {
	V         int    `json:"v"`
	ID        string `json:"id"`
	K         string `json:"k"`
	ChanPriv  string `json:"chanPriv"`
	ExpiresAt int64  `json:"expiresAt"`
	MaxPeers  int    `json:"maxPeers,omitempty"`
}

// MarshalBinary encodes the state, keys included (version 1, JSON).
func (s ChannelState) MarshalBinary() ([]byte, error) {
	return json.Marshal(channelStateFile{V: 1, ID: s.ID, K: protocol.B64.EncodeToString(s.Secret[:]),
		ChanPriv: protocol.B64.EncodeToString(s.ChanPriv[:]), ExpiresAt: s.ExpiresAt.UnixMilli(), MaxPeers: s.MaxPeers})
}

// UnmarshalBinary decodes what MarshalBinary wrote; an error names the bad field.
func (s *ChannelState) UnmarshalBinary(data []byte) error {
	var f channelStateFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("channel state: %w", err)
	}
	if f.V != 1 {
		return fmt.Errorf("channel state: version %d, want 1", f.V)
	}
	if !protocol.ValidID(f.ID) {
		return errors.New("channel state: id: not a ChannelId")
	}
	k, err := protocol.B64.Strict().DecodeString(f.K)
	if err != nil || len(k) != protocol.ShareSecretSize {
		return errors.New("channel state: k: want 32 bytes base64url")
	}
	priv, err := protocol.B64.Strict().DecodeString(f.ChanPriv)
	if err != nil || len(priv) != protocol.KeySize {
		return errors.New("channel state: chanPriv: want 32 bytes base64url")
	}
	if f.MaxPeers < 0 {
		return errors.New("channel state: maxPeers: negative")
	}
	s.ID, s.ExpiresAt, s.MaxPeers = f.ID, time.UnixMilli(f.ExpiresAt), f.MaxPeers
	copy(s.Secret[:], k)
	copy(s.ChanPriv[:], priv)
	return nil
}

// State returns what ResumeChannel needs to take the channel over after a restart.
func (ch *Channel) State() ChannelState {
	s := ChannelState{ID: ch.id, ExpiresAt: ch.ExpiresAt(), MaxPeers: ch.maxPeers}
	copy(s.Secret[:], ch.link.secret())
	copy(s.ChanPriv[:], ch.chanPriv.Bytes())
	return s
}

// ResumeChannel reconnects the owner socket of a channel opened earlier (by this device and
// plugin) from its saved state. The server's hello re-announces the peers, whose keys are
// derived again. eventBuffer is the Events size (0 means 64). A channel that has ended
// reports it through Events and Err (the socket is refused with 410 gone).
func (p *Plugin) ResumeChannel(ctx context.Context, st ChannelState, eventBuffer int) (*Channel, error) {
	if !protocol.ValidID(st.ID) {
		return nil, errors.New("cloud channel: resume: the state has no valid channel id")
	}
	priv, err := ecdh.X25519().NewPrivateKey(st.ChanPriv[:])
	if err != nil {
		return nil, fmt.Errorf("cloud channel: resume: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	maxPeers := st.MaxPeers
	if maxPeers <= 0 {
		maxPeers = MaxResumePeers
	}
	ch := &Channel{p: p, id: st.ID, encKey: protocol.EncKey(st.Secret[:]), chanPriv: priv,
		peers: map[string]*peerState{}, expiresAt: st.ExpiresAt, maxPeers: maxPeers}
	ch.link = newSecretLink(p.c.origin, st.ID, st.Secret[:])
	if eventBuffer <= 0 {
		eventBuffer = 64
	}
	ch.events = make(chan Event, eventBuffer)
	ch.start()
	return ch, nil
}
