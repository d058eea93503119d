package mcpx

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host/store"
)

// TestTokenSealed: the token column holds the token sealed, never in clear; the plugin's client
// gets it back; a plain token of an older harness still works; a sealed token copied to another
// plugin's row does not open there.
func TestTokenSealed(t *testing.T) {
	t.Setenv("HARNESS_KEYRING", "off")
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := NewRegistry(db)
	const tok = "tok-0123456789-secret"
	if _, err := reg.Add(ctx, &RemoteServer{URL: "http://127.0.0.1:1/mcp", Name: "a", PluginID: "mcp-a", Tools: []RemoteTool{}}, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Add(ctx, &RemoteServer{URL: "http://127.0.0.1:1/mcp", Name: "b", PluginID: "mcp-b", Tools: []RemoteTool{}}, ""); err != nil {
		t.Fatal(err)
	}
	var col string
	db.SQL.QueryRow(`SELECT token FROM mcpx_remote_plugins WHERE id = 'mcp-a'`).Scan(&col)
	if strings.Contains(col, tok) || !strings.HasPrefix(col, sealedPrefix) {
		t.Fatalf("token column %q", col)
	}
	p, err := reg.Get(ctx, "mcp-a")
	if err != nil || p.Client().Token != tok || !p.HasToken {
		t.Fatalf("Get: %v %+v", err, p)
	}
	db.SQL.Exec(`UPDATE mcpx_remote_plugins SET token = ? WHERE id = 'mcp-b'`, col)
	if _, err := reg.Get(ctx, "mcp-b"); err == nil || !strings.Contains(err.Error(), "does not open") {
		t.Errorf("a token moved to another row: %v", err)
	}
	if list, err := reg.List(ctx); err != nil || len(list) != 2 || list[1].Problem == "" || list[1].Client().Token != "" {
		t.Errorf("List with a token that does not open: %v", err)
	}
	db.SQL.Exec(`UPDATE mcpx_remote_plugins SET token = 'plain-old' WHERE id = 'mcp-b'`)
	if p, err := reg.Get(ctx, "mcp-b"); err != nil || p.Client().Token != "plain-old" {
		t.Errorf("plain token: %v", err)
	}
	if _, err := reg.List(ctx); err != nil {
		t.Error(err)
	}
}
