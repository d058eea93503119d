package abilities

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/plugin"
)

// echoRunner answers every server function with its name, input and the consented document.
type echoRunner struct{}

func (echoRunner) Call(_ context.Context, c server.FunctionCall) (json.RawMessage, error) {
	return json.Marshal(map[string]any{"fn": c.Name, "input": c.Input, "doc": c.Doc.Hash})
}

func (echoRunner) Listed() []protocol.MetaFunction { return nil }

// cloud.call runs the plugin's server function on a reference server, only after consent and
// with the installed document's hash in the token; offline it fails without queueing.
func TestCloudCallThroughProvider(t *testing.T) {
	ctx := context.Background()
	st, err := server.OpenSQLite(ctx, filepath.Join(t.TempDir(), "cloud.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := server.DefaultConfig(st)
	cfg.PowDifficulty = 4
	cfg.Functions = echoRunner{}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)

	s, _ := newTestSet(t)
	fp := fakePlugin("counter", nil, []string{"cloud"}, "stats")
	fp.Hash = "sha256:" + strings.Repeat("cd", 32)
	fp.Source = "https://github.com/pkuinfo/plugins/tree/main/counter"
	fp.Manifest.Server = &plugin.Server{}
	fp.Manifest.Cloud = &plugin.Cloud{Protocol: 1, DisclosureZh: []string{"输入会发到云端"}, DisclosureEn: []string{"The input is sent to the cloud"}}
	s.plugins = fakePlugins{"counter": fp}
	defer cloud.Release(s.db)

	call := func() (string, error) {
		return do(t, s, "counter", plugin.EffectRead, "cloud.call", `{"fn":"stats","input":{"n":2}}`)
	}
	if _, err := call(); err == nil || !strings.Contains(err.Error(), "cloud not configured") {
		t.Fatalf("without a provider: %v", err)
	}
	m := cloud.For(s.db)
	if _, err := m.Use(ctx, hs.URL); err != nil {
		t.Fatal(err)
	}
	if _, err := call(); err == nil || !strings.Contains(err.Error(), "consent_required") {
		t.Fatalf("before consent: %v", err)
	}
	if _, err := m.Allow(ctx, cloud.DeclOf(fp.Manifest)); err != nil {
		t.Fatal(err)
	}
	got, err := call()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"doc":"` + fp.Hash + `","fn":"stats","input":{"n":2}}`; got != want {
		t.Fatalf("cloud.call = %s, want %s", got, want)
	}
	if _, err := do(t, s, "counter", plugin.EffectRead, "cloud.call", `{"fn":"no such"}`); err == nil || !strings.Contains(err.Error(), "not a function name") {
		t.Fatalf("a bad fn: %v", err)
	}
	hs.CloseClientConnections()
	hs.Close()
	if _, err := call(); err == nil || !strings.Contains(err.Error(), "offline") {
		t.Fatalf("offline: %v", err)
	}
}
