package interp

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/pkuinfo/harness/plugin"
)

// CampusClient sends one request to a campus service with the user's
// signed-in session (seed 004 "What the plugin declares": campus). The host
// signs the request itself, so a plugin never sees a password, cookie or
// token. service is a name from the manifest's campus list (card, its,
// treehole, …); req.URL holds only the path and query on that service (its
// Scheme and Host are empty). The interpreter has already checked that the
// plugin declares service. The returned response is read by the interpreter
// under the same limits as a public reply (2 MB, the run's deadline).
type CampusClient interface {
	Do(ctx context.Context, service string, req *http.Request) (*http.Response, error)
}

// AbilityCall is one call of a host ability from an `ability: group.op`
// step (seed 004 "Host abilities", docs/DECISIONS.md §6). Args is the value of
// the step's args expression (an expr value: nil, bool, float64, string,
// []any or *expr.Object). The interpreter has already checked that Group is
// declared in the manifest's abilities and that the op's effect is not
// stronger than ToolEffect; an Abilities implementation may check again.
type AbilityCall struct {
	Plugin     string        // the plugin id
	Tool       string        // the tool running the step
	Group      string        // e.g. "verify"
	Op         string        // e.g. "treehole"
	Args       any           // the evaluated args
	ToolEffect plugin.Effect // the declared effect of Tool
}

// Abilities runs host abilities. It returns an expr value (nil, bool,
// float64, string, []any, *expr.Object). An error fails the step with
// error.kind "ability" unless the error is already an *Error.
type Abilities interface {
	Call(ctx context.Context, c AbilityCall) (any, error)
}

// Entry is one value in a plugin's KV storage. Value is an expr value.
// Expires is when the entry stops being fresh; the zero time means never.
type Entry struct {
	Value   any
	Expires time.Time
}

// Expired reports whether e has an expiry at or before now.
func (e Entry) Expired(now time.Time) bool {
	return !e.Expires.IsZero() && !now.Before(e.Expires)
}

// KVQuota is the KV storage a plugin may use in all, in bytes, measured as
// the sum over its entries of len(key) + len(JSON encoding of the value)
// (seed 004 "Steps": 256 KB of KV storage per plugin; docs/DECISIONS.md §6).
// Expired entries count until they are overwritten or deleted (§10).
const KVQuota = 256 * 1024

// ErrQuota is returned (wrapped) by KV.Set when the write would take the
// plugin's storage over KVQuota. The old value, if any, is kept.
var ErrQuota = errors.New("kv: the limit is 256 KB per plugin")

// KV is a plugin's key-value storage, used by `kv` and `cache` steps
// (docs/DECISIONS.md §6, §10). Keys are scoped by plugin id. Implementations
// must be safe for concurrent use; see package interp/kvstore.
type KV interface {
	// Get returns the entry under key, expired or not (cache staleOnError
	// needs expired entries; the kv get step filters them out). ok is false
	// when there is no entry.
	Get(ctx context.Context, plugin, key string) (e Entry, ok bool, err error)
	// Set creates or replaces the entry under key. It returns an error
	// wrapping ErrQuota, and keeps the old value, when the write would take
	// the plugin over KVQuota.
	Set(ctx context.Context, plugin, key string, e Entry) error
	// Delete removes the entry under key; deleting a missing key is not an
	// error.
	Delete(ctx context.Context, plugin, key string) error
}

// RequestRecord describes one request a run sent, after templates were
// rendered and before it reached the transport or the CampusClient. Replay
// tests compare these with expectRequests (docs/DECISIONS.md §8). Redirects
// that the client follows are not recorded separately.
type RequestRecord struct {
	Campus string      // campus service name, or "" for a public request
	Method string      // "GET", "POST", …
	URL    string      // the absolute URL; for campus requests the path and query
	Header http.Header // the headers the plugin set (not ones the transport adds)
	Body   []byte      // the request body, nil when there is none
}

// Options configures one Run. The zero value is usable: real network
// (public addresses only), no campus access, no abilities, no KV, time.Now.
type Options struct {
	// Transport sends public https requests. nil means a real
	// http.Transport whose dialer refuses loopback, private, link-local and
	// unspecified addresses at dial time (DNS rebinding included). The
	// network allowlist is always checked before Transport is used.
	Transport http.RoundTripper
	// Campus sends requests for `campus:` steps; nil fails them with
	// error.kind "http" saying the host's signed-in session is needed.
	Campus CampusClient
	// Abilities runs `ability:` steps; nil fails them with kind "ability".
	Abilities Abilities
	// KV backs `kv` and `cache` steps; nil fails them.
	KV KV
	// Now is the clock; nil means time.Now. It is read once per Run, for the
	// `now` value, and again for KV expiry.
	Now func() time.Time
	// AllowPrivateAddrs lets the default transport dial loopback and
	// private addresses. Only for tests.
	AllowPrivateAddrs bool
	// TimeLimit is the wall time the whole run may take, calls included
	// (seed 004 "Steps": 60 s). Zero means MaxRunTime; a negative value or
	// one above MaxRunTime is an input error. Tests shorten it.
	TimeLimit time.Duration
	// OnRequest, when set, is called once for each request the run sends,
	// in the order they are sent (from several goroutines inside a
	// concurrent each; calls are serialised).
	OnRequest func(RequestRecord)
}
