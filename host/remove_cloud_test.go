package host

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/host/cloud"
)

// cloudDemo is the demo plugin keeping notes end to end in its Cloud store and sharing them on
// channels, under the name name (another plugin may come under the same id).
func cloudDemo(name string) map[string]string {
	return demo("1.0.0", [3]string{"PLUGIN.md", "network: [api.example.com]", `network: [api.example.com]
cloud:
  protocol: 1
  uses: [store, channels]
  e2e: true
  disclosure:
    zh: [加密后的笔记存在云端]
    en: [Encrypted notes are kept in the cloud]`}, [3]string{"PLUGIN.md", "name: 演示插件", "name: " + name})
}

// TestRemoveForgetsCloud: removing a plugin forgets its Cloud consent, mirror and channel keys
// and closes its channels; the plugin installed next under the same id (another author's, say)
// starts unconsented, and once allowed it cannot read what the removed one stored: deleted at
// the removal when asked, else before the new consent takes effect.
func TestRemoveForgetsCloud(t *testing.T) {
	for _, deleteData := range []bool{false, true} {
		name := map[bool]string{false: "keep", true: "delete"}[deleteData]
		t.Run(name, func(t *testing.T) {
			t.Setenv("HARNESS_KEYRING", "off")
			ctx := context.Background()
			cfg := server.DefaultConfig(server.NewMemory())
			cfg.PowDifficulty = 4
			srv, err := server.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			hs := httptest.NewServer(srv)
			t.Cleanup(hs.Close)

			const src = "https://plugins.example.org/demo/PLUGIN.md"
			e := newEnv(t, cloudDemo("演示插件"))
			t.Cleanup(func() { cloud.Release(e.db) })
			e.install(t, src)
			m := cloud.For(e.db)
			if _, err := m.Use(ctx, hs.URL); err != nil {
				t.Fatal(err)
			}
			handle := func() (*cloud.Decl, *cloud.Plugin) {
				t.Helper()
				p, err := e.h.Plugin(ctx, "demo")
				if err != nil {
					t.Fatal(err)
				}
				d := cloud.DeclOfPlugin(p)
				cp, err := m.Plugin(d)
				if err != nil {
					t.Fatal(err)
				}
				return d, cp
			}
			d, cp := handle()
			if _, err := m.Allow(ctx, d); err != nil {
				t.Fatal(err)
			}
			if _, err := cp.Store().Put(ctx, "diary", "the removed plugin's secret", cloud.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			ch, err := cp.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute, MaxPeers: 1})
			if err != nil {
				t.Fatal(err)
			}
			link := ch.Link()
			ch.Disconnect()

			out, err := e.h.RemoveWith(ctx, "demo", RemoveOptions{DeleteCloudData: deleteData})
			if err != nil {
				t.Fatal(err)
			}
			want := &Removed{ID: "demo", CloudData: map[bool]string{false: CloudDataKept, true: CloudDataDeleted}[deleteData]}
			if *out != *want {
				t.Errorf("RemoveWith = %+v, want %+v", out, want)
			}
			if c, err := m.ConsentOf(ctx, "demo"); err != nil || c != nil {
				t.Errorf("consent after remove: %+v %v", c, err)
			}
			for _, q := range []string{`SELECT count(*) FROM cloud_mirror`, `SELECT count(*) FROM cloud_secrets WHERE name LIKE 'channel %'`} {
				var n int
				if err := e.db.SQL.QueryRow(q).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s after remove = %d %v", q, n, err)
				}
			}
			if v, err := client.Join(ctx, link, client.ViewerOptions{}); err == nil {
				v.Leave()
				t.Error("the removed plugin's channel is still open")
			}
			if left, _ := m.Leftover(ctx, "demo", hs.URL); left == deleteData {
				t.Errorf("left behind with the provider: %v", left)
			}

			// Another plugin under the same id.
			e.site.set(cloudDemo("别人的插件"))
			e.install(t, src)
			d, cp = handle()
			if ok, err := m.Consented(ctx, d); err != nil || ok {
				t.Fatalf("the plugin installed under the removed one's id is consented: %v %v", ok, err)
			}
			if _, err := cp.Store().Get(ctx, "diary"); !cloud.IsCode(err, cloud.CodeConsentRequired) {
				t.Fatalf("store before consent: %v", err)
			}
			if _, err := m.Allow(ctx, d); err != nil {
				t.Fatal(err)
			}
			if it, err := cp.Store().Get(ctx, "diary"); err != nil || it != nil {
				t.Fatalf("the new plugin read the removed one's data: %+v %v", it, err)
			}
			if ids, err := cp.Channels(ctx); err != nil || len(ids) != 0 {
				t.Fatalf("the new plugin sees the removed one's channels: %v %v", ids, err)
			}
		})
	}
}

// TestRemoveDeleteOffline: asked to delete the Cloud data with the provider unreachable,
// remove fails and removes nothing (the person can remove keeping the data instead).
func TestRemoveDeleteOffline(t *testing.T) {
	t.Setenv("HARNESS_KEYRING", "off")
	ctx := context.Background()
	cfg := server.DefaultConfig(server.NewMemory())
	cfg.PowDifficulty = 4
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	e := newEnv(t, cloudDemo("演示插件"))
	defer cloud.Release(e.db)
	e.install(t, "https://plugins.example.org/demo/PLUGIN.md")
	m := cloud.For(e.db)
	if _, err := m.Use(ctx, hs.URL); err != nil {
		t.Fatal(err)
	}
	p, _ := e.h.Plugin(ctx, "demo")
	d := cloud.DeclOfPlugin(p)
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	cp, _ := m.Plugin(d)
	if _, err := cp.Store().Put(ctx, "diary", "x", cloud.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	hs.Close()
	if _, err := e.h.RemoveWith(ctx, "demo", RemoveOptions{DeleteCloudData: true}); !cloud.IsCode(err, cloud.CodeOffline) {
		t.Fatalf("remove deleting the data offline: %v", err)
	}
	if _, err := e.h.Show(ctx, "demo"); err != nil {
		t.Errorf("the plugin is gone after a failed remove: %v", err)
	}
	if c, _ := m.ConsentOf(ctx, "demo"); c == nil {
		t.Error("the consent is gone after a failed remove")
	}
}
