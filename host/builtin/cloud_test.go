package builtin

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/plugin"
)

type bumpOut struct {
	Status string `json:"status"`
	Count  int    `json:"count"`
}

// cloudCounter is a built-in that keeps a counter in its end-to-end Cloud store, answering as
// the seed's example does when Cloud is not allowed.
func cloudCounter() *Plugin {
	return &Plugin{
		ID: "cloud-counter", Name: "云计数", Description: "在云端保存一个计数器。", Version: "1.0.0",
		I18n: I18n{En: EnText{Name: "Cloud counter", Description: "Keeps a counter in the cloud.", Tools: map[string]ToolText{"bump": {Title: "Bump"}}}},
		Cloud: &plugin.Cloud{Protocol: 1, Uses: []string{"store"}, E2E: true,
			DisclosureZh: []string{"计数器加密后保存在云端"}, DisclosureEn: []string{"The counter is kept encrypted in the cloud"}},
		Tools: []*Tool{{Name: "bump", Title: "加一", Effect: plugin.EffectWrite, Description: "Adds one.",
			Run: Func(func(c *Context, _ struct{}) (bumpOut, error) {
				cl, err := c.Cloud()
				if err != nil {
					return bumpOut{}, err
				}
				var cur struct{ Count int }
				ver, err := cl.Store().GetJSON(c, "counter", &cur)
				if cloud.IsCode(err, cloud.CodeConsentRequired) {
					return bumpOut{Status: "cloud_consent_required"}, nil
				}
				if err != nil {
					return bumpOut{}, err
				}
				cur.Count++
				if _, err := cl.Store().Put(c, "counter", cur, cloud.PutOptions{IfVersion: &ver}); err != nil {
					return bumpOut{}, err
				}
				return bumpOut{Status: "ok", Count: cur.Count}, nil
			})}},
	}
}

func TestContextCloud(t *testing.T) {
	t.Setenv("HARNESS_KEYRING", "off")
	ctx := context.Background()
	st, err := server.OpenSQLite(ctx, filepath.Join(t.TempDir(), "cloud.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := server.DefaultConfig(st)
	cfg.PowDifficulty = 4
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	c := MustCompile(cloudCounter())
	e := newEnvWith(t, c)
	defer cloud.Release(e.db)
	e.h.SetMode(ctx, "cloud-counter", plugin.EffectWrite, host.ModeAuto)
	m := cloud.For(e.db)
	if _, err := m.Use(ctx, hs.URL); err != nil {
		t.Fatal(err)
	}
	if got := e.ok(t, host.ActorUser, "cloud-counter", "bump", ""); got != `{"status":"cloud_consent_required","count":0}` {
		t.Fatalf("before consent: %s", got)
	}
	if _, err := m.Allow(ctx, cloud.DeclOf(c.Plugin.Manifest)); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 2; want++ {
		if got := e.ok(t, host.ActorUser, "cloud-counter", "bump", ""); !strings.Contains(got, `"count":`+string(rune('0'+want))) {
			t.Fatalf("bump %d: %s", want, got)
		}
	}
	// A built-in without a Cloud declaration gets a clear error.
	bc := newContext(ctx, e.h, "focus", host.ActorUser, "", nil)
	if _, err := bc.Cloud(); err == nil || !strings.Contains(err.Error(), "declares no Cloud use") {
		t.Fatalf("Cloud() of a plugin without cloud: %v", err)
	}
}
