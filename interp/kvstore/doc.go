// Package kvstore implements interp.KV, the per-plugin key-value storage
// behind `kv` and `cache` steps (seed 004 "Steps"; docs/DECISIONS.md §6, §10):
// Memory for tests and short-lived runs (the author CLI's replays). The
// host's persistent store is package host/store's KV; kvtest is the suite
// both pass.
//
// Both store each value as its JSON encoding (expr.ToJSON), so a value read
// back is a fresh copy, an HTML node cannot be stored, and the size counted
// against the 256 KB per-plugin quota (interp.KVQuota) is the same in both:
// len(key) + len(JSON). Expired entries are kept, and counted, until they are
// overwritten or deleted; Get returns them so that `cache` with staleOnError
// can fall back to them.
package kvstore

import (
	"fmt"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
)

// Encode returns the stored form of v (its JSON) and the size it counts for
// under key against interp.KVQuota: len(key) + len(JSON). A value JSON cannot
// hold (an HTML node) is an error naming the key.
func Encode(key string, v any) ([]byte, int, error) {
	b, err := expr.ToJSON(v, "")
	if err != nil {
		return nil, 0, fmt.Errorf("kv: value for key %q: %w", key, err)
	}
	return b, len(key) + len(b), nil
}

// quotaError is the error Set returns when a write would exceed the quota.
func quotaError(key string, used, size int) error {
	return &interp.QuotaError{Key: key, Total: used + size}
}
