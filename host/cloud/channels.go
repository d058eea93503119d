package cloud

import (
	"context"
	"fmt"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/protocol"
)

// OpenChannel opens a relay channel for the plugin (seed 003 "插件指南" §5): its link is a
// client.SecretLink that prints "[secret link]"; Send, Kick, Extend, Close and Mailbox are on
// the channel, and its owner socket reconnects with backoff by itself. The channel's keys are
// sealed with the host's vault (cloud_secrets) so ResumeChannel finds it after a restart.
func (p *Plugin) OpenChannel(ctx context.Context, opts client.OpenOptions) (*client.Channel, error) {
	cp, err := p.gate(ctx, protocol.ServiceChannels)
	if err != nil {
		return nil, err
	}
	ch, err := cp.OpenChannel(ctx, opts)
	if err = p.m.wrap(ctx, p.decl.Plugin, err); err != nil {
		return nil, err
	}
	if err := p.SaveChannel(ctx, ch); err != nil {
		ch.Disconnect()
		return nil, err
	}
	p.m.track(p.decl.Plugin, ch)
	return ch, nil
}

// SaveChannel seals ch's current state (keys and expiry) again, after Extend.
func (p *Plugin) SaveChannel(ctx context.Context, ch *client.Channel) error {
	base, err := p.m.Provider(ctx)
	if err != nil {
		return err
	}
	b, err := ch.State().MarshalBinary()
	if err != nil {
		return err
	}
	return p.m.setSecret(ctx, channelName(base, p.decl.Plugin, ch.ID()), b)
}

// Channels lists the ids of the plugin's channels saved with the current provider whose
// expiry has not passed (channels.list()).
func (p *Plugin) Channels(ctx context.Context) ([]string, error) {
	base, err := p.m.Provider(ctx)
	if err != nil || base == "" {
		return nil, err
	}
	ids, err := p.m.channelIDs(ctx, base, p.decl.Plugin)
	if err != nil {
		return nil, err
	}
	now := p.m.clock()
	out := []string{}
	for _, id := range ids {
		st, ok, err := p.state(ctx, base, id)
		if err != nil {
			return nil, err
		}
		if ok && (st.ExpiresAt.IsZero() || now.Before(st.ExpiresAt)) {
			out = append(out, id)
		}
	}
	return out, nil
}

func (p *Plugin) state(ctx context.Context, base, id string) (client.ChannelState, bool, error) {
	var st client.ChannelState
	b, ok, err := p.m.secret(ctx, channelName(base, p.decl.Plugin, id))
	if err != nil || !ok {
		return st, ok, err
	}
	if err := st.UnmarshalBinary(b); err != nil {
		return st, false, fmt.Errorf("cloud: channel %s of %s: %w", id, p.decl.Plugin, err)
	}
	return st, true, nil
}

// ResumeChannel reconnects the plugin's saved channel id (channels.get(id)); eventBuffer as
// in client.OpenOptions. A channel never saved is an error; one that ended reports it through
// its Events and Err.
func (p *Plugin) ResumeChannel(ctx context.Context, id string, eventBuffer int) (*client.Channel, error) {
	cp, err := p.gate(ctx, protocol.ServiceChannels)
	if err != nil {
		return nil, err
	}
	base, err := p.m.Provider(ctx)
	if err != nil {
		return nil, err
	}
	st, ok, err := p.state(ctx, base, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("cloud: %s: no saved channel %q", p.decl.Plugin, id)
	}
	ch, err := cp.ResumeChannel(ctx, st, eventBuffer)
	if err = p.m.wrap(ctx, p.decl.Plugin, err); err != nil {
		return nil, err
	}
	p.m.track(p.decl.Plugin, ch)
	return ch, nil
}

// CloseChannel closes ch on the provider and forgets its saved keys.
func (p *Plugin) CloseChannel(ctx context.Context, ch *client.Channel) error {
	err := p.m.wrap(ctx, p.decl.Plugin, ch.Close(ctx))
	if err != nil && !isWire(err, protocol.CodeGone) && !isWire(err, protocol.CodeNotFound) {
		return err
	}
	return p.ForgetChannel(ctx, ch.ID())
}

// ForgetChannel drops the saved keys of channel id (its link stops being resumable here).
func (p *Plugin) ForgetChannel(ctx context.Context, id string) error {
	base, err := p.m.Provider(ctx)
	if err != nil {
		return err
	}
	p.m.untrack(id)
	if err := p.m.setSecret(ctx, channelName(base, p.decl.Plugin, id), nil); err != nil {
		return err
	}
	// The keys saved while another provider was in use (before a switch or `use off`) go too.
	return p.m.forgetChannelEverywhere(ctx, p.decl.Plugin, id)
}

func (m *Manager) track(plugin string, ch *client.Channel) {
	m.mu.Lock()
	m.channels[ch.ID()] = ch
	if m.chanOf == nil {
		m.chanOf = map[string]string{}
	}
	m.chanOf[ch.ID()] = plugin
	m.mu.Unlock()
}

func (m *Manager) untrack(id string) {
	m.mu.Lock()
	delete(m.channels, id)
	delete(m.chanOf, id)
	m.mu.Unlock()
}

// takeChannels removes from the open channels those of plugin (every plugin's when plugin is
// "") and returns them.
func (m *Manager) takeChannels(plugin string) []*client.Channel {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*client.Channel
	for id, ch := range m.channels {
		if plugin == "" || m.chanOf[id] == plugin {
			out = append(out, ch)
			delete(m.channels, id)
			delete(m.chanOf, id)
		}
	}
	return out
}

// endChannels closes each channel on its provider (bounded by closeTimeout, best effort: the
// provider may be gone) and disconnects it, so nothing more is relayed.
func endChannels(ctx context.Context, chs []*client.Channel) {
	for _, ch := range chs {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		_ = ch.Close(cctx)
		cancel()
		ch.Disconnect()
	}
}

// closeTimeout bounds closing one channel while its plugin's data is cleared.
const closeTimeout = 5 * time.Second
