package server

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A client that declares a body and never sends it is cut off after BodyTimeout, also on a
// request the handler answers without reading the body (a 401 here): net/http waits to discard
// up to 256 KB of an unread body before it writes the answer, and without a read deadline it
// waited forever.
func TestSlowBodyIsCutOff(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BodyTimeout = 300 * time.Millisecond })
	for _, tc := range []struct{ name, head string }{
		{"unread body (401)", "PUT /v1/store/x HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"value\":"},
		{"read body", "POST /v1/devices HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"signPub\":"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write([]byte(tc.head)); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			c.SetReadDeadline(start.Add(5 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err == nil {
				res.Body.Close()
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the server still holds the connection after %v", time.Since(start))
			}
			t.Logf("after %v: %v %v", time.Since(start).Round(time.Millisecond), res != nil, err)
		})
	}
	// Sockets and SSE streams outlive the deadline: the relay tests run with it; one more check
	// that an idle SSE stream is not cut at BodyTimeout.
	tok := e.token(e.register(), "card-share", "channels")
	sh, _ := e.openChannel(tok, 900, 1)
	v, r := e.join(sh)
	if r.status != 200 {
		t.Fatalf("join: %d %s", r.status, r.body)
	}
	res, err := http.Get(e.url + "/v1/c/" + sh.id + "/events?t=" + v.token)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	br.ReadString('\n') // the opening comment
	time.Sleep(600 * time.Millisecond)
	own := e.dial("/v1/channels/"+sh.id+"/ws", ownerHdr(tok))
	own.next() // hello
	line, err := br.ReadString('\n')
	for err == nil && !strings.HasPrefix(line, "data: ") {
		line, err = br.ReadString('\n')
	}
	if err != nil {
		t.Fatalf("SSE stream ended after BodyTimeout: %v", err)
	}
	if !strings.Contains(line, `"t":"owner"`) && !strings.Contains(line, `"t":"hello"`) {
		t.Errorf("SSE line: %q", line)
	}
	// And a socket accepted by a handler outlives it too.
	time.Sleep(600 * time.Millisecond)
	own.send(`{"t":"ping"}`)
	if got := own.next(); !strings.HasPrefix(got, `{"t":"pong"`) {
		t.Errorf("owner socket after BodyTimeout: %s", got)
	}
}
