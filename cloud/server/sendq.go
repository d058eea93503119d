package server

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"time"
)

// conn is one live party (owner socket, peer socket or peer SSE stream) as the relay sees it: a
// queue of encoded frames bounded in bytes, drained by the connection's single writer
// goroutine, and a close signal carrying the close code. Sends never block.
//
// The bound counts every byte queued or being written (Config.SendQueueBytes, 1 MiB by
// default, like Centrifugo's per-client queue). A relayed frame that does not fit is refused
// (the sender is told), and a party that has been refusing frames for Config.SlowAfter (5 s) is
// closed with 1008 "too slow": a burst is absorbed, a reader that stays behind is cut. Frames
// the relay itself sends (hello, presence, closed, replies) get controlSlack more; past that
// the party is too slow at once, so an attacker that sends without reading cannot grow its
// queue either.
type conn struct {
	mu     sync.Mutex
	q      [][]byte
	bytes  int   // queued and being written
	peak   int   // the most bytes ever held, for tests
	overAt int64 // when frames started being refused (Unix ns), 0 while they fit
	limit  int
	slow   time.Duration
	wake   chan struct{} // one token: the queue has frames
	done   chan struct{}
	once   sync.Once
	code   int
	reason string
	// abort ends the transport at once (set before the conn is attached): a party too slow to
	// read its queue will not read a close frame either, and a write it blocks must not hold
	// the seat until WriteTimeout.
	abort func()
}

// controlSlack is how far past the byte bound frames from the relay itself (hello, presence,
// closed, error replies, pongs) may go before the party counts as too slow.
const controlSlack = 64 << 10

func newConn(limit int, slow time.Duration) *conn {
	return &conn{limit: limit, slow: slow, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

func (c *conn) push(b []byte) {
	c.q = append(c.q, b)
	c.bytes += len(b)
	c.peak = max(c.peak, c.bytes)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// enqueue queues a frame of the relay's own, or closes the connection (1008) when even the
// slack is used up.
func (c *conn) enqueue(b []byte) {
	c.mu.Lock()
	if c.bytes+len(b) > c.limit+controlSlack {
		c.mu.Unlock()
		c.tooSlow()
		return
	}
	c.push(b)
	c.mu.Unlock()
}

// offer queues a relayed frame without blocking and reports whether it fit. A frame over the
// bound is refused, not the receiver, unless the receiver has been refusing frames for longer
// than SlowAfter: then it is closed (1008). The caller tells the sender with an `error` frame
// (seed 003: a violating frame is dropped with an `error` frame).
func (c *conn) offer(b []byte) bool {
	c.mu.Lock()
	if c.bytes+len(b) <= c.limit {
		c.push(b)
		c.mu.Unlock()
		return true
	}
	now := time.Now().UnixNano()
	if c.overAt == 0 {
		c.overAt = now
	}
	slow := time.Duration(now-c.overAt) > c.slow
	c.mu.Unlock()
	if slow {
		c.tooSlow()
	}
	return false
}

// tooSlow closes the connection with 1008 and ends its transport without waiting for it.
func (c *conn) tooSlow() {
	c.close(1008, "too slow")
	if c.abort != nil {
		c.abort()
	}
}

// take hands the writer every queued frame; their bytes stay counted until release.
func (c *conn) take(into [][]byte) [][]byte {
	c.mu.Lock()
	into = append(into, c.q...)
	clear(c.q)
	c.q = c.q[:0]
	if cap(c.q) > 64 {
		c.q = nil // a burst's backing array is not kept by an idle socket
	}
	c.mu.Unlock()
	return into
}

// release uncounts n bytes the writer has written.
func (c *conn) release(n int) {
	c.mu.Lock()
	c.bytes -= n
	if c.bytes < c.limit {
		c.overAt = 0
	}
	c.mu.Unlock()
}

// queued is the number of bytes held, for tests.
func (c *conn) queued() (now, peak int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, c.peak
}

// close asks the writer to flush what is queued, then close with code (0: just drop).
func (c *conn) close(code int, reason string) {
	c.once.Do(func() {
		c.mu.Lock()
		c.code, c.reason = code, reason
		c.mu.Unlock()
		close(c.done)
	})
}

// ----- coalesced writes -----

// batchConn is a hijacked socket whose writes, while a batch is open, collect in one buffer
// and reach the kernel in one write: the frames a writer finds queued leave together. Outside
// a batch (pongs and close frames from the reading goroutine) writes go straight through.
type batchConn struct {
	net.Conn
	mu       sync.Mutex
	batching bool
	buf      []byte
}

var batchPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.batching {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	return b.Conn.Write(p)
}

func (b *batchConn) begin() {
	b.mu.Lock()
	b.batching = true
	b.buf = (*batchPool.Get().(*[]byte))[:0]
	b.mu.Unlock()
}

// flush writes the batch within timeout and closes it.
func (b *batchConn) flush(timeout time.Duration) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batching = false
	buf := b.buf
	b.buf = nil
	var err error
	if len(buf) > 0 {
		b.Conn.SetWriteDeadline(time.Now().Add(timeout))
		_, err = b.Conn.Write(buf)
		b.Conn.SetWriteDeadline(time.Time{})
	}
	if cap(buf) <= 256<<10 {
		buf = buf[:0]
		batchPool.Put(&buf)
	}
	return err
}

// batchWriter makes websocket.Accept hijack into a batchConn, with a small write buffer: the
// batch is the real buffer, so an idle socket does not keep 4 KB for writing.
type batchWriter struct {
	http.ResponseWriter
	bc *batchConn
}

func (w *batchWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.bc = &batchConn{Conn: nc}
	return w.bc, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(w.bc, 512)), nil
}

func (w *batchWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
