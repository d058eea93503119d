package api

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Caps on the long-lived streams (Server-Sent Events) the API holds open:
// the dashboard's event stream, a conversation turn's stream, an MCP
// session's notification stream. Each open stream holds a goroutine, a
// connection's buffers and, while it starts, database work; the caps keep a
// burst of them from taking the host's memory and its database. A stream
// past a cap is answered 429 "too_many_streams" with Retry-After, before any
// of its work starts.
//
// A browser holds at most six connections to one host over HTTP/1.1, across
// all its tabs, so MaxClientStreams is never reached by the web app; it
// stops one runaway client (a script in a reconnect loop) from taking every
// slot. MaxStreams bounds them all (also against a client that spreads
// itself over many names).
const (
	// MaxStreams is how many streams may be open at once, in all.
	MaxStreams = 64
	// MaxClientStreams is how many streams one client may hold open at once.
	MaxClientStreams = 16
	// StreamRetryAfter is the Retry-After of a refused stream.
	StreamRetryAfter = 10 * time.Second
)

// StreamStats are the counters of the stream caps: Open streams now,
// Clients holding them, Refused streams answered 429 since the start.
type StreamStats struct {
	Open, Clients int
	Refused       int64
}

// streamLimiter counts the open streams, in all and per client.
type streamLimiter struct {
	max, perClient int

	mu      sync.Mutex
	open    int
	clients map[string]int
	refused int64
}

func newStreamLimiter(max, perClient int) *streamLimiter {
	if max <= 0 {
		max = MaxStreams
	}
	if perClient <= 0 {
		perClient = MaxClientStreams
	}
	return &streamLimiter{max: max, perClient: min(perClient, max), clients: map[string]int{}}
}

// acquire takes a slot for client, or says which cap refuses it.
func (l *streamLimiter) acquire(client string) (release func(), refusal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.open >= l.max:
		l.refused++
		return nil, fmt.Sprintf("%d streams are open, the most the host serves at once", l.max)
	case l.clients[client] >= l.perClient:
		l.refused++
		return nil, fmt.Sprintf("this client has %d streams open, the most one client may hold; close one", l.perClient)
	}
	l.open++
	l.clients[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.open--
			if l.clients[client]--; l.clients[client] <= 0 {
				delete(l.clients, client)
			}
		})
	}, ""
}

func (l *streamLimiter) stats() StreamStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return StreamStats{Open: l.open, Clients: len(l.clients), Refused: l.refused}
}

// StreamStats returns the counters of the stream caps.
func (s *Server) StreamStats() StreamStats { return s.streams.stats() }

// streamClient names the client a stream counts against: its address (an
// IPv6 address by its /64; every loopback address is one client, the
// machine itself) with the Origin it sends, so the web app (same origin)
// and the local programs that send none are told apart. With a token every
// client holds the same one, so the token names no client.
func streamClient(r *http.Request) string {
	addr := clientKey(r)
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		h = r.RemoteAddr
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		addr = "loopback"
	}
	return addr + " " + r.Header.Get("Origin")
}

// HandleStream is HandleFunc for a route that answers with a long-lived
// stream (Server-Sent Events): the request holds one of the stream slots
// (MaxStreams, MaxClientStreams) from before f runs until it returns, and a
// request past a cap is answered 429 "too_many_streams" with Retry-After,
// f not called.
func (s *Server) HandleStream(pattern string, f func(w http.ResponseWriter, r *http.Request) error) {
	s.route(pattern, func(w http.ResponseWriter, r *http.Request) error {
		release, err := s.openStream(w, r, streamClient(r))
		if err != nil {
			return err
		}
		defer release()
		return f(w, r)
	})
}

// LimitStreams wraps h, a protocol's handler (Handle, HandleProtocol), so
// that its requests for which isStream reports true hold a stream slot as
// HandleStream's do. client names the client such a request counts
// against (nil: its address and Origin, as HandleStream's); a protocol with
// sessions the host issued names the session.
func (s *Server) LimitStreams(h http.Handler, isStream func(*http.Request) bool, client func(*http.Request) string) http.Handler {
	if client == nil {
		client = streamClient
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isStream(r) {
			h.ServeHTTP(w, r)
			return
		}
		release, err := s.openStream(w, r, client(r))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		defer release()
		h.ServeHTTP(w, r)
	})
}

// openStream takes a stream slot for client, or sets Retry-After and
// returns the 429.
func (s *Server) openStream(w http.ResponseWriter, r *http.Request, client string) (func(), error) {
	release, why := s.streams.acquire(client)
	if why != "" {
		w.Header().Set("Retry-After", retryAfter(StreamRetryAfter))
		return nil, &Error{Status: http.StatusTooManyRequests, Code: "too_many_streams",
			Message: fmt.Sprintf("%s: try again in %s s", why, retryAfter(StreamRetryAfter))}
	}
	return release, nil
}
