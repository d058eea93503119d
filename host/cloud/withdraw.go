package cloud

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/host/store"
)

// What a consent allowed ends with it, in every process: a withdrawal, Cloud turned off, a
// provider change or a plugin's removal forgets the channel keys at once and records each
// channel as closing in cloud_closing (one transaction with the change itself), then closes it
// on its provider. A close the provider did not confirm (unreachable) stays recorded and is
// tried again by ClosePending: at `harness serve` start and while it runs, and before any
// channel call of the plugin. Each channel record is bound to the id of the consent it was
// opened under; one whose consent has a different id (withdrawn and given again, or rotated
// by a provider change) is never resumed, only closed.
func init() {
	store.Register(store.Migration{Version: 503, Name: "cloud: consent ids, pending channel closes, data left by removed plugins", SQL: `
ALTER TABLE cloud_consent ADD COLUMN id TEXT NOT NULL DEFAULT '';
UPDATE cloud_consent SET id = lower(hex(randomblob(16)));
CREATE TABLE cloud_closing (
	origin TEXT NOT NULL,
	plugin TEXT NOT NULL,
	channel TEXT NOT NULL,
	expires_at INTEGER NOT NULL,
	since INTEGER NOT NULL,
	PRIMARY KEY (origin, plugin, channel)
);
CREATE TABLE cloud_leftover (
	plugin TEXT NOT NULL,
	origin TEXT NOT NULL,
	at INTEGER NOT NULL,
	PRIMARY KEY (plugin, origin)
);
`})
}

// ErrConsentWithdrawn is the error (errors.Is) of ResumeChannel for a channel opened under a
// consent that has since been withdrawn (or rotated by a provider change): it is closed, not
// resumed, even when the person has allowed the plugin again.
var ErrConsentWithdrawn = errors.New("the channel was opened under a Cloud consent since withdrawn: it is closed, not resumed")

// newConsentID is a fresh consent id: 128 random bits, hex.
func newConsentID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it panics instead, per its doc)
	return hex.EncodeToString(b)
}

// channelRecord is what cloud_secrets holds for a saved channel: the id of the consent it was
// opened under and its client.ChannelState (MarshalBinary). A record saved before consents had
// ids is the bare state: its consent is "", which no consent has, so it is closed, not
// resumed.
type channelRecord struct {
	Consent string          `json:"consent"`
	State   json.RawMessage `json:"state"`
}

func encodeRecord(consent string, st client.ChannelState) ([]byte, error) {
	b, err := st.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return json.Marshal(channelRecord{Consent: consent, State: b})
}

func decodeRecord(b []byte) (string, client.ChannelState, error) {
	var st client.ChannelState
	var rec channelRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return "", st, fmt.Errorf("channel record: %w", err)
	}
	if len(rec.State) == 0 {
		return "", st, st.UnmarshalBinary(b) // the bare state of before
	}
	return rec.Consent, st, st.UnmarshalBinary(rec.State)
}

// consentID is the id of plugin's consent when it is for origin's host, "" when there is none
// for it.
func (m *Manager) consentID(ctx context.Context, plugin, origin string) (string, error) {
	var id, provider string
	err := m.db.SQL.QueryRowContext(ctx, `SELECT id, provider FROM cloud_consent WHERE plugin = ?`, plugin).Scan(&id, &provider)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cloud: consent: %w", err)
	}
	if provider != hostOf(origin) {
		return "", nil
	}
	return id, nil
}

// saveRecord seals ch's state bound to consent under the channel's row, only while plugin's
// consent still has that id (one statement: a withdrawal in another process either comes
// before, and nothing is written, or after, and retires what was written). ok is false when
// the consent is gone or changed.
func (m *Manager) saveRecord(ctx context.Context, origin, plugin, consent string, ch *client.Channel) (bool, error) {
	if consent == "" {
		return false, nil
	}
	b, err := encodeRecord(consent, ch.State())
	if err != nil {
		return false, err
	}
	box, err := m.vault()
	if err != nil {
		return false, err
	}
	name := channelName(origin, plugin, ch.ID())
	res, err := m.db.SQL.ExecContext(ctx, `INSERT INTO cloud_secrets (name, sealed)
		SELECT ?, ? WHERE EXISTS (SELECT 1 FROM cloud_consent WHERE plugin = ? AND id = ? AND provider = ?)
		ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed`,
		name, box.Seal("cloud_secrets/"+name, b), plugin, consent, hostOf(origin))
	if err != nil {
		return false, fmt.Errorf("cloud: secrets: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// retireTx forgets, within tx, the keys of every saved channel keep selects (by origin,
// plugin and the consent it is bound to) and records each as closing. A record that cannot
// be opened is retired too, its expiry unknown (0).
func (m *Manager) retireTx(ctx context.Context, tx *sql.Tx, keep func(origin, plugin, consent string) bool) error {
	box, err := m.vault()
	if err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT name, sealed FROM cloud_secrets WHERE substr(name, 1, 8) = 'channel '`)
	if err != nil {
		return fmt.Errorf("cloud: secrets: %w", err)
	}
	type rec struct {
		name, origin, plugin, id string
		exp                      int64
	}
	var out []rec
	for rows.Next() {
		var name string
		var sealed []byte
		if err := rows.Scan(&name, &sealed); err != nil {
			rows.Close()
			return fmt.Errorf("cloud: secrets: %w", err)
		}
		f := strings.Fields(name)
		if len(f) != 4 {
			continue
		}
		consent, exp := "", int64(0)
		if b, err := box.Open("cloud_secrets/"+name, sealed); err == nil {
			c, st, err := decodeRecord(b)
			if err == nil {
				consent = c
				if !st.ExpiresAt.IsZero() {
					exp = st.ExpiresAt.UnixMilli()
				}
			}
		}
		if keep(f[1], f[2], consent) {
			out = append(out, rec{name, f[1], f[2], f[3], exp})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("cloud: secrets: %w", err)
	}
	now := m.clock().UnixMilli()
	for _, r := range out {
		if _, err := tx.ExecContext(ctx, `DELETE FROM cloud_secrets WHERE name = ?`, r.name); err != nil {
			return fmt.Errorf("cloud: secrets: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO cloud_closing (origin, plugin, channel, expires_at, since) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, r.origin, r.plugin, r.id, r.exp, now); err != nil {
			return fmt.Errorf("cloud: closing: %w", err)
		}
	}
	return nil
}

// retireOpen records the channels this process has open among chs as closing too (a channel
// whose record is already gone), and disconnects them: nothing more is relayed from here.
func (m *Manager) retireOpen(ctx context.Context, chs []openChannel) error {
	now := m.clock().UnixMilli()
	for _, o := range chs {
		o.ch.Disconnect()
		if _, err := m.db.SQL.ExecContext(ctx, `INSERT INTO cloud_closing (origin, plugin, channel, expires_at, since) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, o.ch.Link().Origin(), o.plugin, o.ch.ID(), o.ch.ExpiresAt().UnixMilli(), now); err != nil {
			return fmt.Errorf("cloud: closing: %w", err)
		}
	}
	return nil
}

// Closing is a channel whose close its provider has not confirmed yet: its keys are already
// forgotten. ExpiresAt is when it ends by itself anyway (zero when unknown); Since when it was
// withdrawn.
type Closing struct {
	Origin    string    `json:"origin"`
	Plugin    string    `json:"plugin"`
	Channel   string    `json:"channel"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	Since     time.Time `json:"since"`
}

// Closing lists the pending closes of plugin (every plugin's when plugin is "").
func (m *Manager) Closing(ctx context.Context, plugin string) ([]Closing, error) {
	rows, err := m.db.SQL.QueryContext(ctx, `SELECT origin, plugin, channel, expires_at, since FROM cloud_closing
		WHERE ? = '' OR plugin = ? ORDER BY since, channel`, plugin, plugin)
	if err != nil {
		return nil, fmt.Errorf("cloud: closing: %w", err)
	}
	defer rows.Close()
	out := []Closing{}
	for rows.Next() {
		var c Closing
		var exp, since int64
		if err := rows.Scan(&c.Origin, &c.Plugin, &c.Channel, &exp, &since); err != nil {
			return nil, fmt.Errorf("cloud: closing: %w", err)
		}
		if exp != 0 {
			c.ExpiresAt = time.UnixMilli(exp).UTC()
		}
		c.Since = time.UnixMilli(since).UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}

// ClosePending closes on their providers the channels recorded as closing (plugin's only
// when plugin is not ""), each within closeTimeout, and returns how many are still pending.
// A close is done when the provider confirms it or answers that the channel is gone or
// unknown; it is dropped unconfirmed when the channel's expiry has passed (it ended by itself)
// or this device no longer has an identity with that provider (after "delete all cloud data",
// which closed the device's channels there). Any other failure (the provider unreachable,
// another refusal) leaves it pending for the next try. A channel this process still has open
// is disconnected first.
func (m *Manager) ClosePending(ctx context.Context, plugin string) (int, error) {
	pend, err := m.Closing(ctx, plugin)
	if err != nil {
		return 0, err
	}
	left := 0
	now := m.clock()
	for _, c := range pend {
		m.mu.Lock()
		o, open := m.channels[c.Channel]
		m.mu.Unlock()
		if open {
			m.untrack(c.Channel)
			o.ch.Disconnect()
		}
		done, err := m.closeOne(ctx, c, now)
		if err != nil {
			return left, err
		}
		if !done {
			left++
			continue
		}
		if _, err := m.db.SQL.ExecContext(ctx, `DELETE FROM cloud_closing WHERE origin = ? AND plugin = ? AND channel = ?`, c.Origin, c.Plugin, c.Channel); err != nil {
			return left, fmt.Errorf("cloud: closing: %w", err)
		}
	}
	return left, nil
}

// closeOne tries one pending close; done reports it needs no further try. err is a local
// failure (the database, the vault).
func (m *Manager) closeOne(ctx context.Context, c Closing, now time.Time) (bool, error) {
	if !c.ExpiresAt.IsZero() && !now.Before(c.ExpiresAt) {
		return true, nil
	}
	if ok, err := m.registered(ctx, c.Origin); err != nil || !ok {
		return !ok, err
	}
	var cl *client.Client
	if cc, base, err := m.client(ctx); err == nil && base == c.Origin {
		cl = cc
	} else {
		cl, err = client.New(client.Config{BaseURL: c.Origin, HTTPClient: m.hc, Identities: &vaultIdentities{m: m, origin: c.Origin}, Now: m.clock})
		if err != nil {
			return false, err
		}
	}
	cp, err := cl.Plugin(c.Plugin, protocol.ServiceChannels)
	if err != nil {
		return false, err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	err = cp.CloseChannel(cctx, c.Channel)
	var pe *protocol.Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &pe):
		return pe.Code == protocol.CodeNotFound || pe.Code == protocol.CodeGone, nil
	}
	return false, nil
}

// Revoke withdraws plugin's consent (the switch turned off); its calls fail with
// CodeConsentRequired again. In the same transaction every channel the plugin saved, with any
// provider, has its keys forgotten and is recorded as closing; then they are closed on their
// providers (ClosePending), so a later consent opens new channels and the old links are dead.
// A close the provider does not confirm stays pending (Closing) and is not an error. Revoking a
// plugin that had none is not an error.
func (m *Manager) Revoke(ctx context.Context, plugin string) error {
	err := m.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM cloud_consent WHERE plugin = ?`, plugin); err != nil {
			return fmt.Errorf("cloud: consent: %w", err)
		}
		return m.retireTx(ctx, tx, func(_, p, _ string) bool { return p == plugin })
	})
	if err != nil {
		return err
	}
	if err := m.retireOpen(ctx, m.takeChannels(plugin)); err != nil {
		return err
	}
	_, err = m.ClosePending(ctx, plugin)
	return err
}

// settle retires plugin's saved channels at origin that are bound to another consent than
// current (or to none), and tries the plugin's pending closes: what a withdrawal elsewhere left
// to do is done before the plugin uses channels again.
func (m *Manager) settle(ctx context.Context, origin, plugin, current string) error {
	err := m.db.Tx(ctx, func(tx *sql.Tx) error {
		return m.retireTx(ctx, tx, func(o, p, c string) bool { return p == plugin && (o != origin || c != current) })
	})
	if err != nil {
		return err
	}
	_, err = m.ClosePending(ctx, plugin)
	return err
}

// RemoveOptions are ForgetPlugin's options. DeleteData deletes every store key the plugin
// kept with the current provider before it is forgotten (the provider must answer); without
// it that data stays on the provider, recorded as left behind, and is deleted before a later
// plugin under the same id may use Cloud with that provider.
type RemoveOptions struct {
	DeleteData bool `json:"deleteCloudData"`
}

// ForgetPlugin is the Cloud side of removing plugin: its consent and local mirror are
// forgotten, its channels closed as by Revoke, and its store data with the current provider
// deleted (opts.DeleteData) or recorded as left behind with every provider this device is
// registered with. With DeleteData and the provider unreachable it fails with CodeOffline
// and forgets nothing. A later install under the same id starts unconsented.
func (m *Manager) ForgetPlugin(ctx context.Context, plugin string, opts RemoveOptions) error {
	base, err := m.Provider(ctx)
	if err != nil {
		return err
	}
	deleted := ""
	if opts.DeleteData && base != "" {
		if err := m.deleteStore(ctx, plugin, base); err != nil {
			return err
		}
		deleted = base
	}
	err = m.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM cloud_consent WHERE plugin = ?`, `DELETE FROM cloud_mirror WHERE plugin = ?`} {
			if _, err := tx.ExecContext(ctx, q, plugin); err != nil {
				return fmt.Errorf("cloud: forget %s: %w", plugin, err)
			}
		}
		if deleted != "" {
			if _, err := tx.ExecContext(ctx, `DELETE FROM cloud_leftover WHERE plugin = ? AND origin = ?`, plugin, deleted); err != nil {
				return fmt.Errorf("cloud: forget %s: %w", plugin, err)
			}
		}
		// Left behind with every provider the device has an identity with (but the one just
		// emptied).
		if _, err := tx.ExecContext(ctx, `INSERT INTO cloud_leftover (plugin, origin, at)
			SELECT ?, substr(name, 10), ? FROM cloud_secrets WHERE substr(name, 1, 9) = 'identity ' AND substr(name, 10) != ?
			ON CONFLICT DO NOTHING`, plugin, m.clock().UnixMilli(), deleted); err != nil {
			return fmt.Errorf("cloud: forget %s: %w", plugin, err)
		}
		return m.retireTx(ctx, tx, func(_, p, _ string) bool { return p == plugin })
	})
	if err != nil {
		return err
	}
	if err := m.retireOpen(ctx, m.takeChannels(plugin)); err != nil {
		return err
	}
	_, err = m.ClosePending(ctx, plugin)
	return err
}

// deleteStore deletes every store key of plugin with the provider at base (nothing when the
// device never registered there). Offline it fails with CodeOffline.
func (m *Manager) deleteStore(ctx context.Context, plugin, base string) error {
	if ok, err := m.registered(ctx, base); err != nil || !ok {
		return err
	}
	if meta, _ := m.KnownMeta(ctx); meta != nil && len(missing(meta, []string{protocol.ServiceStore})) > 0 {
		return nil // the provider keeps no store
	}
	cp, err := m.scope(ctx, plugin, []string{protocol.ServiceStore}, nil)
	if err != nil {
		return err
	}
	st := cp.Store(false) // listing and deleting need no value key
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	items, err := st.List(rctx, "")
	if err = m.wrap(ctx, plugin, err); err != nil {
		return err
	}
	for _, it := range items {
		if err := m.wrap(ctx, plugin, st.Delete(rctx, it.Key)); err != nil && !isWire(err, protocol.CodeNotFound) {
			return err
		}
	}
	return nil
}

// Leftover reports whether a removed plugin under id left data with the provider at origin
// that has not been deleted yet.
func (m *Manager) Leftover(ctx context.Context, plugin, origin string) (bool, error) {
	var n int
	if err := m.db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM cloud_leftover WHERE plugin = ? AND origin = ?`, plugin, origin).Scan(&n); err != nil {
		return false, fmt.Errorf("cloud: leftover: %w", err)
	}
	return n > 0, nil
}

// clearLeftover deletes, before plugin is allowed with base, what a removed plugin under the
// same id left there.
func (m *Manager) clearLeftover(ctx context.Context, plugin, base string) error {
	left, err := m.Leftover(ctx, plugin, base)
	if err != nil || !left {
		return err
	}
	if err := m.deleteStore(ctx, plugin, base); err != nil {
		return fmt.Errorf("cloud: %s: a removed plugin under this id left data with %s, which must be deleted first: %w", plugin, hostOf(base), err)
	}
	if _, err := m.db.SQL.ExecContext(ctx, `DELETE FROM cloud_leftover WHERE plugin = ? AND origin = ?`, plugin, base); err != nil {
		return fmt.Errorf("cloud: leftover: %w", err)
	}
	return nil
}
