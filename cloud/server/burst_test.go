package server_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/server"
)

// burstPair opens a channel on ownerBase, joins a viewer through viewerBase and returns once the
// owner has heard that the viewer's socket is up.
func burstPair(t *testing.T, ownerBase, viewerBase string) (*client.Channel, *client.Viewer) {
	t.Helper()
	ctx := context.Background()
	c, err := client.New(client.Config{BaseURL: ownerBase})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Disconnect)
	link, err := client.ParseSecretLink(strings.Replace(ch.Link().Reveal(), ownerBase, viewerBase, 1))
	if err != nil {
		t.Fatal(err)
	}
	v, err := client.Join(ctx, link, client.ViewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Leave)
	deadline := time.Now().Add(30 * time.Second)
	for !slices.ContainsFunc(ch.Peers(), func(pi client.PeerInfo) bool { return pi.PeerID == v.PeerID() && pi.Online }) {
		if time.Now().After(deadline) {
			t.Fatal("the owner never saw the viewer online")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return ch, v
}

// sendBurst sends n frames of about size bytes as fast as Send returns, then checks that the
// viewer gets every one, in order, and that the owner hears no error.
func sendBurst(t *testing.T, ch *client.Channel, v *client.Viewer, n, size int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pad := strings.Repeat("x", size)
	type frame struct {
		N int    `json:"n"`
		P string `json:"p"`
	}
	for i := range n {
		if err := ch.Send(ctx, v.PeerID(), frame{N: i, P: pad}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	for want := 0; want < n; {
		select {
		case ev, ok := <-v.Events():
			if !ok {
				t.Fatalf("viewer ended after %d frames: %v", want, v.Err())
			}
			if ev.Type != client.EventMessage {
				continue
			}
			var f frame
			if err := json.Unmarshal(ev.Msg, &f); err != nil || f.N != want {
				t.Fatalf("frame %d: got %.40s (%v)", want, ev.Msg, err)
			}
			want++
		case ev := <-ch.Events():
			if ev.Type == client.EventError {
				t.Fatalf("owner error after %d frames received: %s %s", want, ev.Code, ev.Message)
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d frames arrived", want, n)
		}
	}
	for {
		select {
		case ev := <-ch.Events():
			if ev.Type == client.EventError {
				t.Fatalf("owner error: %s %s", ev.Code, ev.Message)
			}
			continue
		default:
		}
		return
	}
}

// TestBurstIsDeliveredWhole: a burst the frame rate allows reaches a reading viewer whole and in
// order, on one node and across two (in-memory bus), with the default limits for 50 frames (an
// owner with one seat may send 60 a minute) and a raised rate for 1 MB of frames.
func TestBurstIsDeliveredWhole(t *testing.T) {
	for _, tc := range []struct {
		name       string
		nodes      int
		n, size    int
		framesPerM int64
	}{
		{"50 frames, one node", 1, 50, 64, 0},
		{"50 frames, two nodes", 2, 50, 64, 0},
		{"1 MB, one node", 1, 245, 3000, 1 << 20},
		{"1 MB, two nodes", 2, 245, 3000, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := func(c *server.Config) {
				if tc.framesPerM > 0 {
					c.Limits.Channels.FramesPerMin = tc.framesPerM
				}
			}
			var urls []string
			if tc.nodes == 1 {
				urls = []string{startNode(t, server.NewMemory(), nil, "", cfg)}
			} else {
				urls, _ = memCluster(t, &memBus{}, nil, cfg)
			}
			ch, v := burstPair(t, urls[0], urls[len(urls)-1])
			sendBurst(t, ch, v, tc.n, tc.size)
		})
	}
}
