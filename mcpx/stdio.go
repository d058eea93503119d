package mcpx

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Limits of a line on stdio (Stdio): MaxLine bytes (the newline not
// counted) and MaxDepth levels of nested arrays and objects.
const (
	MaxLine  = 4 << 20
	MaxDepth = 64
)

// JSON-RPC error codes the line filter answers with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
)

// StdioDrain bounds the wait for answers after stdin ends: a tool run has
// at most 60 s (interp).
const StdioDrain = 65 * time.Second

// Stdio is the byte stream of `harness mcp` (newline-delimited JSON-RPC,
// MCP's stdio transport) between the process's streams and the SDK's
// mcp.IOTransport, with a line filter in front of the SDK: every line
// read is checked — at most MaxLine bytes, UTF-8, at most MaxDepth levels deep,
// JSON, one object (no batch), a JSON-RPC 2.0 message the SDK can decode
// (string or integer id, string method) — and a bad one is answered by
// Stdio itself with a JSON-RPC error (-32700 parse error for what is not
// UTF-8 JSON or is too long or too deep, -32600 invalid request for the rest; id
// is the line's id when it has a valid one, else null), and never reaches
// the SDK, which would end the session on it. Blank lines are skipped.
//
// At the end of stdin it waits (up to StdioDrain) for the answers still
// owed before reporting EOF, so `harness mcp < session.jsonl` prints every
// answer. Read and Write are for the SDK (one reader, writes of whole
// messages); Close closes neither stream.
type Stdio struct {
	in  *bufio.Reader
	out io.Writer

	wmu  sync.Mutex // one message on out at a time
	next []byte     // the good line (with its newline) not yet handed to the SDK
	line int        // lines read

	mu      sync.Mutex
	pending int // requests passed on and not yet answered
	outBuf  []byte
	// refused counts the lines answered with an error by the filter.
	refused int
}

// NewStdio returns the Stdio over in and out.
func NewStdio(in io.Reader, out io.Writer) *Stdio {
	return &Stdio{in: bufio.NewReaderSize(in, 64<<10), out: out}
}

// Refused returns how many lines the filter answered with an error.
func (s *Stdio) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// Read hands the SDK the next good line.
func (s *Stdio) Read(p []byte) (int, error) {
	for len(s.next) == 0 {
		line, tooLong, err := s.readLine()
		if len(line) > 0 || tooLong {
			s.line++
			if good := s.check(line, tooLong); good != nil {
				s.next = append(good, '\n')
			}
		}
		if err != nil && len(s.next) == 0 {
			if err == io.EOF {
				s.drain()
			}
			return 0, err
		}
		if err != nil {
			break // hand over the last line first; the error comes with the next Read
		}
	}
	n := copy(p, s.next)
	s.next = s.next[n:]
	return n, nil
}

// readLine reads one line without its newline; a line over MaxLine is
// read to its end and dropped (tooLong), so memory stays bounded.
func (s *Stdio) readLine() (line []byte, tooLong bool, err error) {
	for {
		frag, err := s.in.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > MaxLine+2 { // room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > MaxLine {
			tooLong, line = true, nil
		}
		return line, tooLong, err
	}
}

// check returns the line to pass on, or nil after answering it with an
// error (or skipping a blank one).
func (s *Stdio) check(line []byte, tooLong bool) []byte {
	if tooLong {
		s.refuse(nil, CodeParseError, fmt.Sprintf("line %d is over %d bytes: send one JSON-RPC message per line, at most %d bytes", s.line, MaxLine, MaxLine))
		return nil
	}
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return nil
	}
	if !utf8.Valid(t) {
		// JSON text is UTF-8 (RFC 8259 §8.1); decoders would swap bad bytes for U+FFFD.
		s.refuse(nil, CodeParseError, fmt.Sprintf("line %d is not UTF-8 text (JSON-RPC messages are UTF-8 JSON)", s.line))
		return nil
	}
	if d := depth(t); d > MaxDepth {
		s.refuse(nil, CodeParseError, fmt.Sprintf("line %d nests arrays and objects over %d levels deep", s.line, MaxDepth))
		return nil
	}
	if !json.Valid(t) {
		var v any
		err := json.Unmarshal(t, &v)
		s.refuse(nil, CodeParseError, fmt.Sprintf("line %d is not JSON: %v", s.line, err))
		return nil
	}
	if t[0] != '{' {
		what := "a JSON object"
		if t[0] == '[' {
			what = "one message, not a batch (MCP does not take JSON-RPC batches)"
		}
		s.refuse(nil, CodeInvalidRequest, fmt.Sprintf("line %d: a JSON-RPC message is %s", s.line, what))
		return nil
	}
	id := lineID(t)
	if raw := rawID(t); string(raw) == "null" && hasMethod(t) { // a response's null id is its peer's business
		s.refuse(nil, CodeInvalidRequest, fmt.Sprintf("line %d: the id is null: an MCP id is a string or an integer, and a notification has none", s.line))
		return nil
	} else if len(raw) > 0 && string(raw) != "null" && id == nil {
		s.refuse(nil, CodeInvalidRequest, fmt.Sprintf("line %d: the id %s is not a string or an integer", s.line, cut(raw, 40)))
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(t)
	if err != nil {
		s.refuse(id, CodeInvalidRequest, fmt.Sprintf("line %d is not a JSON-RPC 2.0 message: %v", s.line, err))
		return nil
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		s.mu.Lock()
		s.pending++
		s.mu.Unlock()
	}
	return t
}

// rawID is the line's "id" member as it is written (nil without one).
func rawID(t []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(t, &m) != nil {
		return nil
	}
	return m.ID
}

// hasMethod reports whether the line has a "method" member (a request or a notification).
func hasMethod(t []byte) bool {
	var m struct {
		Method json.RawMessage `json:"method"`
	}
	return json.Unmarshal(t, &m) == nil && len(m.Method) > 0
}

// lineID is the line's id when it is a string or an integer, else nil.
func lineID(t []byte) json.RawMessage {
	raw := rawID(t)
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch x := v.(type) {
	case string:
	case float64:
		if bytes.ContainsAny(raw, ".eE") || x != float64(int64(x)) {
			return nil
		}
	default:
		return nil
	}
	return raw
}

// cut is at most n bytes of b, for a message.
func cut(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// depth is the deepest nesting of arrays and objects in t, outside strings.
func depth(t []byte) int {
	d, most, inStr, esc := 0, 0, false, false
	for _, c := range t {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			d++
			most = max(most, d)
		case c == ']' || c == '}':
			d--
		}
	}
	return most
}

// refuse writes a JSON-RPC error answer for a bad line.
func (s *Stdio) refuse(id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	s.mu.Lock()
	s.refused++
	s.mu.Unlock()
	s.wmu.Lock()
	_, _ = s.out.Write(append(b, '\n'))
	s.wmu.Unlock()
}

// drain waits up to StdioDrain for the answers still owed.
func (s *Stdio) drain() {
	for end := time.Now().Add(StdioDrain); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		s.mu.Lock()
		done := s.pending <= 0
		s.mu.Unlock()
		if done {
			return
		}
	}
}

// Write writes one of the SDK's messages and counts the answers.
func (s *Stdio) Write(p []byte) (int, error) {
	s.wmu.Lock()
	n, err := s.out.Write(p)
	s.wmu.Unlock()
	s.mu.Lock()
	s.outBuf = append(s.outBuf, p[:n]...)
	for {
		i := bytes.IndexByte(s.outBuf, '\n')
		if i < 0 {
			break
		}
		var f struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(s.outBuf[:i], &f) == nil && f.Method == "" && len(f.ID) > 0 {
			s.pending--
		}
		s.outBuf = s.outBuf[i+1:]
	}
	s.mu.Unlock()
	return n, err
}

// Close does not close the process's own streams.
func (s *Stdio) Close() error { return nil }
