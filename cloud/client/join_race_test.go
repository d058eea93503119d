package client_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
)

// slowDial delays the WebSocket handshake of the viewer it serves: the seat is claimed, the
// owner hears the join, and the viewer's socket is not up yet.
type slowDial struct{ delay time.Duration }

func (s slowDial) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/ws") {
		select {
		case <-time.After(s.delay):
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestSendRightAfterJoin: a frame the owner sends as soon as it hears a join is delivered once
// the viewer's socket is up, or Send says why not; it is never accepted and then dropped.
func TestSendRightAfterJoin(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
	}{
		{"socket at once", 0},
		{"socket 300ms after the join", 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t)
			ctx := context.Background()
			p, err := ts.newClient(t, nil).Plugin("demo", "channels")
			if err != nil {
				t.Fatal(err)
			}
			ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(ch.Disconnect)
			next(t, ch.Events(), client.EventConnected)
			v, err := client.Join(ctx, ch.Link(), client.ViewerOptions{Backoff: fastBackoff,
				HTTPClient: &http.Client{Transport: slowDial{tc.delay}}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(v.Leave)
			next(t, ch.Events(), client.EventJoin)
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := ch.Send(sctx, v.PeerID(), map[string]int{"n": 1}); err != nil {
				t.Fatalf("send right after the join: %v", err)
			}
			if ev := next(t, v.Events(), client.EventMessage); string(ev.Msg) != `{"n":1}` {
				t.Errorf("viewer got %s", ev.Msg)
			}
			// The owner heard no error: nothing was dropped.
			for {
				select {
				case ev := <-ch.Events():
					if ev.Type == client.EventError {
						t.Fatalf("owner error event: %s %s %v", ev.Code, ev.Message, ev.Err)
					}
					continue
				default:
				}
				break
			}
		})
	}
}

// TestSendToJoiningPeerHonoursContext: a seat whose socket never comes up makes Send wait only
// as long as its context allows, and say so.
func TestSendToJoiningPeerHonoursContext(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	p, err := ts.newClient(t, nil).Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Disconnect)
	next(t, ch.Events(), client.EventConnected)
	v, err := client.Join(ctx, ch.Link(), client.ViewerOptions{HTTPClient: &http.Client{Transport: slowDial{time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Leave()
	next(t, ch.Events(), client.EventJoin)
	for _, pi := range ch.Peers() {
		if pi.PeerID == v.PeerID() && pi.Online {
			t.Errorf("a joined seat without a socket is listed online")
		}
	}
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err = ch.Send(sctx, v.PeerID(), map[string]int{"n": 1})
	if err == nil || !strings.Contains(err.Error(), "has joined but its socket is not up yet") {
		t.Fatalf("send = %v", err)
	}
}
