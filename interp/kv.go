package interp

import (
	"context"
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/plugin"
)

// QuotaError is the error a KV returns (and Set wraps) when a write would
// take a plugin's storage over KVQuota. errors.Is(err, ErrQuota) is true.
type QuotaError struct {
	Key   string
	Total int // the bytes the plugin would use in all after the write
}

// Error says which write went over and by how much, in the limit form of
// docs/DECISIONS.md §10.
func (e *QuotaError) Error() string {
	return fmt.Sprintf("kv: writing %q would use %d bytes in all, the limit is 256 KB", e.Key, e.Total)
}

// Is makes errors.Is(err, ErrQuota) true.
func (e *QuotaError) Is(target error) bool { return target == ErrQuota }

// kvErr turns a KV error into an *Error: the quota is a limit.
func kvErr(op, key string, err error) *Error {
	var qe *QuotaError
	if errors.As(err, &qe) {
		return &Error{Kind: KindLimit, Msg: qe.Error(), err: err}
	}
	if errors.Is(err, ErrQuota) {
		return &Error{Kind: KindLimit, Msg: fmt.Sprintf("kv: writing %q would go over 256 KB, the limit is 256 KB", key), err: err}
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindExpression, Msg: fmt.Sprintf("kv %s %q: %v", op, key, err), err: err}
}

func (r *run) store() (KV, error) {
	if r.o.KV == nil {
		return nil, errf(KindAbility, "kv: this host gives plugins no storage")
	}
	return r.o.KV, nil
}

// kv runs a kv step (docs/DECISIONS.md §6, §10): get returns the value or null
// (an expired entry reads as null), set stores the value with an optional
// ttl and returns it, delete removes the key and returns null.
func (r *run) kv(ctx context.Context, s *scope, st *plugin.Step) (any, error) {
	store, err := r.store()
	if err != nil {
		return nil, err
	}
	key, err := r.renderText(ctx, s, st.Key)
	if err != nil {
		return nil, err
	}
	id := r.p.Manifest.ID
	switch st.KV {
	case "get":
		e, ok, err := store.Get(ctx, id, key)
		if err != nil {
			return nil, kvErr("get", key, err)
		}
		if !ok || e.Expired(r.clock()) {
			return nil, nil
		}
		return e.Value, nil
	case "set":
		v, err := r.eval(ctx, s, st.Value)
		if err != nil {
			return nil, err
		}
		e := Entry{Value: v}
		if st.TTL > 0 {
			e.Expires = r.clock().Add(st.TTL)
		}
		if e := ctxErr(ctx); e != nil {
			return nil, e // a run past its deadline writes nothing
		}
		if err := store.Set(ctx, id, key, e); err != nil {
			return nil, kvErr("set", key, err)
		}
		return v, nil
	case "delete":
		if e := ctxErr(ctx); e != nil {
			return nil, e // a run past its deadline writes nothing
		}
		if err := store.Delete(ctx, id, key); err != nil {
			return nil, kvErr("delete", key, err)
		}
		return nil, nil
	}
	return nil, errf(KindExpression, "kv: unknown operation %q (use get, set or delete)", st.KV)
}

// cache runs a cache step (docs/DECISIONS.md §6, §10): a fresh entry under
// the key is the value, without running the steps; otherwise the steps
// run (in a block whose bindings become visible only on success) and their
// value (return, or the last step's) is stored with an expiry of now + ttl.
// When the steps fail and staleOnError is set, an expired entry is the
// value instead of the error. An error is never cached.
func (r *run) cache(ctx context.Context, s *scope, st *plugin.Step, depth int) (any, error) {
	store, err := r.store()
	if err != nil {
		return nil, err
	}
	key, err := r.renderText(ctx, s, st.Cache.Key)
	if err != nil {
		return nil, err
	}
	id := r.p.Manifest.ID
	old, have, err := store.Get(ctx, id, key)
	if err != nil {
		return nil, kvErr("get", key, err)
	}
	if have && !old.Expired(r.clock()) {
		return old.Value, nil
	}
	c := s.child()
	v, err := r.runSteps(ctx, c, st.Steps, depth)
	if err == nil && st.Return != nil {
		v, err = r.eval(ctx, c, st.Return)
	}
	if err != nil {
		if have && st.Cache.StaleOnError && ctx.Err() == nil {
			return old.Value, nil
		}
		return nil, err
	}
	s.merge(c, "")
	e := Entry{Value: v}
	if st.Cache.TTL > 0 {
		e.Expires = r.clock().Add(st.Cache.TTL)
	} else {
		e.Expires = r.clock() // no ttl: stored for staleOnError, never fresh
	}
	if e := ctxErr(ctx); e != nil {
		return nil, e // a run past its deadline writes nothing
	}
	if err := store.Set(ctx, id, key, e); err != nil {
		return nil, kvErr("set", key, err)
	}
	return v, nil
}
