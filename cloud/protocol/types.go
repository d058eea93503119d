package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ProtocolVersion is MetaResponse.protocol.
const ProtocolVersion = 1

// Service is a CloudService (seed 003 “### CloudService”).
type Service = string

// The five services.
const (
	ServiceStore     Service = "store"
	ServiceChannels  Service = "channels"
	ServicePush      Service = "push"
	ServiceFiles     Service = "files"
	ServiceFunctions Service = "functions"
)

// ValidService reports whether s is one of the five CloudService names.
func ValidService(s string) bool {
	switch s {
	case ServiceStore, ServiceChannels, ServicePush, ServiceFiles, ServiceFunctions:
		return true
	}
	return false
}

// Ok is the `{ ok: true }` body of a success without data.
type Ok struct {
	Ok bool `json:"ok"`
}

// Validatable is every request or response type of this package.
type Validatable interface{ Validate() error }

// Decode unmarshals data strictly (unknown fields and trailing data are errors) into v and
// validates it. Errors name the field.
func Decode(data []byte, v Validatable) error {
	if err := decodeStrict(data, v); err != nil {
		return err
	}
	return v.Validate()
}

func decodeStrict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return jsonError(err)
	}
	if d.More() {
		return fmt.Errorf("invalid JSON at byte %d: data after the value", d.InputOffset())
	}
	return nil
}

// jsonError says where a body is wrong: the byte offset of a syntax error, the field and type
// of a mismatched value.
func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON at byte %d: %s", se.Offset, se.Error())
	case errors.As(err, &te) && te.Field != "":
		return &ValidationError{Field: te.Field, Reason: fmt.Sprintf("must be a %s, not %s (byte %d)", jsonKind(te.Type.Kind().String()), te.Value, te.Offset)}
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("invalid JSON: unexpected end of the body")
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64", "int32", "float64":
		return "number"
	case "ptr", "struct", "map":
		return "object"
	case "slice":
		return "list"
	}
	return k
}

func minOne(field string, v int64) error {
	if v < 1 {
		return fieldErr(field, "must be ≥ 1, got %d", v)
	}
	return nil
}

func key32(field, s string) error {
	if !ValidKey32(s) {
		return fieldErr(field, "must be 32 bytes base64url (43 characters)")
	}
	return nil
}

func envelope(field string, e *Envelope) error {
	if e == nil {
		return fieldErr(field, "is required")
	}
	return prefixErr(field, e.Validate())
}

// ----- devices and auth (seed 003 “# 设备与鉴权”) -----

// PowSolution is RegisterDeviceRequest.pow.
type PowSolution struct {
	Salt  string `json:"salt"`
	Nonce string `json:"nonce"`
}

// RegisterDeviceRequest is the body of POST /v1/devices.
type RegisterDeviceRequest struct {
	SignPub string      `json:"signPub"`
	BoxPub  string      `json:"boxPub"`
	Pow     PowSolution `json:"pow"`
}

// Validate checks both keys are Key32, the salt `^[A-Za-z0-9_-]{1,64}$` and the nonce
// `^(0|[1-9][0-9]{0,14})$`.
func (r *RegisterDeviceRequest) Validate() error {
	if err := key32("signPub", r.SignPub); err != nil {
		return err
	}
	if err := key32("boxPub", r.BoxPub); err != nil {
		return err
	}
	if !ValidSalt(r.Pow.Salt) {
		return fieldErr("pow.salt", "must match ^[A-Za-z0-9_-]{1,64}$")
	}
	if !ValidPowNonce(r.Pow.Nonce) {
		return fieldErr("pow.nonce", "must match ^(0|[1-9][0-9]{0,14})$")
	}
	return nil
}

// RegisterDeviceResponse is the answer to POST /v1/devices.
type RegisterDeviceResponse struct {
	DeviceID string `json:"deviceId"`
}

// Validate checks the DeviceId pattern.
func (r *RegisterDeviceResponse) Validate() error {
	if !ValidID(r.DeviceID) {
		return fieldErr("deviceId", "must match ^[A-Za-z0-9_-]{8,64}$")
	}
	return nil
}

// AuthTokenRequest is the body of POST /v1/auth/token. Ts is Unix ms.
type AuthTokenRequest struct {
	Aud      string   `json:"aud"`
	DeviceID string   `json:"deviceId"`
	Plugin   string   `json:"plugin"`
	Services []string `json:"services"`
	Ts       int64    `json:"ts"`
	Nonce    string   `json:"nonce"`
	Sig      string   `json:"sig"`
	// Document is the plugin document the person consented to, required with the functions
	// service (seed 003 “服务端函数”: the token records the consented document, link and
	// content hash, and the server runs only that version). Not part of the signed challenge:
	// the token it yields is bound to it by the server's MAC.
	Document *DocumentRef `json:"document,omitempty"`
}

// DocumentRef names one version of a plugin document: its install link and its content hash
// ("sha256:" and 64 hex digits, plugin.ContentHash).
type DocumentRef struct {
	Link string `json:"link"`
	Hash string `json:"hash"`
}

// Validate checks a link of 1–2048 characters and a "sha256:" hash of 64 lowercase hex digits.
func (d *DocumentRef) Validate() error {
	if n := len(d.Link); n < 1 || n > 2048 {
		return fieldErr("document.link", "must be 1–2048 characters")
	}
	if !ValidContentHash(d.Hash) {
		return fieldErr("document.hash", "must be sha256: and 64 lowercase hex digits")
	}
	return nil
}

// ValidContentHash reports whether s is "sha256:" and 64 lowercase hex digits.
func ValidContentHash(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Validate checks aud `^https?:\/\/[a-z0-9.\-:[\]]+$`, the ids, at least one known service,
// ts ≥ 0, a Nonce16 and a Sig64.
func (r *AuthTokenRequest) Validate() error {
	if r.Document != nil {
		if err := r.Document.Validate(); err != nil {
			return err
		}
	}
	if !validAud(r.Aud) {
		return fieldErr("aud", `must match ^https?:\/\/[a-z0-9.\-:[\]]+$`)
	}
	if !ValidID(r.DeviceID) {
		return fieldErr("deviceId", "must match ^[A-Za-z0-9_-]{8,64}$")
	}
	if !ValidPluginID(r.Plugin) {
		return fieldErr("plugin", "must match ^[a-z0-9][a-z0-9-]{1,63}$")
	}
	if len(r.Services) == 0 {
		return fieldErr("services", "must list at least one service")
	}
	for i, s := range r.Services {
		if !ValidService(s) {
			return fieldErr(fmt.Sprintf("services[%d]", i), "unknown service %q", s)
		}
	}
	if r.Ts < 0 {
		return fieldErr("ts", "must be ≥ 0")
	}
	if !ValidNonce16(r.Nonce) {
		return fieldErr("nonce", "must be 16 bytes base64url (22 characters)")
	}
	if !ValidSig64(r.Sig) {
		return fieldErr("sig", "must be 64 bytes base64url (86 characters)")
	}
	return nil
}

func validAud(s string) bool {
	var rest string
	switch {
	case len(s) > 8 && s[:8] == "https://":
		rest = s[8:]
	case len(s) > 7 && s[:7] == "http://":
		rest = s[7:]
	default:
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == ':' || c == '[' || c == ']') {
			return false
		}
	}
	return true
}

// AuthTokenResponse is the answer to POST /v1/auth/token. ExpiresAt is Unix ms.
type AuthTokenResponse struct {
	Token     string `json:"token"`
	ExpiresAt int64  `json:"expiresAt"`
}

// Validate checks the token is at least 16 characters.
func (r *AuthTokenResponse) Validate() error {
	if len(r.Token) < 16 {
		return fieldErr("token", "must be at least 16 characters")
	}
	if r.ExpiresAt < 0 {
		return fieldErr("expiresAt", "must be ≥ 0")
	}
	return nil
}

// ----- meta (seed 003 “# 元数据”) -----

// StoreLimits is Limits.store: bytes and key counts per (device, plugin).
type StoreLimits struct {
	MaxBytes      int64 `json:"maxBytes"`
	MaxKeys       int64 `json:"maxKeys"`
	MaxValueBytes int64 `json:"maxValueBytes"`
}

// ChannelLimits is Limits.channels: per-device open channels, TTL bounds in seconds, peers per
// channel, ciphertext bytes per frame, frames per minute per party, mailbox slots.
type ChannelLimits struct {
	MaxOpen      int64 `json:"maxOpen"`
	MinTtlS      int64 `json:"minTtlS"`
	MaxTtlS      int64 `json:"maxTtlS"`
	DefaultTtlS  int64 `json:"defaultTtlS"`
	MaxPeers     int64 `json:"maxPeers"`
	FrameBytes   int64 `json:"frameBytes"`
	FramesPerMin int64 `json:"framesPerMin"`
	MailboxSlots int64 `json:"mailboxSlots"`
}

// PushLimits is Limits.push.
type PushLimits struct {
	MaxPending int64 `json:"maxPending"`
}

// FunctionLimits is Limits.functions.
type FunctionLimits struct {
	CallsPerMin int64 `json:"callsPerMin"`
}

// Limits is the provider's limits (seed 003 “### Limits”).
type Limits struct {
	Store            StoreLimits     `json:"store"`
	Channels         ChannelLimits   `json:"channels"`
	Push             *PushLimits     `json:"push,omitempty"`
	Functions        *FunctionLimits `json:"functions,omitempty"`
	JoinsPerIPPerMin int64           `json:"joinsPerIpPerMin"`
}

// DefaultLimits is DEFAULT_LIMITS: store 1,000,000 bytes / 1,000 keys / 64,000 bytes per value;
// channels 5 open, TTL 60–86,400 s (default 900), 5 peers, 4,096-byte frames, 60 frames/min,
// 64 mailbox slots; push 100 pending; functions 60 calls/min; 20 joins per IP per minute.
func DefaultLimits() Limits {
	return Limits{
		Store: StoreLimits{MaxBytes: 1_000_000, MaxKeys: 1_000, MaxValueBytes: 64_000},
		Channels: ChannelLimits{MaxOpen: 5, MinTtlS: 60, MaxTtlS: 86_400, DefaultTtlS: 900,
			MaxPeers: 5, FrameBytes: 4_096, FramesPerMin: 60, MailboxSlots: 64},
		Push:             &PushLimits{MaxPending: 100},
		Functions:        &FunctionLimits{CallsPerMin: 60},
		JoinsPerIPPerMin: 20,
	}
}

// Validate checks every limit is positive and the TTL bounds are ordered.
func (l *Limits) Validate() error {
	pos := []struct {
		f string
		v int64
	}{
		{"store.maxBytes", l.Store.MaxBytes}, {"store.maxKeys", l.Store.MaxKeys},
		{"store.maxValueBytes", l.Store.MaxValueBytes}, {"channels.maxOpen", l.Channels.MaxOpen},
		{"channels.minTtlS", l.Channels.MinTtlS}, {"channels.maxTtlS", l.Channels.MaxTtlS},
		{"channels.defaultTtlS", l.Channels.DefaultTtlS}, {"channels.maxPeers", l.Channels.MaxPeers},
		{"channels.frameBytes", l.Channels.FrameBytes}, {"channels.framesPerMin", l.Channels.FramesPerMin},
		{"channels.mailboxSlots", l.Channels.MailboxSlots}, {"joinsPerIpPerMin", l.JoinsPerIPPerMin},
	}
	for _, p := range pos {
		if err := minOne(p.f, p.v); err != nil {
			return err
		}
	}
	c := l.Channels
	if c.MinTtlS > c.MaxTtlS || c.DefaultTtlS < c.MinTtlS || c.DefaultTtlS > c.MaxTtlS {
		return fieldErr("channels", "TTLs must satisfy minTtlS ≤ defaultTtlS ≤ maxTtlS")
	}
	return nil
}

// MetaPow is MetaResponse.pow.
type MetaPow struct {
	Difficulty int    `json:"difficulty"`
	Salt       string `json:"salt"`
}

// MetaPage is one entry of MetaResponse.pages.
type MetaPage struct {
	Plugin string `json:"plugin"`
	Page   string `json:"page"`
}

// MetaFunction is one entry of MetaResponse.functions.
type MetaFunction struct {
	Plugin  string `json:"plugin"`
	Name    string `json:"name"`
	Version int64  `json:"version"`
}

// Operator is MetaResponse.operator.
type Operator struct {
	Name       string `json:"name"`
	Contact    string `json:"contact"`
	PrivacyURL string `json:"privacyURL,omitempty"`
}

// MetaResponse is the answer to GET /v1/meta.
type MetaResponse struct {
	Protocol  int            `json:"protocol"`
	Services  []string       `json:"services"`
	Limits    Limits         `json:"limits"`
	Pow       MetaPow        `json:"pow"`
	Pages     []MetaPage     `json:"pages"`
	Functions []MetaFunction `json:"functions"`
	Operator  Operator       `json:"operator"`
}

// Validate checks protocol 1, known services, the limits, a difficulty in 0–64 and a valid
// salt, page and function names, and a non-empty operator name.
func (m *MetaResponse) Validate() error {
	if m.Protocol != ProtocolVersion {
		return fieldErr("protocol", "must be 1, got %d", m.Protocol)
	}
	for i, s := range m.Services {
		if !ValidService(s) {
			return fieldErr(fmt.Sprintf("services[%d]", i), "unknown service %q", s)
		}
	}
	if err := m.Limits.Validate(); err != nil {
		return prefixErr("limits", err)
	}
	if m.Pow.Difficulty < 0 || m.Pow.Difficulty > 64 {
		return fieldErr("pow.difficulty", "must be in 0–64, got %d", m.Pow.Difficulty)
	}
	if !ValidSalt(m.Pow.Salt) {
		return fieldErr("pow.salt", "must match ^[A-Za-z0-9_-]{1,64}$")
	}
	for i, p := range m.Pages {
		if !ValidPluginID(p.Plugin) || !ValidPageName(p.Page) {
			return fieldErr(fmt.Sprintf("pages[%d]", i), "bad plugin id or page name")
		}
	}
	for i, f := range m.Functions {
		if !ValidPluginID(f.Plugin) || !ValidFunctionName(f.Name) || f.Version < 1 {
			return fieldErr(fmt.Sprintf("functions[%d]", i), "bad plugin id, name or version")
		}
	}
	if m.Operator.Name == "" {
		return fieldErr("operator.name", "must not be empty")
	}
	return nil
}

// ----- store (seed 003 “# 存储”) -----

// StorePutRequest is the body of PUT /v1/store/{key}. Value is any JSON (an Envelope when the
// plugin declares e2e); TtlS, when set, is ≥ 1 second.
type StorePutRequest struct {
	Value json.RawMessage `json:"value,omitempty"`
	TtlS  *int64          `json:"ttlS,omitempty"`
}

// Validate checks ttlS ≥ 1.
func (r *StorePutRequest) Validate() error {
	if r.TtlS != nil {
		return minOne("ttlS", *r.TtlS)
	}
	return nil
}

// StorePutResponse is the answer to PUT /v1/store/{key} (the version is also the ETag).
type StorePutResponse struct {
	Version int64 `json:"version"`
}

// Validate checks version ≥ 1.
func (r *StorePutResponse) Validate() error { return minOne("version", r.Version) }

// StoreGetResponse is the answer to GET /v1/store/{key}. Times are Unix ms.
type StoreGetResponse struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value,omitempty"`
	Version   int64           `json:"version"`
	UpdatedAt int64           `json:"updatedAt"`
	ExpiresAt *int64          `json:"expiresAt,omitempty"`
}

// Validate checks the key and version ≥ 1.
func (r *StoreGetResponse) Validate() error {
	if err := CheckStoreKey(r.Key); err != nil {
		return err
	}
	return minOne("version", r.Version)
}

// StoreListItem is one entry of StoreListResponse.items.
type StoreListItem struct {
	Key       string `json:"key"`
	Version   int64  `json:"version"`
	UpdatedAt int64  `json:"updatedAt"`
}

// StoreListResponse is the answer to GET /v1/store. Cursor, when set, fetches the next page
// (`?cursor=`).
type StoreListResponse struct {
	Items  []StoreListItem `json:"items"`
	Cursor string          `json:"cursor,omitempty"`
}

// Validate checks every item.
func (r *StoreListResponse) Validate() error {
	for i, it := range r.Items {
		if err := CheckStoreKey(it.Key); err != nil {
			return prefixErr(fmt.Sprintf("items[%d]", i), err)
		}
		if err := minOne(fmt.Sprintf("items[%d].version", i), it.Version); err != nil {
			return err
		}
	}
	return nil
}

// ----- channels (seed 003 “# 通道(所有者)”, “# 通道(对端)”) -----

// ChannelStatus is "open", "closed" or "expired".
type ChannelStatus = string

// The channel statuses.
const (
	StatusOpen    ChannelStatus = "open"
	StatusClosed  ChannelStatus = "closed"
	StatusExpired ChannelStatus = "expired"
)

// CloseReason is why a channel closed: "owner", "expired", "revoked", "locked", "server"; a
// peer may also be told "kicked".
type CloseReason = string

// The close reasons.
const (
	ReasonOwner   CloseReason = "owner"
	ReasonExpired CloseReason = "expired"
	ReasonRevoked CloseReason = "revoked"
	ReasonLocked  CloseReason = "locked"
	ReasonServer  CloseReason = "server"
	ReasonKicked  CloseReason = "kicked"
)

func validReason(r string, peer bool) bool {
	switch r {
	case ReasonOwner, ReasonExpired, ReasonRevoked, ReasonLocked, ReasonServer:
		return true
	case ReasonKicked:
		return peer
	}
	return false
}

// WebSocket close codes (seed 003 “GET /v1/channels/{id}/ws”).
const (
	CloseKicked    = 4003 // the peer was kicked
	CloseReplaced  = 4009 // a newer connection of the same party took over
	CloseClosed    = 4010 // the channel closed or expired (a `closed` frame comes first)
	CloseGoingAway = 1001 // server shutdown: reconnect
)

// CreateChannelRequest is the body of POST /v1/channels.
type CreateChannelRequest struct {
	TtlS     int64     `json:"ttlS"`
	MaxPeers *int64    `json:"maxPeers,omitempty"`
	JoinHash string    `json:"joinHash"`
	Meta     *Envelope `json:"meta"`
	ChanPub  string    `json:"chanPub"`
	Page     string    `json:"page,omitempty"`
}

// Validate checks ttlS ≥ 1, maxPeers ≥ 1, the keys, the sealed meta and the page name. The
// provider's own bounds (limits.channels) are the server's to check.
func (r *CreateChannelRequest) Validate() error {
	if err := minOne("ttlS", r.TtlS); err != nil {
		return err
	}
	if r.MaxPeers != nil {
		if err := minOne("maxPeers", *r.MaxPeers); err != nil {
			return err
		}
	}
	if err := key32("joinHash", r.JoinHash); err != nil {
		return err
	}
	if err := envelope("meta", r.Meta); err != nil {
		return err
	}
	if err := key32("chanPub", r.ChanPub); err != nil {
		return err
	}
	if r.Page != "" && !ValidPageName(r.Page) {
		return fieldErr("page", "must match ^[a-z0-9][a-z0-9-]{0,40}$")
	}
	return nil
}

// CreateChannelResponse is the answer to POST /v1/channels.
type CreateChannelResponse struct {
	ID        string `json:"id"`
	ExpiresAt int64  `json:"expiresAt"`
}

// Validate checks the ChannelId pattern.
func (r *CreateChannelResponse) Validate() error {
	if !ValidID(r.ID) {
		return fieldErr("id", "must match ^[A-Za-z0-9_-]{8,64}$")
	}
	return nil
}

// PatchChannelRequest is the body of PATCH /v1/channels/{id}.
type PatchChannelRequest struct {
	TtlS int64 `json:"ttlS"`
}

// Validate checks ttlS ≥ 1.
func (r *PatchChannelRequest) Validate() error { return minOne("ttlS", r.TtlS) }

// PatchChannelResponse is the answer to PATCH /v1/channels/{id}.
type PatchChannelResponse struct {
	ExpiresAt int64 `json:"expiresAt"`
}

// Validate accepts every value.
func (r *PatchChannelResponse) Validate() error { return nil }

// MailboxPutRequest is the body of PUT /v1/channels/{id}/mailbox/{slot}.
type MailboxPutRequest struct {
	Env  *Envelope `json:"env"`
	TtlS int64     `json:"ttlS"`
}

// Validate checks the envelope and ttlS ≥ 1.
func (r *MailboxPutRequest) Validate() error {
	if err := envelope("env", r.Env); err != nil {
		return err
	}
	return minOne("ttlS", r.TtlS)
}

// MailboxItem is one entry of MailboxListResponse.items.
type MailboxItem struct {
	Slot      string   `json:"slot"`
	Env       Envelope `json:"env"`
	ExpiresAt int64    `json:"expiresAt"`
}

// MailboxListResponse is the answer to GET /v1/c/{id}/mailbox.
type MailboxListResponse struct {
	Items []MailboxItem `json:"items"`
}

// Validate checks every slot and envelope.
func (r *MailboxListResponse) Validate() error {
	for i := range r.Items {
		it := &r.Items[i]
		if !ValidMailboxSlot(it.Slot) {
			return fieldErr(fmt.Sprintf("items[%d].slot", i), "must match ^[A-Za-z0-9._:-]{1,64}$")
		}
		if err := envelope(fmt.Sprintf("items[%d].env", i), &it.Env); err != nil {
			return err
		}
	}
	return nil
}

// ChannelInfoResponse is the answer to GET /v1/c/{id}.
type ChannelInfoResponse struct {
	Status      ChannelStatus `json:"status"`
	Meta        Envelope      `json:"meta"`
	ChanPub     string        `json:"chanPub"`
	ExpiresAt   int64         `json:"expiresAt"`
	OwnerOnline bool          `json:"ownerOnline"`
}

// Validate checks the status, meta and chanPub.
func (r *ChannelInfoResponse) Validate() error {
	switch r.Status {
	case StatusOpen, StatusClosed, StatusExpired:
	default:
		return fieldErr("status", "unknown status %q", r.Status)
	}
	if err := envelope("meta", &r.Meta); err != nil {
		return err
	}
	return key32("chanPub", r.ChanPub)
}

// JoinRequest is the body of POST /v1/c/{id}/join: the authKey derived from the link and the
// viewer's ephemeral X25519 key.
type JoinRequest struct {
	AuthKey string `json:"authKey"`
	PeerPub string `json:"peerPub"`
}

// Validate checks both are Key32.
func (r *JoinRequest) Validate() error {
	if err := key32("authKey", r.AuthKey); err != nil {
		return err
	}
	return key32("peerPub", r.PeerPub)
}

// JoinResponse is the answer to POST /v1/c/{id}/join.
type JoinResponse struct {
	PeerID    string `json:"peerId"`
	PeerToken string `json:"peerToken"`
	ExpiresAt int64  `json:"expiresAt"`
}

// Validate checks the peer id and a token of at least 16 characters.
func (r *JoinResponse) Validate() error {
	if !ValidPeerID(r.PeerID) {
		return fieldErr("peerId", "must match ^[A-Za-z0-9_-]{4,64}$")
	}
	if len(r.PeerToken) < 16 {
		return fieldErr("peerToken", "must be at least 16 characters")
	}
	return nil
}

// ----- functions and push (planned; the reference server answers 501 unsupported) -----

// FunctionRequest is the body of POST /v1/fn/{plugin}/{name}.
type FunctionRequest struct {
	Input   json.RawMessage `json:"input,omitempty"`
	Version *int64          `json:"version,omitempty"`
}

// Validate checks version ≥ 1.
func (r *FunctionRequest) Validate() error {
	if r.Version != nil {
		return minOne("version", *r.Version)
	}
	return nil
}

// PushTokenRequest is the body of POST /v1/push/tokens.
type PushTokenRequest struct {
	Kind  string `json:"kind"`
	Token string `json:"token"`
}

// Validate checks the kind and a token of 1–2048 characters.
func (r *PushTokenRequest) Validate() error {
	switch r.Kind {
	case "unifiedpush", "apns", "fcm":
	default:
		return fieldErr("kind", "must be unifiedpush, apns or fcm")
	}
	if n := len([]rune(r.Token)); n < 1 || n > 2048 {
		return fieldErr("token", "must be 1–2048 characters")
	}
	return nil
}

// PushScheduleRequest is the body of POST /v1/push/schedule.
type PushScheduleRequest struct {
	At      int64     `json:"at"`
	Payload *Envelope `json:"payload"`
}

// Validate checks at ≥ 0 and the payload envelope.
func (r *PushScheduleRequest) Validate() error {
	if r.At < 0 {
		return fieldErr("at", "must be ≥ 0")
	}
	return envelope("payload", r.Payload)
}

// PushCancelRequest is the body of DELETE /v1/push/schedule.
type PushCancelRequest struct {
	ID string `json:"id"`
}

// Validate checks the id is not empty.
func (r *PushCancelRequest) Validate() error {
	if r.ID == "" {
		return fieldErr("id", "must not be empty")
	}
	return nil
}
