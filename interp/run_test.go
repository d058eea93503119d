package interp_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/interp/kvstore"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

const manifest = `---
spec: 1
id: test-plugin
name: Test
description: A plugin for interpreter tests.
version: 1.0.0
author: tester
network: [a.example.com, "*.example.org"]
campus: [treehole]
abilities: [todos, crypto]
tools:
%s---
Use the tools.
`

// loadPlugin loads a plugin whose tools are the given files (name →
// YAML), failing the test on any validation error.
func loadPlugin(t testing.TB, tools map[string]string) *plugin.Plugin {
	t.Helper()
	p, ds := loadPluginDiags(t, tools)
	for _, d := range ds {
		if d.Severity == diag.Error {
			t.Fatalf("validation: %s", d)
		}
	}
	return p
}

func loadPluginDiags(t testing.TB, tools map[string]string) (*plugin.Plugin, []diag.Diagnostic) {
	t.Helper()
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	files := map[string][]byte{}
	var refs strings.Builder
	for _, n := range names {
		refs.WriteString("  " + n + ": tools/" + n + ".yaml\n")
		files["tools/"+n+".yaml"] = []byte(tools[n])
	}
	files["PLUGIN.md"] = []byte(strings.Replace(manifest, "%s", refs.String(), 1))
	p, ds, err := plugin.LoadFiles(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	return p, ds
}

// testServer is an https server for every host name, reached through the
// returned transport, which trusts its certificate; nothing leaves the
// loopback interface.
func testServer(t testing.TB, h http.Handler) http.RoundTripper {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	addr := srv.Listener.Addr().String()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	tr.TLSClientConfig.ServerName = "example.com"
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := expr.ToJSON(v, "")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fromJSON(t testing.TB, s string) any {
	t.Helper()
	if s == "" {
		return nil
	}
	v, err := expr.FromJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var fixedNow = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)

func TestSmoke(t *testing.T) {
	p := loadPlugin(t, map[string]string{"main": `
title: Main
description: main tool
effect: read
input:
  n: { type: number, default: 2 }
steps:
  - let: x
    value: input.n * 10
return: "{ x: x }"
`})
	v, err := interp.Run(context.Background(), p, "main", nil, interp.Options{KV: kvstore.NewMemory(), Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	if got := toJSON(t, v); got != `{"x":20}` {
		t.Errorf("got %s", got)
	}
}

func exprToJSON(v any) (string, error) {
	b, err := expr.ToJSON(v, "")
	return string(b), err
}
