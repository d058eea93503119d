package agent

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pkuinfo/harness/agent/mock"
)

// TestReloadingFollowsConfig: a configuration written while the provider is in use is used from
// the next round on; a round before any configuration fails with the how-to message.
func TestReloadingFollowsConfig(t *testing.T) {
	t.Setenv("HARNESS_KEYRING", "off")
	dir := filepath.Join(t.TempDir(), "data")
	var a, b atomic.Int32
	srvA := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.Add(1); mock.New(mock.Options{}).ServeHTTP(w, r) }))
	defer srvA.Close()
	srvB := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { b.Add(1); mock.New(mock.Options{}).ServeHTTP(w, r) }))
	defer srvB.Close()
	r := &Reloading{Dir: dir}
	req := &Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}
	if _, err := r.Complete(context.Background(), req, nil); err == nil || !strings.Contains(err.Error(), "no model is configured") {
		t.Fatalf("unconfigured: %v", err)
	}
	if err := SaveConfig(dir, Config{BaseURL: srvA.URL + "/v1", Model: mock.Model}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Complete(context.Background(), req, nil); err != nil || a.Load() != 1 {
		t.Fatalf("first config: %v, %d requests", err, a.Load())
	}
	if err := SaveConfig(dir, Config{BaseURL: srvB.URL + "/v1", Model: mock.Model, APIKey: "sk-0123456789abcdef"}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Complete(context.Background(), req, nil); err != nil || b.Load() != 1 || a.Load() != 1 {
		t.Fatalf("second config: %v, A %d B %d", err, a.Load(), b.Load())
	}
	// A malformed file is an error that names it, not a silent fallback.
	os.WriteFile(filepath.Join(dir, ConfigFile), []byte(`{"baseURL": 1}`), 0o600)
	if _, err := r.Complete(context.Background(), req, nil); err == nil || !strings.Contains(err.Error(), ConfigFile) {
		t.Fatalf("malformed: %v", err)
	}
}

// TestKeySealed: model.key holds the key sealed; a plain key of an older harness still reads;
// a sealed key moved to another data directory does not open there.
func TestKeySealed(t *testing.T) {
	t.Setenv("HARNESS_KEYRING", "off")
	dir := filepath.Join(t.TempDir(), "data")
	const key = "sk-sealed-0123456789abcdef"
	if err := SaveConfig(dir, Config{BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", APIKey: key}, true); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, KeyFile))
	if strings.Contains(string(b), key) || !strings.HasPrefix(string(b), "sealed:") {
		t.Fatalf("model.key: %q", b)
	}
	other := filepath.Join(t.TempDir(), "other")
	os.MkdirAll(other, 0o700)
	os.WriteFile(filepath.Join(other, KeyFile), b, 0o600)
	if _, _, err := LoadConfig(other, nil); err == nil || !strings.Contains(err.Error(), KeyFile) {
		t.Errorf("a sealed key opened in another data directory: %v", err)
	}
	os.WriteFile(filepath.Join(other, KeyFile), []byte("sk-plain\n"), 0o600)
	if c, _, err := LoadConfig(other, nil); err != nil || c.APIKey != "sk-plain" {
		t.Errorf("plain key: %q %v", c.APIKey, err)
	}
	for _, tc := range []struct{ key, hint string }{{"", ""}, {"short", "set"}, {"sk-0123456789abcdef", "…cdef"}} {
		if got := KeyHint(tc.key); got != tc.hint {
			t.Errorf("KeyHint(%q) = %q, want %q", tc.key, got, tc.hint)
		}
	}
}

// TestProviderTest: the model list when there is one, else a one-token completion; a refused key
// is a ProviderError with the status.
func TestProviderTest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		h      http.HandlerFunc
		method string
		status int
	}{
		{"models", mock.New(mock.Options{}).ServeHTTP, "models", 0},
		{"no model list", func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/models") {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"p"},"finish_reason":"length"}]}`))
		}, "completion", 0},
		{"refused", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			w.Write([]byte(`{"error":{"message":"bad key"}}`))
		}, "", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			defer srv.Close()
			p, _ := NewOpenAI(Config{BaseURL: srv.URL + "/v1", Model: mock.Model, APIKey: "k"}, nil)
			res, err := p.Test(context.Background())
			if tc.status != 0 {
				pe, ok := err.(*ProviderError)
				if !ok || pe.Status != tc.status {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil || !res.OK || res.Method != tc.method {
				t.Fatalf("%+v %v", res, err)
			}
		})
	}
}

// TestKeyNotInErrors: a service that quotes the refused key in its error message; the error the
// loop gets (and stores in the transcript) has the key cut out, also from what it wraps.
func TestKeyNotInErrors(t *testing.T) {
	const key = "sk-quoted-0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided: ` + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + `"}}`))
	}))
	defer srv.Close()
	p, _ := NewOpenAI(Config{BaseURL: srv.URL + "/v1", Model: "m", APIKey: key}, nil)
	_, err := p.Complete(context.Background(), &Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, nil)
	_, err2 := p.Test(context.Background())
	for _, e := range []error{err, err2} {
		if e == nil || !strings.Contains(e.Error(), "[key]") {
			t.Fatalf("err %v", e)
		}
		for x := e; x != nil; x = errors.Unwrap(x) {
			if strings.Contains(x.Error(), key) {
				t.Errorf("the key is in %T: %v", x, x)
			}
		}
	}
}
