package interp_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

const serverDoc = `---
spec: 1
id: srv
name: 服务端
description: RunServer checks.
version: 1.0.0
author: pkuinfo
cloud:
  protocol: 1
  uses: [functions]
  disclosure: { zh: [名字会发到服务器。], en: [The name is sent to the server.] }
server:
  secrets: [KEY, UNSET]
  functions:
    who:
      effect: write
      steps:
        - let: n
          ability: kv.get
          args: "{ key: 'n' }"
        - ability: kv.set
          args: "{ key: 'n', value: (n ?? 0) + 1, ttlS: 60 }"
      return: "{ caller: caller, n: (n ?? 0) + 1, unset: secrets.UNSET }"
    mac:
      effect: read
      access: public
      steps:
        - let: m
          ability: crypto.hmacSha256
          args: "{ secret: input.secret, text: 'x' }"
      input:
        secret: { type: string }
      return: m
    refs:
      effect: read
      access: public
      steps:
        - let: m
          ability: crypto.hmacSha256
          args: "{ secret: 'KEY', text: 'x' }"
      return: "{ key: secrets.KEY, unset: secrets.UNSET, m: m }"
tools:
  t: { title: T, description: A tool., effect: read, steps: [{ let: x, value: "1" }], return: x }
i18n:
  en: { name: Server, description: RunServer checks., tools: { t: { title: T } } }
---
`

// memKV is an interp.ServerKV in memory.
type memKV struct {
	mu sync.Mutex
	m  map[string]any
}

func (k *memKV) Get(_ context.Context, key string) (any, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[key]
	return v, ok, nil
}

func (k *memKV) Set(_ context.Context, key string, v any, _ time.Duration) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[key] = v
	return nil
}

func (k *memKV) Delete(_ context.Context, key string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, key)
	return nil
}

func obj(j string) any {
	v, err := expr.FromJSON([]byte(j))
	if err != nil {
		panic(err)
	}
	return v
}

// TestRunServer: caller and secrets in scope, the caller's KV, hmac by secret name, and the
// errors of a missing secret, a missing KV and an unknown function.
func TestRunServer(t *testing.T) {
	p, ds, err := plugin.LoadFiles(context.Background(), map[string][]byte{"PLUGIN.md": []byte(serverDoc)})
	if err != nil || diag.HasErrors(ds) {
		t.Fatalf("load: %v %v", err, ds)
	}
	ctx := context.Background()
	kv := &memKV{m: map[string]any{}}
	o := interp.ServerOptions{Secrets: map[string]string{"KEY": "k"}, Caller: "c1", KV: kv}
	for want := range []int{1, 2} {
		v, err := interp.RunServer(ctx, p, "who", nil, o)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := expr.ToJSON(v, "")
		if got, exp := string(b), `{"caller":{"id":"c1"},"n":`+string(rune('1'+want))+`,"unset":null}`; got != exp {
			t.Errorf("who: %s, want %s", got, exp)
		}
	}
	m := hmac.New(sha256.New, []byte("k"))
	m.Write([]byte("x"))
	if v, err := interp.RunServer(ctx, p, "mac", obj(`{"secret":"KEY"}`), interp.ServerOptions{Secrets: map[string]string{"KEY": "k"}}); err != nil || v != hex.EncodeToString(m.Sum(nil)) {
		t.Errorf("mac: %v %v", v, err)
	}
	// With SecretRefs the function reads the stand-in, never the value; hmac keys on the value.
	v, err := interp.RunServer(ctx, p, "refs", nil, interp.ServerOptions{Secrets: map[string]string{"KEY": "k", "UNSET": "u"},
		SecretRefs: map[string]string{"KEY": "ref-KEY"}})
	b, _ := expr.ToJSON(v, "")
	if want := `{"key":"ref-KEY","unset":null,"m":"` + hex.EncodeToString(m.Sum(nil)) + `"}`; err != nil || string(b) != want {
		t.Errorf("refs: %s %v, want %s", b, err, want)
	}
	for _, c := range []struct {
		fn    string
		input any
		o     interp.ServerOptions
		want  string
	}{
		{"mac", obj(`{"secret":"UNSET"}`), interp.ServerOptions{}, "secret UNSET is not set"},
		{"who", nil, interp.ServerOptions{}, "no server KV"},
		{"nope", nil, interp.ServerOptions{}, `no server function "nope"`},
	} {
		_, err := interp.RunServer(ctx, p, c.fn, c.input, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.fn, err, c.want)
		}
	}
	// A tool run never sees secrets or caller.
	if _, err := interp.Run(ctx, p, "t", nil, interp.Options{}); err != nil {
		t.Errorf("tool: %v", err)
	}
}
