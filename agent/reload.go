package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
)

// Reloading is a Provider that follows the model configuration of a data
// directory (docs/HOST-API.md "The AI provider"): before each round it looks at
// model.json and model.key, and when either changed since the last look
// (another file, size or modification time; `harness model set` or
// PUT /v1/model wrote it) it loads the configuration again and builds a new provider. A
// running `harness serve` so picks up a changed provider without a
// restart; a round already under way finishes with the old one. Without a
// base URL and model each round fails with Unconfigured's message. It is
// safe for concurrent use.
type Reloading struct {
	// Dir is the data directory; Getenv applies the environment overrides
	// (os.Getenv; nil for none).
	Dir    string
	Getenv func(string) string

	mu    sync.Mutex
	stamp [2]os.FileInfo
	cur   Provider
	err   error
}

// configFiles stats model.json and model.key (nil for a file that is not
// there).
func configFiles(dir string) [2]os.FileInfo {
	var out [2]os.FileInfo
	for i, name := range []string{ConfigFile, KeyFile} {
		out[i], _ = os.Stat(filepath.Join(dir, name))
	}
	return out
}

// sameFiles reports whether a and b show the same files: the same file
// (writes replace it through a rename, so a write makes a new one), size
// and modification time.
func sameFiles(a, b [2]os.FileInfo) bool {
	for i := range a {
		switch {
		case a[i] == nil && b[i] == nil:
		case a[i] == nil || b[i] == nil:
			return false
		case !os.SameFile(a[i], b[i]) || a[i].Size() != b[i].Size() || !a[i].ModTime().Equal(b[i].ModTime()):
			return false
		}
	}
	return true
}

// Current returns the provider of the configuration as it is now, loading
// it again when its files changed; the error is a bad configuration's
// (a malformed model.json, a key that does not open).
func (r *Reloading) Current() (Provider, error) {
	st := configFiles(r.Dir)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil && sameFiles(st, r.stamp) {
		return r.cur, r.err
	}
	r.stamp = st
	r.cur, r.err = Unconfigured{}, nil
	cfg, _, err := LoadConfig(r.Dir, r.Getenv)
	if err != nil {
		r.err = err
		return r.cur, err
	}
	if cfg.BaseURL == "" || cfg.Model == "" {
		return r.cur, nil
	}
	p, err := NewOpenAI(cfg, nil)
	if err != nil {
		r.err = err
		return r.cur, err
	}
	r.cur = p
	return p, nil
}

// Name implements Provider: the current provider's name.
func (r *Reloading) Name() string {
	p, _ := r.Current()
	return p.Name()
}

// Complete implements Provider with the current provider.
func (r *Reloading) Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Reply, error) {
	p, err := r.Current()
	if err != nil {
		return nil, err
	}
	return p.Complete(ctx, req, onDelta)
}

// Unconfigured is the provider while no model is set: every round fails
// with a message that says how to set one.
type Unconfigured struct{}

// Name implements Provider.
func (Unconfigured) Name() string { return "no model" }

// Complete implements Provider: always an error.
func (Unconfigured) Complete(context.Context, *Request, func(Delta)) (*Reply, error) {
	return nil, errors.New("no model is configured: harness model set --preset NAME --api-key-stdin (harness model presets), or choose one in the web app's Settings, or set $OPENAI_BASE_URL and $HARNESS_MODEL; for a try without a key: harness model mock, then harness model set --preset mock")
}
