package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// readPool holds frame read buffers: a socket holds one only while a frame is being handled, so
// idle sockets cost no read buffer of their own.
var readPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readBody reads at most max bytes of body, within the BodyTimeout deadline ServeHTTP set.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errf(protocol.CodePayloadTooLarge, "the body is over %d bytes", max)
		}
		return nil, errf(protocol.CodeBadRequest, "reading the body: %v", err)
	}
	return b, nil
}

// checkUpgrade answers, as JSON errors, what websocket.Accept would refuse in plain text: a
// request that is not a WebSocket upgrade, and a browser Origin that is neither this host nor
// one of Config.WebSocketOrigins (apps send no Origin).
func (s *Server) checkUpgrade(w http.ResponseWriter, r *http.Request) error {
	if !headerHas(r.Header, "Connection", "upgrade") || !headerHas(r.Header, "Upgrade", "websocket") {
		// 400 bad_request, not 426: the seed gives bad_request 400 and no code for 426; the
		// Upgrade header says what is missing.
		w.Header().Set("Upgrade", "websocket")
		return errf(protocol.CodeBadRequest, "this endpoint needs a WebSocket upgrade")
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return errf(protocol.CodeForbidden, "bad Origin header")
	}
	if strings.EqualFold(u.Host, r.Host) {
		return nil
	}
	for _, p := range s.cfg.WebSocketOrigins {
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(u.Host)); ok {
			return nil
		}
	}
	return errf(protocol.CodeForbidden, "Origin %s may not open sockets here", origin)
}

func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

func (s *Server) accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, *batchConn, error) {
	// The request's BodyTimeout read deadline would outlive the hijack and cut the socket.
	http.NewResponseController(w).SetReadDeadline(time.Time{})
	bw := &batchWriter{ResponseWriter: w}
	ws, err := websocket.Accept(bw, r, &websocket.AcceptOptions{
		OriginPatterns:  s.cfg.WebSocketOrigins,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, nil, err // Accept has answered the request
	}
	ws.SetReadLimit(protocol.MaxFrameJSON)
	return ws, bw.bc, nil
}

func (s *Server) newConn() *conn { return newConn(s.cfg.SendQueueBytes, s.cfg.SlowAfter) }

// ownerSocket answers GET /v1/channels/{id}/ws: the owner's WebSocket (token in the
// Authorization header or `?t=`).
func (s *Server) ownerSocket(id string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rm, err := s.ownedRoom(w, r, id, true)
		if err != nil {
			return err
		}
		if err := s.checkUpgrade(w, r); err != nil {
			return err
		}
		ws, bc, err := s.accept(w, r)
		if err != nil {
			return nil
		}
		c := s.newConn()
		c.abort = func() { ws.CloseNow() }
		if !rm.attachOwner(c, s.nowMs()) {
			ws.Close(protocol.CloseClosed, "channel closed")
			return nil
		}
		// The handler returns and its goroutine (its stack grown by the request's work) ends;
		// the socket lives on in two fresh goroutines with small stacks.
		s.sockets.Add(1)
		go s.writeLoop(ws, bc, c)
		go func() {
			s.readLoop(ws, c, func(b []byte) {
				if reply := s.relayOwnerFrame(rm, b); reply != nil {
					c.enqueue(reply)
				}
			})
			rm.detachOwner(c)
			c.close(0, "")
		}()
		return nil
	}
}

// peerSocket answers GET /v1/c/{id}/ws?t=PEER_TOKEN.
func (s *Server) peerSocket(id string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rm, st, err := s.peerSeat(r, id)
		if err != nil {
			return err
		}
		if err := s.checkUpgrade(w, r); err != nil {
			return err
		}
		ws, bc, err := s.accept(w, r)
		if err != nil {
			return nil
		}
		c := s.newConn()
		c.abort = func() { ws.CloseNow() }
		if rm.attachPeer(st.p.TokenHash, c, s.nowMs()) == nil {
			ws.Close(protocol.CloseKicked, "no seat")
			return nil
		}
		s.sockets.Add(1)
		go s.writeLoop(ws, bc, c)
		go func() {
			s.readLoop(ws, c, func(b []byte) {
				if _, reply := s.relayPeerFrame(rm, st, b); reply != nil {
					c.enqueue(reply)
				}
			})
			rm.detachPeer(st, c, s.nowMs())
			c.close(0, "")
		}()
		return nil
	}
}

// readLoop hands each text message to handle until the socket fails or closes. A binary
// message is answered with an error frame through handle's own validation (it is not JSON).
func (s *Server) readLoop(ws *websocket.Conn, c *conn, handle func([]byte)) {
	ctx := context.Background() // the writer closes the socket, which ends Reader
	for {
		_, rd, err := ws.Reader(ctx)
		if err != nil {
			return
		}
		buf := readPool.Get().(*bytes.Buffer)
		buf.Reset()
		_, err = buf.ReadFrom(rd)
		if err == nil {
			handle(buf.Bytes())
		}
		if buf.Cap() <= 2*protocol.MaxFrameJSON {
			readPool.Put(buf)
		}
		if err != nil {
			return
		}
		select {
		case <-c.done:
			return
		default:
		}
	}
}

// batchBytes is how much one coalesced write carries at most: a burst leaves in writes of
// this size, the first of its frames not waiting for the last.
const batchBytes = 64 << 10

// writeLoop is the connection's only writer: queued frames coalesced into few writes, each
// with the WriteTimeout deadline, pings every PingInterval, and on close the queued frames (a
// `closed` frame first) then the close code.
func (s *Server) writeLoop(ws *websocket.Conn, bc *batchConn, c *conn) {
	defer s.sockets.Done()
	ping := time.NewTicker(s.cfg.PingInterval)
	defer ping.Stop()
	var batch [][]byte
	// drain writes what is queued; false when the socket failed.
	drain := func() bool {
		batch = c.take(batch[:0])
		defer func() { clear(batch) }()
		for i := 0; i < len(batch); {
			n := 0
			bc.begin()
			var err error
			for ; i < len(batch) && n < batchBytes; i++ {
				if err == nil {
					// The write only fills the batch; flush carries the deadline.
					err = ws.Write(context.Background(), websocket.MessageText, batch[i])
				}
				n += len(batch[i])
			}
			if ferr := bc.flush(s.cfg.WriteTimeout); err == nil {
				err = ferr
			}
			c.release(n)
			if err != nil {
				for ; i < len(batch); i++ {
					c.release(len(batch[i]))
				}
				return false
			}
		}
		return true
	}
	for {
		select {
		case <-c.wake:
			if !drain() {
				c.close(0, "")
				ws.CloseNow()
				return
			}
		case <-ping.C:
			ctx, cancel := context.WithTimeout(context.Background(), s.cfg.WriteTimeout)
			err := ws.Ping(ctx)
			cancel()
			if err != nil {
				c.close(0, "")
				ws.CloseNow()
				return
			}
		case <-c.done:
			if !drain() || c.code == 0 {
				ws.CloseNow()
				return
			}
			// Close waits for the client's close frame; bound it like any write.
			closed := make(chan struct{})
			go func() {
				ws.Close(websocket.StatusCode(c.code), c.reason)
				close(closed)
			}()
			select {
			case <-closed:
			case <-time.After(s.cfg.WriteTimeout):
				ws.CloseNow()
			}
			return
		}
	}
}

// peerEvents answers GET /v1/c/{id}/events?t=PEER_TOKEN: the SSE fallback. Each frame is one
// `data:` line; a comment line keeps proxies from timing out the stream. There is no
// server-wide write timeout: every write gets its own deadline.
func (s *Server) peerEvents(id string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rm, st, err := s.peerSeat(r, id)
		if err != nil {
			return err
		}
		rc := http.NewResponseController(w)
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		// A stream, not a request: no BodyTimeout (net/http's background read would end it).
		rc.SetReadDeadline(time.Time{})
		c := s.newConn()
		c.abort = func() { rc.SetWriteDeadline(time.Now()) }
		if rm.attachPeer(st.p.TokenHash, c, s.nowMs()) == nil {
			return errf(protocol.CodeUnauthorized, "no seat")
		}
		defer rm.detachPeer(st, c, s.nowMs())
		defer c.close(0, "")
		w.WriteHeader(http.StatusOK)
		write := func(parts ...[]byte) bool {
			rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
			for _, p := range parts {
				if _, err := w.Write(p); err != nil {
					return false
				}
			}
			return rc.Flush() == nil
		}
		if !write([]byte(": pku-harness-cloud\n\n")) {
			return nil
		}
		ping := time.NewTicker(s.cfg.PingInterval)
		defer ping.Stop()
		dataPrefix, end := []byte("data: "), []byte("\n\n")
		var batch [][]byte
		// drain writes every queued frame as an event and flushes once; false when it failed.
		drain := func() bool {
			batch = c.take(batch[:0])
			defer func() { clear(batch) }()
			n := 0
			rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
			var err error
			for _, b := range batch {
				for _, p := range [][]byte{dataPrefix, b, end} {
					if err == nil {
						_, err = w.Write(p)
					}
				}
				n += len(b)
			}
			if err == nil {
				err = rc.Flush()
			}
			c.release(n)
			return err == nil
		}
		for {
			select {
			case <-r.Context().Done():
				return nil
			case <-c.wake:
				if !drain() {
					return nil
				}
			case <-ping.C:
				if !write([]byte(fmt.Sprintf(": ping %d\n\n", s.nowMs()))) {
					return nil
				}
			case <-c.done:
				drain()
				return nil
			}
		}
	}
}
