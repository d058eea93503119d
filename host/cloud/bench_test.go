package cloud

import (
	"context"
	"testing"
)

// BenchmarkStoreGet is one store read through a plugin's handle against a reference server on
// loopback: the consent and availability checks, the token, GET /v1/store/…, opening the
// end-to-end envelope and updating the sealed mirror.
func BenchmarkStoreGet(b *testing.B) {
	ctx := context.Background()
	p, _ := benchPlugin(b)
	if _, err := p.Store().Put(ctx, "k", map[string]int{"count": 1}, PutOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if it, err := p.Store().Get(ctx, "k"); err != nil || it == nil || it.Mirror {
			b.Fatal(it, err)
		}
	}
}

// BenchmarkMirrorGet is the same read with the provider unreachable: the answer comes from
// the host's sealed mirror.
func BenchmarkMirrorGet(b *testing.B) {
	ctx := context.Background()
	p, pr := benchPlugin(b)
	if _, err := p.Store().Put(ctx, "k", map[string]int{"count": 1}, PutOptions{}); err != nil {
		b.Fatal(err)
	}
	pr.stop()
	b.ResetTimer()
	for b.Loop() {
		if it, err := p.Store().Get(ctx, "k"); err != nil || it == nil || !it.Mirror {
			b.Fatal(it, err)
		}
	}
}

func benchPlugin(b *testing.B) (*Plugin, *provider) {
	b.Helper()
	b.Setenv("HARNESS_KEYRING", "off")
	pr := newProvider(b, false)
	m, _ := newManager(b)
	if _, err := m.Use(context.Background(), pr.URL); err != nil {
		b.Fatal(err)
	}
	d := storeDecl("bench", true)
	if _, err := m.Allow(context.Background(), d); err != nil {
		b.Fatal(err)
	}
	p, _ := m.Plugin(d)
	return p, pr
}
