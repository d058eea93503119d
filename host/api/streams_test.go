package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/store"
)

// streamServer is an API with one stream route, POST /v1/stream, whose
// streams send one event and then wait for the client to leave, and the
// given caps.
func streamServer(t *testing.T, max, perClient int) (*Server, *httptest.Server) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := host.New(db)
	if err != nil {
		t.Fatal(err)
	}
	s := New(h, Options{MaxStreams: max, MaxClientStreams: perClient})
	s.HandleStream("POST /v1/stream", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "event: ready\ndata: {}\n\n")
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
		return nil
	})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

// openStream opens one stream as the client that sends origin ("" for none)
// and returns the response; its body is never read, as an attacker's.
func openStream(t *testing.T, ctx context.Context, ts *httptest.Server, origin string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/stream", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// refused checks that resp is the 429 of a stream cap: Retry-After and the
// API's error shape, code too_many_streams, a message that names the cap.
func refused(t *testing.T, resp *http.Response, cap string) {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("status %d; want 429", resp.StatusCode)
	}
	if ra := resp.Header.Get("Retry-After"); ra != "10" {
		t.Errorf("Retry-After %q; want 10", ra)
	}
	var body struct {
		Error struct{ Code, Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Error.Code != "too_many_streams" || !strings.Contains(body.Error.Message, cap) {
		t.Errorf("error %+v; want too_many_streams naming %q", body.Error, cap)
	}
}

func waitOpen(t *testing.T, s *Server, want int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if s.StreamStats().Open == want {
			return
		}
	}
	t.Fatalf("open streams %+v; want %d", s.StreamStats(), want)
}

// TestStreamCaps: one client opens streams it never reads until its cap,
// and the next is refused 429 before the handler runs; another client (the
// web app, by its Origin) still gets in until the cap of all streams; a
// client that disconnects mid-stream gives its slots back.
func TestStreamCaps(t *testing.T) {
	s, ts := streamServer(t, 6, 4)
	own := "http://" + strings.TrimPrefix(ts.URL, "http://")
	script, cancelScript := context.WithCancel(context.Background())
	defer cancelScript()
	for range 4 {
		if resp := openStream(t, script, ts, ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d: status %d", s.StreamStats().Open, resp.StatusCode)
		}
	}
	// A burst of more from the same client: every one refused.
	for range 50 {
		refused(t, openStream(t, context.Background(), ts, ""), "most one client may hold")
	}
	page, cancelPage := context.WithCancel(context.Background())
	defer cancelPage()
	for range 2 {
		if resp := openStream(t, page, ts, own); resp.StatusCode != http.StatusOK {
			t.Fatalf("the page's stream: status %d", resp.StatusCode)
		}
	}
	refused(t, openStream(t, context.Background(), ts, own), "6 streams are open")
	if st := s.StreamStats(); st.Open != 6 || st.Clients != 2 || st.Refused != 51 {
		t.Errorf("stats %+v; want 6 open, 2 clients, 51 refused", st)
	}
	// The script goes away mid-stream: its slots come back, and the page may open more.
	cancelScript()
	waitOpen(t, s, 2)
	for range 2 {
		if resp := openStream(t, page, ts, own); resp.StatusCode != http.StatusOK {
			t.Fatalf("after the script left: status %d", resp.StatusCode)
		}
	}
	refused(t, openStream(t, context.Background(), ts, own), "most one client may hold")
	cancelPage()
	waitOpen(t, s, 0)
	if st := s.StreamStats(); st.Clients != 0 {
		t.Errorf("stats %+v; want no client left", st)
	}
}

// TestStreamClient: every loopback address is one client; an Origin makes
// another.
func TestStreamClient(t *testing.T) {
	tests := []struct {
		name, addr, origin, want string
	}{
		{"ipv4 loopback", "127.0.0.1:5000", "", "loopback "},
		{"another loopback address", "127.0.0.2:5001", "", "loopback "},
		{"ipv6 loopback", "[::1]:5002", "", "loopback "},
		{"the web app", "127.0.0.1:5003", "http://127.0.0.1:8788", "loopback http://127.0.0.1:8788"},
		{"a remote client", "192.0.2.7:6000", "", "192.0.2.7 "},
		{"a remote ipv6 client by its /64", "[2001:db8::1]:6000", "", "2001:db8::/64 "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/v1/stream", nil)
			r.RemoteAddr = tc.addr
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if got := streamClient(r); got != tc.want {
				t.Errorf("streamClient = %q; want %q", got, tc.want)
			}
		})
	}
}
