package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Frame types, the `t` of every WebSocket frame and SSE `data:` line.
const (
	FrameHello    = "hello"
	FrameJoin     = "join"
	FrameLeave    = "leave"
	FramePeer     = "peer"
	FrameMsg      = "msg"
	FrameClosed   = "closed"
	FrameError    = "error"
	FramePong     = "pong"
	FramePing     = "ping"
	FrameKick     = "kick"
	FrameOwner    = "owner"
	FrameExtended = "extended"
)

// PeerSummary is one entry of the owner's `hello` frame. JoinedAt is Unix ms.
type PeerSummary struct {
	PeerID   string `json:"peerId"`
	PeerPub  string `json:"peerPub"`
	JoinedAt int64  `json:"joinedAt"`
	Online   bool   `json:"online"`
}

// OwnerInFrame is a server → owner frame (seed 003 “### OwnerInFrame”), one struct for the
// union: T selects the variant and only that variant's fields are written and read.
//
//	hello    ID ExpiresAt Peers       join  PeerID PeerPub At     leave PeerID At
//	peer     PeerID Online At         msg   PeerID Env            closed Reason
//	error    Code Message             pong  At
type OwnerInFrame struct {
	T         string
	ID        string
	ExpiresAt int64
	Peers     []PeerSummary
	PeerID    string
	PeerPub   string
	At        int64
	Online    bool
	Env       Envelope
	Reason    CloseReason
	Code      ErrorCode
	Message   string
}

// OwnerOutFrame is an owner → server frame (seed 003 “### OwnerOutFrame”): `msg` (To, Env),
// `kick` (PeerID) or `ping`.
type OwnerOutFrame struct {
	T      string
	To     string
	Env    Envelope
	PeerID string
}

// PeerInFrame is a server → peer frame (seed 003 “### PeerInFrame”):
//
//	hello    PeerID OwnerOnline ExpiresAt    owner  Online      extended ExpiresAt
//	msg      Env                            closed Reason (or "kicked")
//	error    Code Message                   pong   At
type PeerInFrame struct {
	T           string
	PeerID      string
	OwnerOnline bool
	ExpiresAt   int64
	Online      bool
	Env         Envelope
	Reason      string
	Code        ErrorCode
	Message     string
	At          int64
}

// PeerOutFrame is a peer → server frame (seed 003 “### PeerOutFrame”): `msg` (Env) or `ping`.
type PeerOutFrame struct {
	T   string
	Env Envelope
}

// frameWire is the union of every frame's fields, with presence, for decoding.
type frameWire struct {
	T           *string        `json:"t"`
	ID          *string        `json:"id"`
	ExpiresAt   *int64         `json:"expiresAt"`
	Peers       *[]PeerSummary `json:"peers"`
	PeerID      *string        `json:"peerId"`
	PeerPub     *string        `json:"peerPub"`
	At          *int64         `json:"at"`
	Online      *bool          `json:"online"`
	OwnerOnline *bool          `json:"ownerOnline"`
	Env         *Envelope      `json:"env"`
	Reason      *string        `json:"reason"`
	Code        *string        `json:"code"`
	Message     *string        `json:"message"`
	To          *string        `json:"to"`
}

// frameFields names the optional frame fields, in the order of the bits of present().
var frameFields = [...]string{"id", "expiresAt", "peers", "peerId", "peerPub", "at", "online",
	"ownerOnline", "env", "reason", "code", "message", "to"}

// present is a bit set of the fields the frame carries (bit i = frameFields[i]); a bit set
// keeps the check allocation-free on the relay's hot path.
func (w *frameWire) present() uint16 {
	var m uint16
	for i, ok := range [...]bool{w.ID != nil, w.ExpiresAt != nil, w.Peers != nil, w.PeerID != nil,
		w.PeerPub != nil, w.At != nil, w.Online != nil, w.OwnerOnline != nil, w.Env != nil,
		w.Reason != nil, w.Code != nil, w.Message != nil, w.To != nil} {
		if ok {
			m |= 1 << i
		}
	}
	return m
}

func fieldBit(name string) uint16 {
	for i, f := range frameFields {
		if f == name {
			return 1 << i
		}
	}
	return 0
}

// exactly checks that the frame has exactly the named fields besides `t`: the first foreign
// field (in frameFields order) or the first missing one (in the order given) is the error.
func (w *frameWire) exactly(t string, names ...string) error {
	have := w.present()
	var want uint16
	for _, n := range names {
		want |= fieldBit(n)
	}
	if extra := have &^ want; extra != 0 {
		for i, f := range frameFields {
			if extra&(1<<i) != 0 {
				return fieldErr(f, "is not a field of a %q frame", t)
			}
		}
	}
	for _, n := range names {
		if have&fieldBit(n) == 0 {
			return fieldErr(n, "is required in a %q frame", t)
		}
	}
	return nil
}

// MaxFrameJSON is the largest frame text a decoder accepts, in bytes: room for a 4 KB-ciphertext
// envelope in base64 and the frame around it, or a `hello` listing many peers.
const MaxFrameJSON = 64 << 10

func decodeFrame(data []byte) (*frameWire, string, error) {
	if len(data) > MaxFrameJSON {
		return nil, "", fieldErr("", "frame is %d bytes, the limit is %d", len(data), MaxFrameJSON)
	}
	w, ok := fastFrame(data)
	if !ok {
		w = new(frameWire)
		if err := decodeStrict(data, w); err != nil {
			return nil, "", err
		}
	}
	if w.T == nil {
		return nil, "", fieldErr("t", "is required")
	}
	return w, *w.T, nil
}

func ms(field string, v *int64) error {
	if *v < 0 {
		return fieldErr(field, "must be ≥ 0")
	}
	return nil
}

func peerID(field string, s *string) error {
	if !ValidPeerID(*s) {
		return fieldErr(field, "must match ^[A-Za-z0-9_-]{4,64}$")
	}
	return nil
}

func code(w *frameWire) error {
	if !ErrorCode(*w.Code).Valid() {
		return fieldErr("code", "unknown error code %q", *w.Code)
	}
	return nil
}

// DecodeOwnerOutFrame decodes and validates an owner → server frame. Unknown fields, fields of
// another variant and missing fields are errors naming the field.
func DecodeOwnerOutFrame(data []byte) (OwnerOutFrame, error) {
	w, t, err := decodeFrame(data)
	if err != nil {
		return OwnerOutFrame{}, err
	}
	f := OwnerOutFrame{T: t}
	switch t {
	case FrameMsg:
		if err := w.exactly(t, "to", "env"); err != nil {
			return f, err
		}
		if err := peerID("to", w.To); err != nil {
			return f, err
		}
		if err := envelope("env", w.Env); err != nil {
			return f, err
		}
		f.To, f.Env = *w.To, *w.Env
	case FrameKick:
		if err := w.exactly(t, "peerId"); err != nil {
			return f, err
		}
		if err := peerID("peerId", w.PeerID); err != nil {
			return f, err
		}
		f.PeerID = *w.PeerID
	case FramePing:
		if err := w.exactly(t); err != nil {
			return f, err
		}
	default:
		return f, fieldErr("t", "unknown owner frame type %q", t)
	}
	return f, nil
}

// DecodePeerOutFrame decodes and validates a peer → server frame (a WebSocket message or the
// body of POST /v1/c/{id}/send).
func DecodePeerOutFrame(data []byte) (PeerOutFrame, error) {
	w, t, err := decodeFrame(data)
	if err != nil {
		return PeerOutFrame{}, err
	}
	f := PeerOutFrame{T: t}
	switch t {
	case FrameMsg:
		if err := w.exactly(t, "env"); err != nil {
			return f, err
		}
		if err := envelope("env", w.Env); err != nil {
			return f, err
		}
		f.Env = *w.Env
	case FramePing:
		if err := w.exactly(t); err != nil {
			return f, err
		}
	default:
		return f, fieldErr("t", "unknown peer frame type %q", t)
	}
	return f, nil
}

// DecodeOwnerInFrame decodes and validates a server → owner frame.
func DecodeOwnerInFrame(data []byte) (OwnerInFrame, error) {
	w, t, err := decodeFrame(data)
	if err != nil {
		return OwnerInFrame{}, err
	}
	f := OwnerInFrame{T: t}
	switch t {
	case FrameHello:
		if err := w.exactly(t, "id", "expiresAt", "peers"); err != nil {
			return f, err
		}
		if !ValidID(*w.ID) {
			return f, fieldErr("id", "must match ^[A-Za-z0-9_-]{8,64}$")
		}
		if err := ms("expiresAt", w.ExpiresAt); err != nil {
			return f, err
		}
		for i, p := range *w.Peers {
			if !ValidPeerID(p.PeerID) || !ValidKey32(p.PeerPub) || p.JoinedAt < 0 {
				return f, fieldErr(fmt.Sprintf("peers[%d]", i), "bad peerId, peerPub or joinedAt")
			}
		}
		f.ID, f.ExpiresAt, f.Peers = *w.ID, *w.ExpiresAt, *w.Peers
	case FrameJoin:
		if err := w.exactly(t, "peerId", "peerPub", "at"); err != nil {
			return f, err
		}
		if err := peerID("peerId", w.PeerID); err != nil {
			return f, err
		}
		if err := key32("peerPub", *w.PeerPub); err != nil {
			return f, err
		}
		if err := ms("at", w.At); err != nil {
			return f, err
		}
		f.PeerID, f.PeerPub, f.At = *w.PeerID, *w.PeerPub, *w.At
	case FrameLeave:
		if err := w.exactly(t, "peerId", "at"); err != nil {
			return f, err
		}
		if err := peerID("peerId", w.PeerID); err != nil {
			return f, err
		}
		if err := ms("at", w.At); err != nil {
			return f, err
		}
		f.PeerID, f.At = *w.PeerID, *w.At
	case FramePeer:
		if err := w.exactly(t, "peerId", "online", "at"); err != nil {
			return f, err
		}
		if err := peerID("peerId", w.PeerID); err != nil {
			return f, err
		}
		if err := ms("at", w.At); err != nil {
			return f, err
		}
		f.PeerID, f.Online, f.At = *w.PeerID, *w.Online, *w.At
	case FrameMsg:
		if err := w.exactly(t, "peerId", "env"); err != nil {
			return f, err
		}
		if err := peerID("peerId", w.PeerID); err != nil {
			return f, err
		}
		if err := envelope("env", w.Env); err != nil {
			return f, err
		}
		f.PeerID, f.Env = *w.PeerID, *w.Env
	case FrameClosed:
		if err := w.exactly(t, "reason"); err != nil {
			return f, err
		}
		if !validReason(*w.Reason, false) {
			return f, fieldErr("reason", "unknown close reason %q", *w.Reason)
		}
		f.Reason = *w.Reason
	case FrameError:
		if err := w.exactly(t, "code", "message"); err != nil {
			return f, err
		}
		if err := code(w); err != nil {
			return f, err
		}
		f.Code, f.Message = ErrorCode(*w.Code), *w.Message
	case FramePong:
		if err := w.exactly(t, "at"); err != nil {
			return f, err
		}
		if err := ms("at", w.At); err != nil {
			return f, err
		}
		f.At = *w.At
	default:
		return f, fieldErr("t", "unknown owner frame type %q", t)
	}
	return f, nil
}

// DecodePeerInFrame decodes and validates a server → peer frame.
func DecodePeerInFrame(data []byte) (PeerInFrame, error) {
	w, t, err := decodeFrame(data)
	if err != nil {
		return PeerInFrame{}, err
	}
	f := PeerInFrame{T: t}
	switch t {
	case FrameHello:
		if err := w.exactly(t, "peerId", "ownerOnline", "expiresAt"); err != nil {
			return f, err
		}
		if err := peerID("peerId", w.PeerID); err != nil {
			return f, err
		}
		if err := ms("expiresAt", w.ExpiresAt); err != nil {
			return f, err
		}
		f.PeerID, f.OwnerOnline, f.ExpiresAt = *w.PeerID, *w.OwnerOnline, *w.ExpiresAt
	case FrameOwner:
		if err := w.exactly(t, "online"); err != nil {
			return f, err
		}
		f.Online = *w.Online
	case FrameExtended:
		if err := w.exactly(t, "expiresAt"); err != nil {
			return f, err
		}
		if err := ms("expiresAt", w.ExpiresAt); err != nil {
			return f, err
		}
		f.ExpiresAt = *w.ExpiresAt
	case FrameMsg:
		if err := w.exactly(t, "env"); err != nil {
			return f, err
		}
		if err := envelope("env", w.Env); err != nil {
			return f, err
		}
		f.Env = *w.Env
	case FrameClosed:
		if err := w.exactly(t, "reason"); err != nil {
			return f, err
		}
		if !validReason(*w.Reason, true) {
			return f, fieldErr("reason", "unknown close reason %q", *w.Reason)
		}
		f.Reason = *w.Reason
	case FrameError:
		if err := w.exactly(t, "code", "message"); err != nil {
			return f, err
		}
		if err := code(w); err != nil {
			return f, err
		}
		f.Code, f.Message = ErrorCode(*w.Code), *w.Message
	case FramePong:
		if err := w.exactly(t, "at"); err != nil {
			return f, err
		}
		if err := ms("at", w.At); err != nil {
			return f, err
		}
		f.At = *w.At
	default:
		return f, fieldErr("t", "unknown peer frame type %q", t)
	}
	return f, nil
}

// ----- encoding: hand-written appends, no reflection, so relaying a frame costs one buffer -----

func appendStr(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // rare path: messages with text that needs escaping
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendKey(b []byte, k string) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

func appendEnv(b []byte, e *Envelope) []byte {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(e.V), 10)
	b = append(b, `,"n":`...)
	b = appendStr(b, e.N)
	b = append(b, `,"c":`...)
	b = appendStr(b, e.C)
	return append(b, '}')
}

func appendT(b []byte, t string) []byte {
	b = append(b, `{"t":`...)
	return appendStr(b, t)
}

// AppendJSON appends f's JSON (only its variant's fields) to b.
func (f *OwnerInFrame) AppendJSON(b []byte) []byte {
	b = appendT(b, f.T)
	switch f.T {
	case FrameHello:
		b = appendKey(b, "id")
		b = appendStr(b, f.ID)
		b = appendKey(b, "expiresAt")
		b = strconv.AppendInt(b, f.ExpiresAt, 10)
		b = appendKey(b, "peers")
		b = append(b, '[')
		for i, p := range f.Peers {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"peerId":`...)
			b = appendStr(b, p.PeerID)
			b = appendKey(b, "peerPub")
			b = appendStr(b, p.PeerPub)
			b = appendKey(b, "joinedAt")
			b = strconv.AppendInt(b, p.JoinedAt, 10)
			b = appendKey(b, "online")
			b = strconv.AppendBool(b, p.Online)
			b = append(b, '}')
		}
		b = append(b, ']')
	case FrameJoin:
		b = appendKey(b, "peerId")
		b = appendStr(b, f.PeerID)
		b = appendKey(b, "peerPub")
		b = appendStr(b, f.PeerPub)
		b = appendKey(b, "at")
		b = strconv.AppendInt(b, f.At, 10)
	case FrameLeave:
		b = appendKey(b, "peerId")
		b = appendStr(b, f.PeerID)
		b = appendKey(b, "at")
		b = strconv.AppendInt(b, f.At, 10)
	case FramePeer:
		b = appendKey(b, "peerId")
		b = appendStr(b, f.PeerID)
		b = appendKey(b, "online")
		b = strconv.AppendBool(b, f.Online)
		b = appendKey(b, "at")
		b = strconv.AppendInt(b, f.At, 10)
	case FrameMsg:
		b = appendKey(b, "peerId")
		b = appendStr(b, f.PeerID)
		b = appendKey(b, "env")
		b = appendEnv(b, &f.Env)
	case FrameClosed:
		b = appendKey(b, "reason")
		b = appendStr(b, f.Reason)
	case FrameError:
		b = appendKey(b, "code")
		b = appendStr(b, string(f.Code))
		b = appendKey(b, "message")
		b = appendStr(b, f.Message)
	case FramePong:
		b = appendKey(b, "at")
		b = strconv.AppendInt(b, f.At, 10)
	}
	return append(b, '}')
}

// AppendJSON appends f's JSON (only its variant's fields) to b.
func (f *PeerInFrame) AppendJSON(b []byte) []byte {
	b = appendT(b, f.T)
	switch f.T {
	case FrameHello:
		b = appendKey(b, "peerId")
		b = appendStr(b, f.PeerID)
		b = appendKey(b, "ownerOnline")
		b = strconv.AppendBool(b, f.OwnerOnline)
		b = appendKey(b, "expiresAt")
		b = strconv.AppendInt(b, f.ExpiresAt, 10)
	case FrameOwner:
		b = appendKey(b, "online")
		b = strconv.AppendBool(b, f.Online)
	case FrameExtended:
		b = appendKey(b, "expiresAt")
		b = strconv.AppendInt(b, f.ExpiresAt, 10)
	case FrameMsg:
		b = appendKey(b, "env")
		b = appendEnv(b, &f.Env)
	case FrameClosed:
		b = appendKey(b, "reason")
		b = appendStr(b, f.Reason)
	case FrameError:
		b = appendKey(b, "code")
		b = appendStr(b, string(f.Code))
		b = appendKey(b, "message")
		b = appendStr(b, f.Message)
	case FramePong:
		b = appendKey(b, "at")
		b = strconv.AppendInt(b, f.At, 10)
	}
	return append(b, '}')
}

// AppendJSON appends f's JSON to b.
func (f *OwnerOutFrame) AppendJSON(b []byte) []byte {
	b = appendT(b, f.T)
	switch f.T {
	case FrameMsg:
		b = appendKey(b, "to")
		b = appendStr(b, f.To)
		b = appendKey(b, "env")
		b = appendEnv(b, &f.Env)
	case FrameKick:
		b = appendKey(b, "peerId")
		b = appendStr(b, f.PeerID)
	}
	return append(b, '}')
}

// AppendJSON appends f's JSON to b.
func (f *PeerOutFrame) AppendJSON(b []byte) []byte {
	b = appendT(b, f.T)
	if f.T == FrameMsg {
		b = appendKey(b, "env")
		b = appendEnv(b, &f.Env)
	}
	return append(b, '}')
}

// MarshalJSON writes only the variant's fields.
func (f OwnerInFrame) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil), nil }

// MarshalJSON writes only the variant's fields.
func (f PeerInFrame) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil), nil }

// MarshalJSON writes only the variant's fields.
func (f OwnerOutFrame) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil), nil }

// MarshalJSON writes only the variant's fields.
func (f PeerOutFrame) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil), nil }

// UnmarshalJSON is DecodeOwnerInFrame.
func (f *OwnerInFrame) UnmarshalJSON(b []byte) (err error) {
	*f, err = DecodeOwnerInFrame(bytes.TrimSpace(b))
	return err
}

// UnmarshalJSON is DecodePeerInFrame.
func (f *PeerInFrame) UnmarshalJSON(b []byte) (err error) {
	*f, err = DecodePeerInFrame(bytes.TrimSpace(b))
	return err
}

// UnmarshalJSON is DecodeOwnerOutFrame.
func (f *OwnerOutFrame) UnmarshalJSON(b []byte) (err error) {
	*f, err = DecodeOwnerOutFrame(bytes.TrimSpace(b))
	return err
}

// UnmarshalJSON is DecodePeerOutFrame.
func (f *PeerOutFrame) UnmarshalJSON(b []byte) (err error) {
	*f, err = DecodePeerOutFrame(bytes.TrimSpace(b))
	return err
}
