package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/abilities"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/host/store"
)

// process is another run of the harness on the rig's data directory (a CLI command, or serve
// started again): its own database handle, host and Cloud connection, none of the first run's
// open channels.
func (r *shareRig) process(t *testing.T) *shareRig {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, r.h.Store().Dir())
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(db, host.WithAbilities(abilities.New(db)), host.WithCampus(r.cc), Option(All()...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.InstallOfficial(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s := activeShare(h); s != nil {
			s.ch.Close(context.Background())
			s.stop()
			<-s.done
		}
		cloud.Release(db)
		db.Close()
	})
	return &shareRig{h: h, m: cloud.For(db), stand: r.stand, cc: r.cc, cloud: r.cloud, log: r.log}
}

// exit ends the rig's run as a killed serve does: the database goes first, then the sockets;
// the share is neither stopped nor closed on the provider.
func (r *shareRig) exit(t *testing.T) {
	t.Helper()
	db := r.h.Store()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	cloud.Release(db)
	if s, ok := cardShares.Load(r.h); ok {
		<-s.(*cardShare).done
	}
}

func (r *shareRig) link(t *testing.T) string {
	t.Helper()
	var ln CardShareLink
	if err := json.Unmarshal([]byte(r.ok(t, "link", "")), &ln); err != nil || !ln.Sharing {
		t.Fatalf("link: %+v %v", ln, err)
	}
	return ln.Link
}

// drain discards the viewer's events until none has come for quiet.
func drain(v *client.Viewer, quiet time.Duration) {
	for {
		select {
		case _, ok := <-v.Events():
			if !ok {
				return
			}
		case <-time.After(quiet):
			return
		}
	}
}

// noCode fails when the viewer receives a payment code within d.
func noCode(t *testing.T, v *client.Viewer, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-v.Events():
			if !ok {
				return
			}
			if ev.Type == client.EventMessage && strings.Contains(string(ev.Msg), `"code"`) {
				t.Fatalf("the friend holding the old link received a payment code: %s", ev.Msg)
			}
		case <-deadline:
			return
		}
	}
}

// TestCardShareWithdrawnWithoutServe: the person withdraws card-share's consent (`harness cloud
// consent card-share off`, or Cloud off, or another provider) while no serve runs; a later
// consent and start shares on a new link, and the friend holding the old one receives nothing
// more: the withdrawal closed the old channel on the provider and forgot its keys.
func TestCardShareWithdrawnWithoutServe(t *testing.T) {
	for _, how := range []string{"revoke", "off"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			serve := newShareRig(t, 300*time.Millisecond, true)
			v := joinShare(t, serve)
			old := serve.link(t)
			cli := serve.process(t)
			serve.exit(t)
			// Codes the first serve sent while it shared may still wait in the viewer's
			// queue: they are not what this test is about.
			drain(v, 300*time.Millisecond)

			switch how {
			case "revoke":
				if err := cli.m.Revoke(ctx, "card-share"); err != nil {
					t.Fatal(err)
				}
			case "off":
				if _, err := cli.m.Use(ctx, "off"); err != nil {
					t.Fatal(err)
				}
				if _, err := cli.m.Use(ctx, serve.cloud); err != nil {
					t.Fatal(err)
				}
			}
			again := serve.process(t)
			if ok, _ := again.m.Consented(ctx, cloud.DeclOf(Of(again.h, "card-share").Plugin.Manifest)); !ok {
				if _, err := again.m.Allow(ctx, cloud.DeclOf(Of(again.h, "card-share").Plugin.Manifest)); err != nil {
					t.Fatal(err)
				}
			}
			again.ok(t, "start", "")
			if again.link(t) == old {
				t.Fatal("start after the consent was withdrawn and given again resumed the old link")
			}
			if err := v.Send(ctx, map[string]string{"t": "hello"}); err != nil {
				t.Logf("the old viewer's hello: %v", err)
			}
			noCode(t, v, 2*time.Second)
			link, err := client.ParseSecretLink(old)
			if err != nil {
				t.Fatal(err)
			}
			if v2, err := client.Join(ctx, link, client.ViewerOptions{}); err == nil {
				v2.Leave()
				t.Error("a viewer joined the old link after the withdrawal")
			}
		})
	}
}
