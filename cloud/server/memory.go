package server

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// Memory is a Storage held in maps, for tests and throw-away servers: the same behaviour as
// SQLite (the conformance test runs both), nothing survives the process.
type Memory struct {
	mu       sync.Mutex
	devices  map[string]Device
	bySign   map[string]string
	nonces   map[[2]string]int64
	seq      map[Namespace]int64
	values   map[Namespace]map[string]StoreItem
	channels map[string]*Channel
	mailbox  map[string]map[string]MailboxItem
	secrets  map[string][]byte
}

// NewMemory returns an empty in-memory Storage.
func NewMemory() *Memory {
	return &Memory{devices: map[string]Device{}, bySign: map[string]string{}, nonces: map[[2]string]int64{},
		seq: map[Namespace]int64{}, values: map[Namespace]map[string]StoreItem{}, channels: map[string]*Channel{},
		mailbox: map[string]map[string]MailboxItem{}, secrets: map[string][]byte{}}
}

// Close implements Storage; it keeps the data.
func (m *Memory) Close() error { return nil }

// CreateDevice implements Storage.
func (m *Memory) CreateDevice(_ context.Context, d Device) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.bySign[d.SignPub]; dup {
		return ErrConflict
	}
	if _, dup := m.devices[d.ID]; dup {
		return ErrConflict
	}
	m.devices[d.ID] = d
	m.bySign[d.SignPub] = d.ID
	return nil
}

// Device implements Storage.
func (m *Memory) Device(_ context.Context, id string) (Device, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.devices[id]
	if !ok {
		return Device{ID: id}, ErrNotFound
	}
	return d, nil
}

// DeleteDevice implements Storage.
func (m *Memory) DeleteDevice(_ context.Context, id string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.devices[id]
	if !ok {
		return nil, ErrNotFound
	}
	delete(m.devices, id)
	delete(m.bySign, d.SignPub)
	for k := range m.nonces {
		if k[0] == id {
			delete(m.nonces, k)
		}
	}
	for ns := range m.seq {
		if ns.Device == id {
			delete(m.seq, ns)
			delete(m.values, ns)
		}
	}
	var chans []string
	for cid, c := range m.channels {
		if c.Device == id {
			chans = append(chans, cid)
			delete(m.channels, cid)
			delete(m.mailbox, cid)
		}
	}
	slices.Sort(chans)
	return chans, nil
}

// UseNonce implements Storage.
func (m *Memory) UseNonce(_ context.Context, device, nonce string, until, now int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{device, nonce}
	if u, ok := m.nonces[k]; ok && u > now {
		return ErrConflict
	}
	m.nonces[k] = until
	return nil
}

func live(it StoreItem, now int64) bool { return it.ExpiresAt == 0 || it.ExpiresAt > now }

// StoreList implements Storage.
func (m *Memory) StoreList(_ context.Context, ns Namespace, prefix, after string, limit int, now int64) ([]StoreItem, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []StoreItem
	for k, it := range m.values[ns] {
		if strings.HasPrefix(k, prefix) && k > after && live(it, now) {
			out = append(out, StoreItem{Key: k, Version: it.Version, UpdatedAt: it.UpdatedAt})
		}
	}
	slices.SortFunc(out, func(a, b StoreItem) int { return strings.Compare(a.Key, b.Key) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// StoreGet implements Storage.
func (m *Memory) StoreGet(_ context.Context, ns Namespace, key string, now int64) (StoreItem, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.values[ns][key]
	if !ok || !live(it, now) {
		return StoreItem{Key: key}, ErrNotFound
	}
	it.Value = slices.Clone(it.Value)
	return it, nil
}

// StorePut implements Storage.
func (m *Memory) StorePut(_ context.Context, ns Namespace, it StoreItem, ifMatch *int64, q StoreQuota, now int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vals := m.values[ns]
	var cur int64
	if old, ok := vals[it.Key]; ok && live(old, now) {
		cur = old.Version
	}
	if ifMatch != nil && *ifMatch != cur {
		return 0, ErrConflict
	}
	var n, bytes int64
	for k, v := range vals {
		if k != it.Key && live(v, now) {
			n++
			bytes += int64(len(k) + len(v.Value))
		}
	}
	if n+1 > q.MaxKeys {
		return 0, &QuotaError{Limit: fmt.Sprintf("%d keys", q.MaxKeys)}
	}
	if bytes+int64(len(it.Key)+len(it.Value)) > q.MaxBytes {
		return 0, &QuotaError{Limit: fmt.Sprintf("%d bytes", q.MaxBytes)}
	}
	// The device's other live values, in every namespace.
	var devBytes, plugins int64
	for other, ov := range m.values {
		if other.Device != ns.Device {
			continue
		}
		held := false
		for k, v := range ov {
			if live(v, now) && (other != ns || k != it.Key) {
				devBytes += int64(len(k) + len(v.Value))
				held = true
			}
		}
		if held || other == ns {
			plugins++
		}
	}
	if _, ok := m.values[ns]; !ok {
		plugins++
	}
	if err := deviceQuota(q, plugins, devBytes+int64(len(it.Key)+len(it.Value))); err != nil {
		return 0, err
	}
	if vals == nil {
		vals = map[string]StoreItem{}
		m.values[ns] = vals
	}
	m.seq[ns]++
	v := m.seq[ns]
	vals[it.Key] = StoreItem{Key: it.Key, Value: slices.Clone(it.Value), Version: v, UpdatedAt: now, ExpiresAt: it.ExpiresAt}
	return v, nil
}

// StoreDelete implements Storage.
func (m *Memory) StoreDelete(_ context.Context, ns Namespace, key string, now int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.values[ns][key]
	if !ok || !live(it, now) {
		return ErrNotFound
	}
	delete(m.values[ns], key)
	return nil
}

// CreateChannel implements Storage.
func (m *Memory) CreateChannel(_ context.Context, c Channel, maxOpen int, now int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, o := range m.channels {
		if o.Device == c.Device && o.Status == protocol.StatusOpen && o.ExpiresAt > now {
			n++
		}
	}
	if n >= maxOpen {
		return &QuotaError{Limit: fmt.Sprintf("%d open channels", maxOpen)}
	}
	if _, dup := m.channels[c.ID]; dup {
		return ErrConflict
	}
	c.Status = protocol.StatusOpen
	c.Peers = nil
	m.channels[c.ID] = &c
	return nil
}

// Channel implements Storage.
func (m *Memory) Channel(_ context.Context, id string) (Channel, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.channels[id]
	if !ok {
		return Channel{ID: id}, ErrNotFound
	}
	out := *c
	out.Peers = slices.Clone(c.Peers)
	return out, nil
}

// SetChannelExpiry implements Storage.
func (m *Memory) SetChannelExpiry(_ context.Context, id string, expiresAt int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.channels[id]; ok {
		c.ExpiresAt = expiresAt
	}
	return nil
}

// SetChannelStatus implements Storage.
func (m *Memory) SetChannelStatus(_ context.Context, id, status string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.channels[id]; ok {
		c.Status = status
		c.Peers = nil
	}
	delete(m.mailbox, id)
	return nil
}

// AddPeer implements Storage.
func (m *Memory) AddPeer(_ context.Context, channel string, p Peer, maxPeers int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.channels[channel]
	if !ok {
		return ErrNotFound
	}
	if len(c.Peers) >= maxPeers {
		return ErrConflict
	}
	c.Peers = append(c.Peers, p)
	return nil
}

// RemovePeer implements Storage.
func (m *Memory) RemovePeer(_ context.Context, channel, peerID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.channels[channel]
	if !ok {
		return ErrNotFound
	}
	i := slices.IndexFunc(c.Peers, func(p Peer) bool { return p.ID == peerID })
	if i < 0 {
		return ErrNotFound
	}
	c.Peers = slices.Delete(c.Peers, i, i+1)
	return nil
}

// PeerByToken implements Storage.
func (m *Memory) PeerByToken(_ context.Context, tokenHash string) (string, Peer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, c := range m.channels {
		for _, p := range c.Peers {
			if p.TokenHash == tokenHash {
				return id, p, nil
			}
		}
	}
	return "", Peer{TokenHash: tokenHash}, ErrNotFound
}

// MailboxPut implements Storage.
func (m *Memory) MailboxPut(_ context.Context, channel string, it MailboxItem, maxSlots int, now int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	box := m.mailbox[channel]
	n := 0
	for slot, o := range box {
		if slot != it.Slot && o.ExpiresAt > now {
			n++
		}
	}
	if n >= maxSlots {
		return &QuotaError{Limit: fmt.Sprintf("%d mailbox slots", maxSlots)}
	}
	if box == nil {
		box = map[string]MailboxItem{}
		m.mailbox[channel] = box
	}
	box[it.Slot] = it
	return nil
}

// MailboxDelete implements Storage.
func (m *Memory) MailboxDelete(_ context.Context, channel, slot string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.mailbox[channel][slot]; !ok {
		return ErrNotFound
	}
	delete(m.mailbox[channel], slot)
	return nil
}

// MailboxClear implements Storage.
func (m *Memory) MailboxClear(_ context.Context, channel string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mailbox, channel)
	return nil
}

// MailboxList implements Storage.
func (m *Memory) MailboxList(_ context.Context, channel string, now int64) ([]MailboxItem, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []MailboxItem{}
	for _, it := range m.mailbox[channel] {
		if it.ExpiresAt > now {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b MailboxItem) int { return strings.Compare(a.Slot, b.Slot) })
	return out, nil
}

// Secret implements Storage.
func (m *Memory) Secret(_ context.Context, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.secrets[name]; ok {
		return slices.Clone(s), nil
	}
	s := make([]byte, 32)
	if _, err := rand.Read(s); err != nil {
		return nil, err
	}
	m.secrets[name] = s
	return slices.Clone(s), nil
}

// Sweep implements Storage.
func (m *Memory) Sweep(_ context.Context, now int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, vals := range m.values {
		for k, it := range vals {
			if !live(it, now) {
				delete(vals, k)
			}
		}
	}
	for k, u := range m.nonces {
		if u <= now {
			delete(m.nonces, k)
		}
	}
	for _, box := range m.mailbox {
		for s, it := range box {
			if it.ExpiresAt <= now {
				delete(box, s)
			}
		}
	}
	for id, c := range m.channels {
		if c.ExpiresAt <= now-channelRetentionMs {
			delete(m.channels, id)
			delete(m.mailbox, id)
		}
	}
	return nil
}
