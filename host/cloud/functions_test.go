package cloud

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/plugin"
)

// A plugin calls only the server functions its document declares (cloud.functions, else its
// server: section), refused before any request; a consent covers those names, and an update
// that declares one more asks again.
func TestCallOnlyDeclaredFunctions(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, true)
	m, _ := newManager(t)
	mustUse(t, m, pr.URL)
	fns := func(names ...string) []*plugin.ServerFunction {
		var out []*plugin.ServerFunction
		for _, n := range names {
			out = append(out, &plugin.ServerFunction{Tool: &plugin.Tool{Name: n}})
		}
		return out
	}
	v1 := &plugin.Plugin{Source: "https://github.com/student/fn/tree/main/fn", Hash: "sha256:" + strings.Repeat("1", 64),
		Manifest: &plugin.Manifest{ID: "fn", Server: &plugin.Server{Functions: fns("stats", "hidden")},
			Cloud: &plugin.Cloud{Functions: []string{"stats"}, DisclosureZh: []string{"x"}, DisclosureEn: []string{"x"}}}}
	d1 := DeclOfPlugin(v1)
	if !slices.Equal(d1.Functions, []string{"stats"}) || !slices.Contains(d1.Uses, "functions") {
		t.Fatalf("decl = %+v", d1)
	}
	if _, err := m.Allow(ctx, d1); err != nil {
		t.Fatal(err)
	}
	if c, _ := m.ConsentOf(ctx, "fn"); c == nil || !slices.Equal(c.Functions, []string{"stats"}) {
		t.Fatalf("consent = %+v", c)
	}
	if _, err := m.CallFor(ctx, v1, "stats", nil); err != nil {
		t.Fatal(err)
	}
	before := pr.count("POST /v1/fn/fn/hidden")
	for _, fn := range []string{"hidden", "Stats", "stats2", "../stats", ""} {
		_, err := m.CallFor(ctx, v1, fn, nil)
		wantCode(t, err, CodeNotDeclared)
	}
	if pr.count("POST /v1/fn/fn/hidden") != before {
		t.Fatal("an undeclared function reached the provider")
	}
	// The same document with no cloud.functions: every server function is declared.
	all := *v1
	all.Manifest = &plugin.Manifest{ID: "fn", Server: v1.Manifest.Server, Cloud: &plugin.Cloud{DisclosureZh: []string{"x"}}}
	if d := DeclOfPlugin(&all); !slices.Equal(d.Functions, []string{"stats", "hidden"}) {
		t.Fatalf("decl without cloud.functions = %+v", d.Functions)
	}
	// An update (same hash for the test's sake) that lists one more function asks again.
	v2 := *v1
	v2.Manifest = &plugin.Manifest{ID: "fn", Server: v1.Manifest.Server,
		Cloud: &plugin.Cloud{Functions: []string{"stats", "hidden"}, DisclosureZh: []string{"x"}, DisclosureEn: []string{"x"}}}
	_, err := m.CallFor(ctx, &v2, "stats", nil)
	wantCode(t, err, CodeConsentRequired)
	if _, err := m.Allow(ctx, DeclOfPlugin(&v2)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CallFor(ctx, &v2, "hidden", nil); err != nil {
		t.Fatal(err)
	}
	// Without server:, cloud.functions alone declares functions the provider runs.
	ext := &plugin.Plugin{Source: "https://github.com/student/ext/tree/main/ext", Hash: "sha256:" + strings.Repeat("3", 64),
		Manifest: &plugin.Manifest{ID: "ext", Cloud: &plugin.Cloud{Functions: []string{"lookup"}, DisclosureZh: []string{"x"}}}}
	de := DeclOfPlugin(ext)
	if !slices.Contains(de.Uses, "functions") || de.Document == nil {
		t.Fatalf("decl of a cloud.functions-only plugin = %+v", de)
	}
	if _, err := m.Allow(ctx, de); err != nil {
		t.Fatal(err)
	}
	if out, err := m.CallFor(ctx, ext, "lookup", 1); err != nil || !strings.Contains(string(out), `"lookup"`) {
		t.Fatalf("call = %s, %v", out, err)
	}
	_, err = m.CallFor(ctx, ext, "stats", nil)
	wantCode(t, err, CodeNotDeclared)
}

// The panel's quota counts the plugin's keys on the provider when it can (the protocol lists
// keys but reports no sizes): keys this device's mirror lost are counted, another plugin's are
// not; the bytes stay the mirror's estimate, and offline or before consent the keys are too.
func TestUsageCountsKeysOnTheProvider(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m, db := newManager(t)
	mustUse(t, m, pr.URL)
	a, b := storeDecl("counter", true), storeDecl("other", false)
	pa, _ := m.Plugin(a)
	pb, _ := m.Plugin(b)
	if p, err := m.Panel(ctx, a); err != nil || p.Usage.KeysFrom != FromMirror || p.Usage.Keys != 0 {
		t.Fatalf("panel before consent = %+v, %v", p, err)
	}
	for _, d := range []*Decl{a, b} {
		if _, err := m.Allow(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"a", "b", "history/1"} {
		if _, err := pa.Store().Put(ctx, k, k, PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"x", "y", "z", "w"} {
		if _, err := pb.Store().Put(ctx, k, 1, PutOptions{Plaintext: true}); err != nil {
			t.Fatal(err)
		}
	}
	// The mirror loses two of counter's keys (as after a restore of the host's data).
	if _, err := db.SQL.ExecContext(ctx, `DELETE FROM cloud_mirror WHERE plugin = 'counter' AND k != 'a'`); err != nil {
		t.Fatal(err)
	}
	p, err := m.Panel(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	u := p.Usage
	if u.Keys != 3 || u.KeysFrom != FromProvider || u.BytesFrom != FromMirror || u.Bytes == 0 || u.MaxKeys == 0 {
		t.Fatalf("online usage = %+v", u)
	}
	mirrorOnly, _ := m.Usage(ctx, "counter")
	if mirrorOnly.Keys != 1 || u.Bytes != mirrorOnly.Bytes {
		t.Fatalf("mirror usage = %+v, panel %+v", mirrorOnly, u)
	}
	// Withdrawn: the panel lists nothing with the plugin's token.
	if err := m.Revoke(ctx, "counter"); err != nil {
		t.Fatal(err)
	}
	before := pr.count("GET /v1/store")
	if p, _ := m.Panel(ctx, a); p.Usage.KeysFrom != FromMirror || p.Usage.Keys != 1 || pr.count("GET /v1/store") != before {
		t.Fatalf("usage after revoking = %+v", p.Usage)
	}
	if _, err := m.Allow(ctx, a); err != nil {
		t.Fatal(err)
	}
	pr.stop()
	if p, _ := m.Panel(ctx, a); p.Usage.KeysFrom != FromMirror || p.Usage.Keys != 1 {
		t.Fatalf("offline usage = %+v", p.Usage)
	}
}
