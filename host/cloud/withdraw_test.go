package cloud

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/host/store"
)

// reopen is another process on db's data directory: its own database handle and Manager,
// none of the first one's open channels.
func reopen(t *testing.T, db *store.DB) (*Manager, *store.DB) {
	t.Helper()
	db2, err := store.Open(context.Background(), db.Dir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Release(db2); db2.Close() })
	return For(db2), db2
}

// exit is the end of a process that held channels open: its sockets drop, nothing is closed.
func exit(db *store.DB) {
	Release(db)
	db.Close()
}

// openShared opens a channel of plugin the way a share does and joins it as the friend.
func openShared(t *testing.T, m *Manager, plugin string) (*client.Channel, *client.Viewer) {
	t.Helper()
	ctx := context.Background()
	d := storeDecl(plugin, true, "channels")
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	p, _ := m.Plugin(d)
	ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 30 * time.Minute, MaxPeers: 1})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ch.Events(), client.EventConnected)
	v, err := client.Join(ctx, ch.Link(), client.ViewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Leave)
	waitFor(t, ch.Events(), client.EventJoin)
	return ch, v
}

func channelKeys(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.SQL.QueryRow(`SELECT count(*) FROM cloud_secrets WHERE name LIKE 'channel %'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// dead reports whether the friend's link no longer reaches the channel: a new viewer cannot
// join it.
func dead(link client.SecretLink) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := client.Join(ctx, link, client.ViewerOptions{})
	if err == nil {
		v.Leave()
	}
	return err != nil
}

// Withdrawing consent from a process that never opened the channel (the CLI while no serve
// runs) closes it on the provider and forgets its keys; after a new consent the plugin lists
// no channel to resume and opens a new one.
func TestRevokeWithoutTheOpeningProcess(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m1, db1 := newManager(t)
	mustUse(t, m1, pr.URL)
	ch, v := openShared(t, m1, "card-share")
	link := ch.Link()
	m2, db2 := reopen(t, db1)
	exit(db1) // serve is gone; the channel stays open on the provider

	if err := m2.Revoke(ctx, "card-share"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, v.Events(), client.EventClosed)
	if n := channelKeys(t, db2); n != 0 {
		t.Errorf("%d channel keys kept after the withdrawal", n)
	}
	if pend, _ := m2.Closing(ctx, ""); len(pend) != 0 {
		t.Errorf("pending closes with the provider up: %+v", pend)
	}
	d := storeDecl("card-share", true, "channels")
	if _, err := m2.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	p, _ := m2.Plugin(d)
	if ids, err := p.Channels(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("channels to resume after a new consent: %v %v", ids, err)
	}
	if !dead(link) {
		t.Error("the old link still reaches the channel")
	}
}

// With the provider unreachable at the withdrawal, the keys are forgotten at once and the
// close is recorded; the next start (a new consent and the plugin's channel call, or serve's
// ClosePending) closes the channel once the provider answers.
func TestRevokeOfflineClosesAtNextStart(t *testing.T) {
	for _, next := range []string{"channels", "serve"} {
		t.Run(next, func(t *testing.T) {
			ctx := context.Background()
			r := newRestartable(t)
			m1, db1 := newManager(t)
			mustUse(t, m1, r.URL)
			ch, _ := openShared(t, m1, "card-share")
			link := ch.Link()
			m2, db2 := reopen(t, db1)
			exit(db1)
			r.stop()

			if err := m2.Revoke(ctx, "card-share"); err != nil {
				t.Fatalf("withdrawal with the provider down: %v", err)
			}
			if n := channelKeys(t, db2); n != 0 {
				t.Errorf("%d channel keys kept after the withdrawal", n)
			}
			pend, err := m2.Closing(ctx, "card-share")
			if err != nil || len(pend) != 1 || pend[0].Channel != link.ChannelID() {
				t.Fatalf("pending closes = %+v, %v", pend, err)
			}
			m3, _ := reopen(t, db2)
			exit(db2)
			r.start()
			switch next {
			case "channels":
				d := storeDecl("card-share", true, "channels")
				if _, err := m3.Allow(ctx, d); err != nil {
					t.Fatal(err)
				}
				p, _ := m3.Plugin(d)
				if ids, err := p.Channels(ctx); err != nil || len(ids) != 0 {
					t.Fatalf("channels after a new consent: %v %v", ids, err)
				}
			case "serve":
				if left, err := m3.ClosePending(ctx, ""); err != nil || left != 0 {
					t.Fatalf("ClosePending = %d, %v", left, err)
				}
			}
			if pend, _ := m3.Closing(ctx, ""); len(pend) != 0 {
				t.Errorf("still pending after the next start: %+v", pend)
			}
			if !dead(link) {
				t.Error("the old link still reaches the channel")
			}
		})
	}
}

// Changing provider (or turning Cloud off) from another process closes the channels opened
// with the old one and forgets their keys; setting the old provider back resumes none of them.
func TestProviderChangeClosesSavedChannels(t *testing.T) {
	for _, how := range []string{"switch", "off"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			pr, pr2 := newProvider(t, false), newProvider(t, false)
			m1, db1 := newManager(t)
			mustUse(t, m1, pr.URL)
			ch, v := openShared(t, m1, "card-share")
			m2, db2 := reopen(t, db1)
			exit(db1)
			target := pr2.URL
			if how == "off" {
				target = "off"
			}
			if _, err := m2.Use(ctx, target); err != nil {
				t.Fatal(err)
			}
			waitFor(t, v.Events(), client.EventClosed)
			if n := channelKeys(t, db2); n != 0 {
				t.Errorf("%d channel keys kept after the provider change", n)
			}
			mustUse(t, m2, pr.URL)
			d := storeDecl("card-share", true, "channels")
			p, _ := m2.Plugin(d)
			if ids, _ := p.Channels(ctx); len(ids) != 0 {
				t.Errorf("channels to resume after setting the old provider back: %v", ids)
			}
			if !dead(ch.Link()) {
				t.Error("the old link still reaches the channel")
			}
		})
	}
}

// A channel opened under a consent is never resumed under another: a process still holding
// it (a running serve) learns the consent changed, cannot save it again, and a resume by id
// is refused with ErrConsentWithdrawn.
func TestChannelBoundToItsConsent(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m1, db1 := newManager(t)
	mustUse(t, m1, pr.URL)
	ch, _ := openShared(t, m1, "card-share")
	d := storeDecl("card-share", true, "channels")
	p1, _ := m1.Plugin(d)
	if ok, err := p1.ChannelAllowed(ctx, ch); err != nil || !ok {
		t.Fatalf("allowed before the withdrawal: %v %v", ok, err)
	}
	m2, _ := reopen(t, db1)
	if err := m2.Revoke(ctx, "card-share"); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	if ok, err := p1.ChannelAllowed(ctx, ch); err != nil || ok {
		t.Errorf("allowed under the new consent: %v %v", ok, err)
	}
	if err := p1.SaveChannel(ctx, ch); !IsCode(err, CodeConsentRequired) {
		t.Errorf("saving the channel under the new consent: %v", err)
	}
	if n := channelKeys(t, db1); n != 0 {
		t.Errorf("%d channel keys after the refused save", n)
	}
	if _, err := p1.ResumeChannel(ctx, ch.ID(), 0); err == nil {
		t.Error("a channel of a withdrawn consent was resumed")
	}
	// A record bound to an old consent id (written before the withdrawal took effect here)
	// is refused by name.
	c, _ := m1.ConsentOf(ctx, "card-share")
	b, _ := encodeRecord("0123456789abcdef0123456789abcdef", ch.State())
	if err := m1.setSecret(ctx, channelName(pr.URL, "card-share", ch.ID()), b); err != nil {
		t.Fatal(err)
	}
	if _, err := p1.ResumeChannel(ctx, ch.ID(), 0); !errors.Is(err, ErrConsentWithdrawn) {
		t.Errorf("resume of a record bound to another consent than %s: %v", c.ID, err)
	}
	if n := channelKeys(t, db1); n != 0 {
		t.Errorf("%d channel keys after the refused resume", n)
	}
}
