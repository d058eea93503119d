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
// sealed with the host's vault (cloud_secrets), bound to the id of the consent it is opened
// under, so ResumeChannel finds it after a restart while that consent stands. A consent
// withdrawn while the channel opens (in another process) closes it at once: the error is then
// CodeConsentRequired.
func (p *Plugin) OpenChannel(ctx context.Context, opts client.OpenOptions) (*client.Channel, error) {
	cp, err := p.gate(ctx, protocol.ServiceChannels)
	if err != nil {
		return nil, err
	}
	base, consent, err := p.bound(ctx)
	if err != nil {
		return nil, err
	}
	ch, err := cp.OpenChannel(ctx, opts)
	if err = p.m.wrap(ctx, p.decl.Plugin, err); err != nil {
		return nil, err
	}
	ok, err := p.m.saveRecord(ctx, base, p.decl.Plugin, consent, ch)
	if err == nil && !ok {
		err = errf(p.decl.Plugin, CodeConsentRequired, "the consent was withdrawn while the channel opened; it is closed")
	}
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		if cerr := ch.Close(cctx); cerr != nil {
			_ = p.m.retireOpen(ctx, []openChannel{{plugin: p.decl.Plugin, ch: ch}})
		}
		cancel()
		ch.Disconnect()
		return nil, err
	}
	p.m.track(p.decl.Plugin, consent, ch)
	return ch, nil
}

// bound is the current provider and the id of the plugin's consent with it, after what a
// withdrawal elsewhere left to do (settle); the consent is checked by gate first.
func (p *Plugin) bound(ctx context.Context) (string, string, error) {
	base, err := p.m.Provider(ctx)
	if err != nil {
		return "", "", err
	}
	consent, err := p.m.consentID(ctx, p.decl.Plugin, base)
	if err != nil {
		return "", "", err
	}
	if consent == "" {
		return "", "", errf(p.decl.Plugin, CodeConsentRequired, "allow this plugin to use Cloud with %s first", hostOf(base))
	}
	return base, consent, p.m.settle(ctx, base, p.decl.Plugin, consent)
}

// SaveChannel seals ch's current state (keys and expiry) again, after Extend. It fails with
// CodeConsentRequired, saving nothing, when ch was not opened or resumed through this host's
// handles or the consent it was opened under is no longer the plugin's.
func (p *Plugin) SaveChannel(ctx context.Context, ch *client.Channel) error {
	p.m.mu.Lock()
	o, ok := p.m.channels[ch.ID()]
	p.m.mu.Unlock()
	if !ok || o.plugin != p.decl.Plugin {
		return errf(p.decl.Plugin, CodeConsentRequired, "channel %s is not open under this plugin's consent", ch.ID())
	}
	saved, err := p.m.saveRecord(ctx, ch.Link().Origin(), p.decl.Plugin, o.consent, ch)
	if err == nil && !saved {
		err = errf(p.decl.Plugin, CodeConsentRequired, "the consent channel %s was opened under was withdrawn", ch.ID())
	}
	return err
}

// ChannelAllowed reports whether ch may still carry the plugin's frames: the plugin is
// consented for the current provider, ch is on that provider, and the consent is the one ch
// was opened (or resumed) under. err is a failed check (the database closing), not a no.
func (p *Plugin) ChannelAllowed(ctx context.Context, ch *client.Channel) (bool, error) {
	ok, err := p.m.Consented(ctx, &p.decl)
	if err != nil || !ok {
		return false, err
	}
	base, err := p.m.Provider(ctx)
	if err != nil || base != ch.Link().Origin() {
		return false, err
	}
	consent, err := p.m.consentID(ctx, p.decl.Plugin, base)
	if err != nil {
		return false, err
	}
	p.m.mu.Lock()
	o, tracked := p.m.channels[ch.ID()]
	p.m.mu.Unlock()
	return tracked && o.plugin == p.decl.Plugin && o.consent == consent, nil
}

// Channels lists the ids of the plugin's channels saved with the current provider under its
// current consent whose expiry has not passed (channels.list()). Channels saved under a
// consent since withdrawn are closed first, never listed.
func (p *Plugin) Channels(ctx context.Context) ([]string, error) {
	base, err := p.m.Provider(ctx)
	if err != nil || base == "" {
		return nil, err
	}
	consent, err := p.m.consentID(ctx, p.decl.Plugin, base)
	if err != nil {
		return nil, err
	}
	if err := p.m.settle(ctx, base, p.decl.Plugin, consent); err != nil {
		return nil, err
	}
	ids, err := p.m.channelIDs(ctx, base, p.decl.Plugin)
	if err != nil {
		return nil, err
	}
	now := p.m.clock()
	out := []string{}
	for _, id := range ids {
		c, st, ok, err := p.state(ctx, base, id)
		if err != nil {
			return nil, err
		}
		if ok && consent != "" && c == consent && (st.ExpiresAt.IsZero() || now.Before(st.ExpiresAt)) {
			out = append(out, id)
		}
	}
	return out, nil
}

// state opens the saved record of channel id: the consent it is bound to and its state.
func (p *Plugin) state(ctx context.Context, base, id string) (string, client.ChannelState, bool, error) {
	var st client.ChannelState
	b, ok, err := p.m.secret(ctx, channelName(base, p.decl.Plugin, id))
	if err != nil || !ok {
		return "", st, ok, err
	}
	c, st, err := decodeRecord(b)
	if err != nil {
		return "", st, false, fmt.Errorf("cloud: channel %s of %s: %w", id, p.decl.Plugin, err)
	}
	return c, st, true, nil
}

// ResumeChannel reconnects the plugin's saved channel id (channels.get(id)); eventBuffer as
// in client.OpenOptions. A channel never saved is an error; one opened under a consent that
// has since been withdrawn is closed and the error is ErrConsentWithdrawn; one that ended
// reports it through its Events and Err.
func (p *Plugin) ResumeChannel(ctx context.Context, id string, eventBuffer int) (*client.Channel, error) {
	cp, err := p.gate(ctx, protocol.ServiceChannels)
	if err != nil {
		return nil, err
	}
	base, err := p.m.Provider(ctx)
	if err != nil {
		return nil, err
	}
	consent, err := p.m.consentID(ctx, p.decl.Plugin, base)
	if err != nil {
		return nil, err
	}
	c, st, ok, err := p.state(ctx, base, id)
	if err != nil {
		return nil, err
	}
	// What a withdrawal elsewhere left to do is done first; this channel goes with it when it
	// is bound to another consent.
	if err := p.m.settle(ctx, base, p.decl.Plugin, consent); err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("cloud: %s: no saved channel %q", p.decl.Plugin, id)
	}
	if consent == "" || c != consent {
		return nil, fmt.Errorf("cloud: %s: channel %s: %w", p.decl.Plugin, id, ErrConsentWithdrawn)
	}
	ch, err := cp.ResumeChannel(ctx, st, eventBuffer)
	if err = p.m.wrap(ctx, p.decl.Plugin, err); err != nil {
		return nil, err
	}
	p.m.track(p.decl.Plugin, consent, ch)
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

// openChannel is a channel this process has open: its plugin and the consent it is bound to.
type openChannel struct {
	plugin, consent string
	ch              *client.Channel
}

func (m *Manager) track(plugin, consent string, ch *client.Channel) {
	m.mu.Lock()
	m.channels[ch.ID()] = openChannel{plugin: plugin, consent: consent, ch: ch}
	m.mu.Unlock()
}

func (m *Manager) untrack(id string) {
	m.mu.Lock()
	delete(m.channels, id)
	m.mu.Unlock()
}

// takeChannels removes from the open channels those of plugin (every plugin's when plugin is
// "") and returns them.
func (m *Manager) takeChannels(plugin string) []openChannel {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []openChannel
	for id, o := range m.channels {
		if plugin == "" || o.plugin == plugin {
			out = append(out, o)
			delete(m.channels, id)
		}
	}
	return out
}

// closeTimeout bounds closing one channel while its plugin's data is cleared.
const closeTimeout = 5 * time.Second
