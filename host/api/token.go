package api

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// MinTokenLen is the shortest bearer token CheckToken accepts: 22
// characters of the base64url alphabet carry 132 bits, the first length at
// or above 128 bits (each character carries 6).
const MinTokenLen = 22

// CheckToken returns an error saying why tok is too weak to guard the API,
// or nil: a token must be at least MinTokenLen characters, each one of
// A–Z a–z 0–9 - _ (the base64url alphabet), so that it carries at least 128
// bits when it was drawn at random (GenerateToken draws 256). The error
// names the rule, never the token.
func CheckToken(tok string) error {
	for i, c := range []byte(tok) {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("the token's character %d is not one of A-Z a-z 0-9 - _ (a token is base64url text)", i+1)
		}
	}
	if len(tok) < MinTokenLen {
		return fmt.Errorf("the token has %d characters; it needs at least %d of A-Z a-z 0-9 - _ (128 bits, so that it cannot be guessed): make one with `harness serve --token-generate`",
			len(tok), MinTokenLen)
	}
	return nil
}

// GenerateToken returns a new random token: 32 bytes from crypto/rand
// (256 bits) as 43 characters of unpadded base64url.
func GenerateToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Backoff of wrong tokens, per client address: the first FreeFailures
// failures are answered 401 at once; after that each failure shuts the
// address out for FirstLockout, doubled per further failure up to
// MaxLockout, and requests in a lockout are answered 429 "slow_down" with
// Retry-After without looking at the token (so guessing gets nowhere, and
// the reply says nothing about the guess). A right token ends the count. An
// address with no failure for ForgetAfter is forgotten.
const (
	FreeFailures = 5
	FirstLockout = time.Second
	MaxLockout   = 5 * time.Minute
	ForgetAfter  = time.Hour
	// maxClients bounds the table; when full, forgotten entries are swept
	// and, if none is, the table restarts (an attacker with that many
	// addresses gains a fresh count, nothing more).
	maxClients = 10000
)

// authLimiter counts wrong tokens per client address.
type authLimiter struct {
	now func() time.Time

	mu        sync.Mutex
	clients   map[string]*authClient
	failed    int64 // wrong tokens answered 401 or that started a lockout
	throttled int64 // requests answered 429 in a lockout
}

type authClient struct {
	failures int
	until    time.Time // the lockout's end
	last     time.Time // the last failure
}

// AuthStats are the counters of the token backoff: Failed counts wrong
// tokens, Throttled requests refused 429 during a lockout, Clients the
// addresses being counted.
type AuthStats struct {
	Failed, Throttled int64
	Clients           int
}

// clientKey is the address a request is counted under: its IP (an IPv6
// address by its /64, which one host usually holds whole).
func clientKey(r *http.Request) string {
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		h = r.RemoteAddr
	}
	if ip := net.ParseIP(h); ip != nil && ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return h
}

// locked reports how long key is still shut out (0: not).
func (l *authLimiter) locked(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.clients[key]
	if c == nil {
		return 0
	}
	if d := c.until.Sub(l.now()); d > 0 {
		l.throttled++
		return d
	}
	return 0
}

// fail counts a wrong token from key and returns the lockout it starts (0
// while the failures are free).
func (l *authLimiter) fail(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.failed++
	c := l.clients[key]
	if c != nil && now.Sub(c.last) > ForgetAfter {
		c = nil
	}
	if c == nil {
		if len(l.clients) >= maxClients {
			for k, v := range l.clients {
				if now.Sub(v.last) > ForgetAfter {
					delete(l.clients, k)
				}
			}
			if len(l.clients) >= maxClients {
				l.clients = map[string]*authClient{}
			}
		}
		c = &authClient{}
		l.clients[key] = c
	}
	c.failures++
	c.last = now
	if c.failures <= FreeFailures {
		return 0
	}
	d := FirstLockout
	for i := FreeFailures + 1; i < c.failures && d < MaxLockout; i++ {
		d *= 2
	}
	d = min(d, MaxLockout)
	c.until = now.Add(d)
	return d
}

// ok forgets key's failures after a right token.
func (l *authLimiter) ok(key string) {
	l.mu.Lock()
	if _, ok := l.clients[key]; ok {
		delete(l.clients, key)
	}
	l.mu.Unlock()
}

func (l *authLimiter) stats() AuthStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return AuthStats{Failed: l.failed, Throttled: l.throttled, Clients: len(l.clients)}
}

// AuthStats returns the counters of the token backoff.
func (s *Server) AuthStats() AuthStats { return s.auth.stats() }

func retryAfter(d time.Duration) string {
	return strconv.Itoa(int((d + time.Second - 1) / time.Second))
}
