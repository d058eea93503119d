package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// Storage is everything the server keeps across restarts, behind one small interface so that a
// PostgreSQL backend can replace the embedded SQLite one (OpenSQLite). Times are Unix ms and
// every method takes "now" from the server's clock, so expiry never depends on the database's
// clock. Methods return ErrNotFound, ErrConflict or a *QuotaError for the conditions they
// name; anything else is a storage failure (answered `500 server`).
type Storage interface {
	// CreateDevice stores a new device. ErrConflict when signPub is already registered.
	CreateDevice(ctx context.Context, d Device) error
	// Device reads a device by id. ErrNotFound when there is none.
	Device(ctx context.Context, id string) (Device, error)
	// DeleteDevice removes the device and everything it owns: store values and versions,
	// channels, their peers and mailboxes, auth nonces. It returns the ids of the channels it
	// removed, sorted, so the live relay can close them. ErrNotFound when there is no such
	// device.
	DeleteDevice(ctx context.Context, id string) (channels []string, err error)
	// UseNonce records an auth nonce of a device until `until`; ErrConflict when the nonce is
	// already recorded and not yet forgotten.
	UseNonce(ctx context.Context, device, nonce string, until, now int64) error

	// StoreList lists live keys of ns starting with prefix and greater than after, in byte order,
	// at most limit of them.
	StoreList(ctx context.Context, ns Namespace, prefix, after string, limit int, now int64) ([]StoreItem, error)
	// StoreGet reads a live value. ErrNotFound when absent or expired.
	StoreGet(ctx context.Context, ns Namespace, key string, now int64) (StoreItem, error)
	// StorePut writes a value atomically: with ifMatch set, ErrConflict unless the live
	// version equals *ifMatch (0: the key must be absent or expired). The new version is
	// greater than every version the namespace ever gave, so versions never go backwards
	// across delete and expiry. A *QuotaError when the namespace would exceed q.StoreLimits,
	// or the device (all its namespaces' live values) q.Device: more than q.Device.MaxBytes,
	// or a value in more than q.Device.MaxPlugins namespaces.
	StorePut(ctx context.Context, ns Namespace, it StoreItem, ifMatch *int64, q StoreQuota, now int64) (int64, error)
	// StoreDelete removes a live value. ErrNotFound when absent or expired.
	StoreDelete(ctx context.Context, ns Namespace, key string, now int64) error

	// CreateChannel stores an open channel if its device has fewer than maxOpen open ones;
	// a *QuotaError otherwise, ErrConflict when the id exists.
	CreateChannel(ctx context.Context, c Channel, maxOpen int, now int64) error
	// Channel reads a channel with its peers. ErrNotFound when there is none.
	Channel(ctx context.Context, id string) (Channel, error)
	// SetChannelExpiry moves an open channel's expiry.
	SetChannelExpiry(ctx context.Context, id string, expiresAt int64) error
	// SetChannelStatus marks a channel closed or expired and removes its peers and mailbox.
	SetChannelStatus(ctx context.Context, id, status string) error
	// AddPeer claims a seat: ErrConflict when the channel already has maxPeers peers,
	// ErrNotFound when there is no such channel.
	AddPeer(ctx context.Context, channel string, p Peer, maxPeers int) error
	// RemovePeer frees a seat. ErrNotFound when the peer is not in the channel.
	RemovePeer(ctx context.Context, channel, peerID string) error
	// PeerByToken finds a peer from the SHA-256 of its token. ErrNotFound when none.
	PeerByToken(ctx context.Context, tokenHash string) (channel string, p Peer, err error)

	// MailboxPut stores or replaces a slot; a *QuotaError when a new slot would exceed
	// maxSlots live slots.
	MailboxPut(ctx context.Context, channel string, it MailboxItem, maxSlots int, now int64) error
	// MailboxDelete removes a slot. ErrNotFound when absent.
	MailboxDelete(ctx context.Context, channel, slot string) error
	// MailboxClear removes every slot.
	MailboxClear(ctx context.Context, channel string) error
	// MailboxList lists live slots in slot order.
	MailboxList(ctx context.Context, channel string, now int64) ([]MailboxItem, error)

	// Secret returns the named server secret, creating it from fresh random bytes on first use.
	Secret(ctx context.Context, name string) ([]byte, error)
	// Sweep removes expired store values, nonces and mailbox slots, and channels (with their
	// peers and mailboxes) a day after their expiry.
	Sweep(ctx context.Context, now int64) error
	// Close releases the storage.
	Close() error
}

// ErrNotFound says the record does not exist (or has expired).
var ErrNotFound = errors.New("not found")

// ErrConflict says a uniqueness or version condition failed.
var ErrConflict = errors.New("conflict")

// StoreQuota is what StorePut enforces: the seed's per-(device, plugin) limits and the
// device-wide ones.
type StoreQuota struct {
	protocol.StoreLimits
	Device DeviceStoreLimits
}

// DeviceStoreLimits bound one device's store across all its plugins: MaxBytes of keys and
// values (live ones), and MaxPlugins namespaces holding at least one live value.
type DeviceStoreLimits struct {
	MaxBytes   int64
	MaxPlugins int64
}

// DefaultDeviceStore is 4,000,000 bytes and 16 plugins per device: four plugins' worth of the
// default per-plugin store, and more plugins than one person uses with one Cloud.
var DefaultDeviceStore = DeviceStoreLimits{MaxBytes: 4_000_000, MaxPlugins: 16}

// QuotaError says a write would exceed a limit; Limit names it ("1000 keys" per plugin, or
// "16 plugins per device").
type QuotaError struct{ Limit string }

// Error says which limit.
func (e *QuotaError) Error() string { return "quota: the limit is " + e.Limit }

// Device is a registered device identity: two public keys (Key32 strings) and its id.
type Device struct {
	ID        string
	SignPub   string
	BoxPub    string
	CreatedAt int64
}

// Namespace is a store namespace: the (device, plugin) pair from a plugin token.
type Namespace struct{ Device, Plugin string }

// StoreItem is a stored value. Value is the compact JSON; ExpiresAt is 0 without a TTL.
type StoreItem struct {
	Key       string
	Value     json.RawMessage
	Version   int64
	UpdatedAt int64
	ExpiresAt int64
}

// Channel is a relay channel's durable record. Meta is the sealed meta envelope as JSON.
type Channel struct {
	ID        string
	Device    string
	Plugin    string
	JoinHash  string
	ChanPub   string
	Meta      protocol.Envelope
	MaxPeers  int
	Page      string
	Status    string // open, closed or expired
	CreatedAt int64
	ExpiresAt int64
	Peers     []Peer
}

// Peer is a viewer holding a seat: its id, ephemeral X25519 key, the SHA-256 (base64url) of its
// peer token and when it joined.
type Peer struct {
	ID        string
	Pub       string
	TokenHash string
	JoinedAt  int64
}

// MailboxItem is one sealed blob in a channel's mailbox.
type MailboxItem struct {
	Slot      string
	Env       protocol.Envelope
	ExpiresAt int64
}

// deviceQuota checks a put against q.Device: plugins is the number of namespaces of the device
// that hold a live value once the put is done, bytes the device's live keys and values then. A
// zero limit is no limit.
func deviceQuota(q StoreQuota, plugins, bytes int64) error {
	if q.Device.MaxPlugins > 0 && plugins > q.Device.MaxPlugins {
		return &QuotaError{Limit: fmt.Sprintf("%d plugins per device", q.Device.MaxPlugins)}
	}
	if q.Device.MaxBytes > 0 && bytes > q.Device.MaxBytes {
		return &QuotaError{Limit: fmt.Sprintf("%d bytes per device", q.Device.MaxBytes)}
	}
	return nil
}

// ChannelRetentionMs is how long (ms) a channel's record outlives its expiry before Sweep
// removes it, so that GET /v1/c/{id} can still answer "closed" or "expired" to a late viewer.
const ChannelRetentionMs = channelRetentionMs
