package cloud

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/pkuinfo/harness/cloud/client"
)

// vaultIdentities is the client.IdentityStore of one provider: the device identity sealed
// with the host's vault in cloud_secrets (row "identity <origin>"), never in plaintext on
// disk. Each provider has its own device.
type vaultIdentities struct {
	m      *Manager
	origin string
}

func (v *vaultIdentities) name() string { return "identity " + v.origin }

// Load opens the sealed identity, nil when there is none.
func (v *vaultIdentities) Load(ctx context.Context) (*client.Identity, error) {
	b, ok, err := v.m.secret(ctx, v.name())
	if err != nil || !ok {
		return nil, err
	}
	id := new(client.Identity)
	if err := id.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("cloud: the stored device identity: %w", err)
	}
	return id, nil
}

// Save seals id (nil forgets it).
func (v *vaultIdentities) Save(ctx context.Context, id *client.Identity) error {
	if id == nil {
		return v.m.setSecret(ctx, v.name(), nil)
	}
	b, err := id.MarshalBinary()
	if err != nil {
		return err
	}
	return v.m.setSecret(ctx, v.name(), b)
}

// secret opens the sealed row name of cloud_secrets.
func (m *Manager) secret(ctx context.Context, name string) ([]byte, bool, error) {
	var sealed []byte
	err := m.db.SQL.QueryRowContext(ctx, `SELECT sealed FROM cloud_secrets WHERE name = ?`, name).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cloud: secrets: %w", err)
	}
	box, err := m.vault()
	if err != nil {
		return nil, false, err
	}
	b, err := box.Open("cloud_secrets/"+name, sealed)
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// setSecret seals b into row name (nil deletes the row).
func (m *Manager) setSecret(ctx context.Context, name string, b []byte) error {
	if b == nil {
		_, err := m.db.SQL.ExecContext(ctx, `DELETE FROM cloud_secrets WHERE name = ?`, name)
		return err
	}
	box, err := m.vault()
	if err != nil {
		return err
	}
	_, err = m.db.SQL.ExecContext(ctx, `INSERT INTO cloud_secrets (name, sealed) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed`, name, box.Seal("cloud_secrets/"+name, b))
	return err
}

// channelName is the cloud_secrets row of a channel's state: "channel <origin> <plugin> <id>".
func channelName(origin, plugin, id string) string {
	return "channel " + origin + " " + plugin + " " + id
}

// forgetChannelEverywhere deletes the saved state of plugin's channel id under every
// provider origin.
func (m *Manager) forgetChannelEverywhere(ctx context.Context, plugin, id string) error {
	suffix := " " + plugin + " " + id
	_, err := m.db.SQL.ExecContext(ctx, `DELETE FROM cloud_secrets WHERE substr(name, 1, 8) = 'channel ' AND length(name) > ? AND substr(name, -?) = ?`, len(suffix)+8, len(suffix), suffix)
	if err != nil {
		return fmt.Errorf("cloud: secrets: %w", err)
	}
	return nil
}

// channelIDs lists the saved channels of plugin at origin.
func (m *Manager) channelIDs(ctx context.Context, origin, plugin string) ([]string, error) {
	prefix := channelName(origin, plugin, "")
	rows, err := m.db.SQL.QueryContext(ctx, `SELECT name FROM cloud_secrets WHERE substr(name, 1, ?) = ? ORDER BY name`, len(prefix), prefix)
	if err != nil {
		return nil, fmt.Errorf("cloud: secrets: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		ids = append(ids, strings.TrimPrefix(n, prefix))
	}
	return ids, rows.Err()
}
