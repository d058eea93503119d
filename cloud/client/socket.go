package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// WebSocket close codes of seed 003 (“GET /v1/channels/{id}/ws”).
const (
	CloseKicked   websocket.StatusCode = 4003 // the owner kicked this peer
	CloseReplaced websocket.StatusCode = 4009 // a newer connection of the same party took over
	CloseEnded    websocket.StatusCode = 4010 // channel closed or expired (a `closed` frame came first)
)

// Why a socket stopped for good.
var (
	// ErrChannelClosed: the channel was closed or expired (Event.Reason says which).
	ErrChannelClosed = errors.New("cloud channel: closed")
	// ErrKicked: the owner kicked this viewer (close code 4003).
	ErrKicked = errors.New("cloud channel: kicked by the owner")
	// ErrReplaced: another connection of the same party took over (close code 4009).
	ErrReplaced = errors.New("cloud channel: replaced by a newer connection")
	// ErrStopped: Close or Disconnect was called.
	ErrStopped = errors.New("cloud channel: stopped")
)

const (
	readLimit = 64 << 10         // frames are ≤ 4 KB of ciphertext; hello lists ≤ maxPeers peers
	pingEvery = 30 * time.Second // WebSocket pings keep NATs open and find dead links
	pingWait  = 15 * time.Second
)

// permanentError is a dial failure that retrying cannot fix (403, 404, 410, bad token for a
// peer).
type permanentError struct{ err error }

// Error is the wrapped error's message.
func (e *permanentError) Error() string { return e.err.Error() }

// Unwrap returns the wrapped error.
func (e *permanentError) Unwrap() error { return e.err }

// socket keeps one WebSocket to the relay alive: it dials, hands every message to handle,
// and after an unexpected drop dials again after Backoff.Delay(attempt). One goroutine (run)
// reads; writes may come from any goroutine.
type socket struct {
	dial    func(ctx context.Context) (*websocket.Conn, error)
	handle  func(data []byte) (stop error) // non-nil after a `closed` frame: why the socket ends
	state   func(up bool, err error)       // connection up, or down with the reason
	backoff Backoff

	mu    sync.Mutex
	conn  *websocket.Conn
	ready chan struct{} // closed while conn != nil
	done  chan struct{} // closed when run returns
	err   error         // why run returned
	dials int
}

func newSocket() *socket {
	return &socket{ready: make(chan struct{}), done: make(chan struct{})}
}

// dialWS dials url with the handshake headers h and classifies failures: statuses that will
// not change on retry become permanentError; 429 and 5xx are retried.
func dialWS(ctx context.Context, hc *http.Client, url string, h http.Header) (*websocket.Conn, error) {
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: hc, HTTPHeader: h})
	if err != nil {
		if resp != nil {
			if resp.Body != nil {
				resp.Body.Close()
			}
			pe := &protocol.Error{Status: resp.StatusCode, Code: codeForStatus(resp.StatusCode), Message: "WebSocket handshake refused"}
			if s, err := strconv.ParseInt(resp.Header.Get("Retry-After"), 10, 64); err == nil {
				pe.RetryAfterS = s
			}
			switch resp.StatusCode {
			case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusGone:
				return nil, &permanentError{fmt.Errorf("cloud channel: dial: %w", pe)}
			}
			return nil, fmt.Errorf("cloud channel: dial: %w", pe)
		}
		return nil, fmt.Errorf("cloud channel: dial: %w", redactQuery(err, url))
	}
	conn.SetReadLimit(readLimit)
	return conn, nil
}

// redactedError hides the query of a dialled URL (a viewer's `?t=` peer token) in err's text:
// net/http's errors quote the whole URL, and disconnect errors end up in events and logs.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func redactQuery(err error, url string) error {
	i := strings.IndexByte(url, '?')
	if i < 0 || !strings.Contains(err.Error(), url[i:]) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), url[i:], "?[redacted]"), err: err}
}

// run is the socket's life; it returns when ctx ends or the channel is over for this party.
func (s *socket) run(ctx context.Context) {
	attempt := 0
	for {
		conn, err := s.dial(ctx)
		s.mu.Lock()
		s.dials++
		s.mu.Unlock()
		if err != nil {
			var perm *permanentError
			if ctx.Err() != nil {
				s.finish(ErrStopped)
				return
			}
			if errors.As(err, &perm) {
				s.finish(err)
				return
			}
			s.state(false, err)
			wait := s.backoff.Delay(attempt, nil)
			var pe *protocol.Error
			if errors.As(err, &pe) && pe.RetryAfterS > 0 {
				wait = max(wait, time.Duration(pe.RetryAfterS)*time.Second)
			}
			attempt++
			if !sleep(ctx, wait) {
				s.finish(ErrStopped)
				return
			}
			continue
		}
		s.up(conn)
		got, stop, err := s.read(ctx, conn)
		s.down()
		if stop != nil {
			conn.Close(websocket.StatusNormalClosure, "")
			s.finish(stop)
			return
		}
		conn.CloseNow()
		if ctx.Err() != nil {
			s.finish(ErrStopped)
			return
		}
		switch websocket.CloseStatus(err) {
		case CloseKicked:
			s.finish(ErrKicked)
			return
		case CloseReplaced:
			s.finish(ErrReplaced)
			return
		case CloseEnded:
			s.finish(ErrChannelClosed)
			return
		}
		s.state(false, err)
		if got {
			attempt = 0
		}
		if !sleep(ctx, s.backoff.Delay(attempt, nil)) {
			s.finish(ErrStopped)
			return
		}
		attempt++
	}
}

// read hands messages to handle until the connection fails or handle says stop. got reports
// whether at least one message arrived (the link worked, so backoff starts over).
func (s *socket) read(ctx context.Context, conn *websocket.Conn) (got bool, stop, err error) {
	var pinger *time.Timer
	pinger = time.AfterFunc(pingEvery, func() {
		pctx, cancel := context.WithTimeout(ctx, pingWait)
		defer cancel()
		if err := conn.Ping(pctx); err != nil {
			conn.CloseNow()
			return
		}
		pinger.Reset(pingEvery)
	})
	defer pinger.Stop()
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return got, nil, err
		}
		got = true
		if stop := s.handle(data); stop != nil {
			return got, stop, nil
		}
	}
}

func (s *socket) up(conn *websocket.Conn) {
	s.mu.Lock()
	s.conn = conn
	close(s.ready)
	s.mu.Unlock()
	s.state(true, nil)
}

func (s *socket) down() {
	s.mu.Lock()
	s.conn = nil
	s.ready = make(chan struct{})
	s.mu.Unlock()
}

func (s *socket) finish(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	close(s.done)
}

// write sends one text message, waiting for a connection while ctx allows.
func (s *socket) write(ctx context.Context, data []byte) error {
	for {
		s.mu.Lock()
		conn, ready := s.conn, s.ready
		s.mu.Unlock()
		if conn != nil {
			if err := conn.Write(ctx, websocket.MessageText, data); err != nil {
				return fmt.Errorf("cloud channel: send: %w", err)
			}
			return nil
		}
		select {
		case <-ready:
		case <-s.done:
			return s.Err()
		case <-ctx.Done():
			return fmt.Errorf("cloud channel: send: waiting for the connection: %w", ctx.Err())
		}
	}
}

// connected reports whether a connection is up now.
func (s *socket) connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn != nil
}

// Err is why the socket ended, or nil while it runs.
func (s *socket) Err() error {
	select {
	case <-s.done:
	default:
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// dropConn closes the current connection without ending the socket, for tests of reconnects.
func (s *socket) dropConn() {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.CloseNow()
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// wsURL turns an http(s) origin into the ws(s) URL of path.
func wsURL(origin, path string) string {
	if len(origin) > 5 && origin[:5] == "https" {
		return "wss" + origin[5:] + path
	}
	return "ws" + origin[4:] + path
}
