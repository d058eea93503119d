package cloud

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/protocol"
)

// ClearPlugin is "clear this plugin's cloud data" (seed 003 "插件指南" §2): every store key of
// the plugin is deleted on the provider, its saved channels are closed there, and the local
// mirror and channel keys are dropped. The consent stays as it is. It needs the provider
// reachable (CodeOffline otherwise, and nothing local is dropped) unless the device never
// registered with it.
func (m *Manager) ClearPlugin(ctx context.Context, d *Decl) error {
	if d == nil {
		return errors.New("cloud: this plugin declares no Cloud use")
	}
	c, base, err := m.client(ctx)
	if err != nil {
		return err
	}
	if c != nil {
		if err := m.clearRemote(ctx, d, base); err != nil {
			return err
		}
	}
	return m.clearLocal(ctx, d.Plugin, base)
}

func (m *Manager) registered(ctx context.Context, base string) (bool, error) {
	_, ok, err := m.secret(ctx, (&vaultIdentities{origin: base}).name())
	return ok, err
}

func (m *Manager) clearRemote(ctx context.Context, d *Decl, base string) error {
	if ok, err := m.registered(ctx, base); err != nil || !ok {
		return err
	}
	p := &Plugin{m: m, decl: *d}
	meta, _ := m.KnownMeta(ctx)
	services := tokenServices(meta, d.Uses)
	if slices.Contains(services, protocol.ServiceStore) {
		cp, err := m.scope(ctx, d.Plugin, services, nil)
		if err != nil {
			return err
		}
		st := cp.Store(d.E2E)
		items, err := st.List(ctx, "")
		if err = m.wrap(ctx, d.Plugin, err); err != nil {
			return err
		}
		for _, it := range items {
			if err := m.wrap(ctx, d.Plugin, st.Delete(ctx, it.Key)); err != nil && !isWire(err, protocol.CodeNotFound) {
				return err
			}
		}
	}
	if slices.Contains(services, protocol.ServiceChannels) {
		cp, err := m.scope(ctx, d.Plugin, services, nil)
		if err != nil {
			return err
		}
		ids, err := m.channelIDs(ctx, base, d.Plugin)
		if err != nil {
			return err
		}
		for _, id := range ids {
			_, st, ok, err := p.state(ctx, base, id)
			if err != nil || !ok {
				continue
			}
			m.mu.Lock()
			ch := m.channels[id].ch
			m.mu.Unlock()
			if ch == nil {
				if ch, err = cp.ResumeChannel(ctx, st, 1); err != nil {
					continue
				}
			}
			cctx, cancel := context.WithTimeout(ctx, closeTimeout)
			err = m.wrap(ctx, d.Plugin, ch.Close(cctx))
			cancel()
			ch.Disconnect()
			if IsCode(err, CodeOffline) {
				return err
			}
		}
	}
	return nil
}

func (m *Manager) clearLocal(ctx context.Context, plugin, base string) error {
	if _, err := m.db.SQL.ExecContext(ctx, `DELETE FROM cloud_mirror WHERE plugin = ?`, plugin); err != nil {
		return fmt.Errorf("cloud: mirror: %w", err)
	}
	if base == "" {
		return nil
	}
	ids, err := m.channelIDs(ctx, base, plugin)
	if err != nil {
		return err
	}
	for _, id := range ids {
		m.untrack(id)
		if err := m.setSecret(ctx, channelName(base, plugin, id), nil); err != nil {
			return err
		}
	}
	return nil
}

// ForgetAll is "delete all cloud data": DELETE /v1/devices/me removes the device and all it
// stored on the provider, then the host forgets the device identity, every channel key,
// every mirror, every pending close and every record of data left behind by a removed plugin
// (the device's channels and data went with it; another provider's cannot be reached without
// the identity). Consents and the provider setting stay. Offline it fails with CodeOffline and
// forgets nothing, so no data is left behind on the provider unreachable from here.
func (m *Manager) ForgetAll(ctx context.Context) error {
	c, base, err := m.client(ctx)
	if err != nil {
		return err
	}
	if c != nil {
		ok, err := m.registered(ctx, base)
		if err != nil {
			return err
		}
		if ok {
			cp, err := m.anyScope(ctx)
			if err != nil {
				return err
			}
			if err := m.wrap(ctx, "", cp.DeleteDevice(ctx)); err != nil && !isWire(err, protocol.CodeUnauthorized) {
				return err
			}
		}
	}
	m.mu.Lock()
	for _, o := range m.channels {
		o.ch.Disconnect()
	}
	m.channels = map[string]openChannel{}
	m.cl, m.plugins = nil, map[string]*client.Plugin{}
	m.mu.Unlock()
	if _, err := m.db.SQL.ExecContext(ctx, `DELETE FROM cloud_secrets`); err != nil {
		return fmt.Errorf("cloud: secrets: %w", err)
	}
	if _, err := m.db.SQL.ExecContext(ctx, `DELETE FROM cloud_mirror`); err != nil {
		return fmt.Errorf("cloud: mirror: %w", err)
	}
	// The device's channels and data went with it; without its identity nothing left with
	// another provider can be reached from here either.
	for _, q := range []string{`DELETE FROM cloud_closing`, `DELETE FROM cloud_leftover`} {
		if _, err := m.db.SQL.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("cloud: forget: %w", err)
		}
	}
	return nil
}

// anyScope is a token scope good for device-wide requests: the first service the provider
// offers.
func (m *Manager) anyScope(ctx context.Context) (*client.Plugin, error) {
	svc := protocol.ServiceStore
	if meta, _ := m.KnownMeta(ctx); meta != nil && len(meta.Services) > 0 && !slices.Contains(meta.Services, svc) {
		svc = meta.Services[0]
	}
	return m.scope(ctx, "harness", []string{svc}, nil)
}
