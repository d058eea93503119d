package kvstore

import (
	"context"
	"sync"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
)

// Memory is an in-memory interp.KV. The zero value is not usable; call
// NewMemory. It is safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	plugins map[string]*memPlugin
	quota   int
}

type memPlugin struct {
	used    int
	entries map[string]memEntry
}

type memEntry struct {
	json    []byte
	size    int
	expires time.Time
}

// NewMemory returns an empty in-memory store with the standard quota
// (interp.KVQuota bytes per plugin).
func NewMemory() *Memory {
	return &Memory{plugins: map[string]*memPlugin{}, quota: interp.KVQuota}
}

// Get implements interp.KV: it returns the entry under key, expired or not.
func (m *Memory) Get(ctx context.Context, plugin, key string) (interp.Entry, bool, error) {
	if err := ctx.Err(); err != nil {
		return interp.Entry{}, false, err
	}
	m.mu.Lock()
	var (
		e  memEntry
		ok bool
	)
	if p := m.plugins[plugin]; p != nil {
		e, ok = p.entries[key]
	}
	m.mu.Unlock()
	if !ok {
		return interp.Entry{}, false, nil
	}
	v, err := expr.FromJSON(e.json)
	if err != nil {
		return interp.Entry{}, false, err
	}
	return interp.Entry{Value: v, Expires: e.expires}, true, nil
}

// Set implements interp.KV. A write that would take the plugin over its
// quota returns an error wrapping interp.ErrQuota and keeps the old value.
func (m *Memory) Set(ctx context.Context, plugin, key string, e interp.Entry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, size, err := Encode(key, e.Value)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.plugins[plugin]
	if p == nil {
		p = &memPlugin{entries: map[string]memEntry{}}
		m.plugins[plugin] = p
	}
	used := p.used - p.entries[key].size
	if used+size > m.quota {
		return quotaError(key, used, size)
	}
	p.entries[key] = memEntry{json: b, size: size, expires: e.Expires}
	p.used = used + size
	return nil
}

// Delete implements interp.KV.
func (m *Memory) Delete(ctx context.Context, plugin, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.plugins[plugin]; p != nil {
		p.used -= p.entries[key].size
		delete(p.entries, key)
	}
	return nil
}

// Usage returns the bytes plugin's entries count against the quota.
func (m *Memory) Usage(ctx context.Context, plugin string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.plugins[plugin]; p != nil {
		return p.used, nil
	}
	return 0, nil
}

// DeletePlugin removes every entry of plugin (when it is uninstalled).
func (m *Memory) DeletePlugin(ctx context.Context, plugin string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.plugins, plugin)
	return nil
}

// PurgeExpired removes, across plugins, the entries that expired before
// before, and returns how many it removed. Entries that expired later stay
// for `cache` staleOnError (docs/DECISIONS.md §10); a host calls this now and
// then with a horizon such as a week ago.
func (m *Memory) PurgeExpired(ctx context.Context, before time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, p := range m.plugins {
		for k, e := range p.entries {
			if !e.expires.IsZero() && e.expires.Before(before) {
				p.used -= e.size
				delete(p.entries, k)
				n++
			}
		}
	}
	return n, nil
}
