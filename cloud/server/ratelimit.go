package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// RatePolicy is a fixed-window limit: Quota events per Window, named for the IETF
// RateLimit-Policy field (draft-ietf-httpapi-ratelimit-headers). A zero Quota disables it.
type RatePolicy struct {
	Name   string
	Quota  int
	Window time.Duration
}

// limiter counts events per key in fixed windows. Old windows are dropped lazily by sweep.
type limiter struct {
	policy RatePolicy
	mu     sync.Mutex
	slots  map[string]*window

	// Gossip (several nodes on a Bus, see allowGossip): windows aligned to the epoch, the
	// other nodes' counts per key in the current window, and this node's counts not yet
	// told to them.
	remote       map[string]*window
	pending      map[string]int
	pendingStart int64
}

type window struct {
	start int64 // ms
	n     int
}

func newLimiter(p RatePolicy) *limiter {
	return &limiter{policy: p, slots: map[string]*window{}}
}

// allow counts one event for key at now (ms). It reports whether the event is within the quota,
// how many remain and the seconds until the window resets.
func (l *limiter) allow(key string, now int64) (ok bool, remaining int, resetS int64) {
	if l == nil || l.policy.Quota <= 0 {
		return true, 0, 0
	}
	w := l.policy.Window.Milliseconds()
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.slots[key]
	if s == nil || now-s.start >= w || now < s.start {
		if s == nil {
			s = &window{}
			l.slots[key] = s
		}
		s.start, s.n = now, 0
	}
	reset := (s.start + w - now + 999) / 1000
	if s.n >= l.policy.Quota {
		return false, 0, reset
	}
	s.n++
	return true, l.policy.Quota - s.n, reset
}

func (l *limiter) sweep(now int64) {
	if l == nil {
		return
	}
	w := l.policy.Window.Milliseconds()
	l.mu.Lock()
	for k, s := range l.slots {
		if now-s.start >= w {
			delete(l.slots, k)
		}
	}
	for k, s := range l.remote {
		if now-s.start >= w {
			delete(l.remote, k)
		}
	}
	l.mu.Unlock()
}

// allowGossip is allow for a limit that several nodes share over the Bus without a storage
// round trip per event: windows are aligned to the epoch (so every node counts the same
// window), an event is allowed while this node's count plus what the other nodes have told
// it stays under the quota, and the counts this node adds are published by takePending every
// gossipEvery. A key may so get at most the quota plus what it sends to the other nodes in
// one gossip interval (and the bus's delivery time).
func (l *limiter) allowGossip(key string, now int64) (ok bool, remaining int, resetS int64) {
	if l == nil || l.policy.Quota <= 0 {
		return true, 0, 0
	}
	w := l.policy.Window.Milliseconds()
	start := now - now%w
	reset := (start + w - now + 999) / 1000
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.slots[key]
	if s == nil {
		s = &window{start: start}
		l.slots[key] = s
	} else if s.start != start {
		s.start, s.n = start, 0
	}
	n := s.n
	if r := l.remote[key]; r != nil && r.start == start {
		n += r.n
	}
	if n >= l.policy.Quota {
		return false, 0, reset
	}
	s.n++
	if l.pendingStart != start {
		l.pending, l.pendingStart = map[string]int{}, start
	} else if l.pending == nil {
		l.pending = map[string]int{}
	}
	l.pending[key]++
	return true, l.policy.Quota - n - 1, reset
}

// takePending returns the counts added on this node since the last call, with the start of
// their window, and forgets them; nil when there are none.
func (l *limiter) takePending() (start int64, counts map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) == 0 {
		return 0, nil
	}
	start, counts = l.pendingStart, l.pending
	l.pending = nil
	return start, counts
}

// addRemote adds counts another node made in the window starting at start. Counts of an older
// window than the one known for a key are dropped; a newer window replaces it.
func (l *limiter) addRemote(start int64, counts map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.remote == nil {
		l.remote = map[string]*window{}
	}
	q := l.policy.Quota
	for k, n := range counts {
		if n <= 0 {
			continue
		}
		n = min(n, q) // more than the quota says no more than the quota (and cannot overflow)
		r := l.remote[k]
		switch {
		case r == nil:
			l.remote[k] = &window{start: start, n: n}
		case r.start == start:
			r.n = min(r.n+n, q)
		case r.start < start:
			r.start, r.n = start, n
		}
	}
}

// headers writes RateLimit-Policy and RateLimit (structured fields of the IETF draft) and, when
// limited, Retry-After.
func (l *limiter) headers(h http.Header, remaining int, resetS int64, limited bool) {
	p := l.policy
	h.Set("RateLimit-Policy", fmt.Sprintf("%q;q=%d;w=%d", p.Name, p.Quota, int64(p.Window/time.Second)))
	h.Set("RateLimit", fmt.Sprintf("%q;r=%d;t=%d", p.Name, remaining, resetS))
	if limited {
		h.Set("Retry-After", strconv.FormatInt(resetS, 10))
	}
}

// SharedRates is what a Storage shared by several nodes may also implement, so that the
// per-IP and per-device request limits count every node's requests (rate limits hold across
// nodes; docs/CLOUD.md "Running several nodes"). cloud/server/pgstore implements it.
type SharedRates interface {
	// CountRate counts one event for (name, key) in the fixed window of windowMs that holds now
	// (windows start at multiples of windowMs since the epoch) and returns the events counted in
	// that window so far, this one included.
	CountRate(ctx context.Context, name, key string, windowMs, now int64) (int64, error)
}

// allowShared is allow counted in shared storage: the same answers, over aligned windows.
func (l *limiter) allowShared(ctx context.Context, sr SharedRates, key string, now int64) (ok bool, remaining int, resetS int64, err error) {
	w := l.policy.Window.Milliseconds()
	n, err := sr.CountRate(ctx, l.policy.Name, key, w, now)
	if err != nil {
		return false, 0, 0, err
	}
	reset := (now - now%w + w - now + 999) / 1000
	if n > int64(l.policy.Quota) {
		return false, 0, reset, nil
	}
	return true, l.policy.Quota - int(n), reset, nil
}

// frameRate is a per-party frame budget: a sliding pair of one-minute windows, no allocation.
type frameRate struct {
	start int64 // ms, start of the current minute window
	cur   int
	prev  int
}

// allow counts one frame at now against perMin frames per minute, weighting the previous
// minute by how much of it still overlaps the last 60 s.
func (f *frameRate) allow(now int64, perMin int) bool {
	const w = 60_000
	switch d := now - f.start; {
	case d >= 2*w || d < 0:
		f.start, f.cur, f.prev = now, 0, 0
	case d >= w:
		f.start, f.prev, f.cur = f.start+w, f.cur, 0
	}
	weight := float64(w-(now-f.start)) / w
	if float64(f.prev)*weight+float64(f.cur) >= float64(perMin) {
		return false
	}
	f.cur++
	return true
}

// retryAfter is how many whole seconds (at least 1) from now the next frame would be allowed,
// for the Retry-After of a 429 on POST /send: inside the current window the weight of the
// previous minute has to fall far enough; a full current window has to become the previous one
// and fade; after two windows everything is allowed.
func (f *frameRate) retryAfter(now int64, perMin int) int64 {
	const w = 60_000
	if perMin <= 0 {
		return 60
	}
	start, cur, prev := f.start, f.cur, f.prev
	switch d := now - start; {
	case d >= 2*w || d < 0:
		return 1
	case d >= w:
		start, prev, cur = start+w, cur, 0
	}
	var at int64 // first ms at which the budget has room
	switch {
	case cur < perMin && prev > 0:
		// prev·(w − (t − start))/w + cur < perMin ⇔ t > start + w − (perMin − cur)·w/prev
		at = start + w - int64(float64(perMin-cur)*w/float64(prev)) + 1
	case cur < perMin:
		at = now
	default:
		// In the next window: cur·(w − (t − start − w))/w < perMin.
		at = start + 2*w - int64(float64(perMin)*w/float64(cur)) + 1
	}
	if at < now {
		at = now
	}
	secs := (at - now + 999) / 1000
	return max(secs, 1)
}
