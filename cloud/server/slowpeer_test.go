package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// TestPeerThatNeverReads: an attacker's viewer opens its socket and never reads. The owner
// keeps sending 4 KB frames. The server holds at most the byte bound (plus the slack for its
// own frames) for it, refuses frames past it with an error frame to the owner, and cuts the
// viewer once it has been behind for SlowAfter or a write has hung for WriteTimeout.
func TestPeerThatNeverReads(t *testing.T) {
	const bound = 64 << 10
	for _, tc := range []struct {
		name      string
		slowAfter time.Duration
		write     time.Duration
	}{
		{"cut for being behind", 200 * time.Millisecond, 30 * time.Second},
		{"cut by the write deadline", time.Hour, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *Config) {
				c.SendQueueBytes = bound
				c.SlowAfter = tc.slowAfter
				c.Limits.Channels.FramesPerMin = 1 << 30
			})
			e.srv.cfg.WriteTimeout = tc.write
			tok := e.token(e.register(), "card-share", "channels")
			sh, r := e.openChannel(tok, 900, 1)
			if r.status != 200 {
				t.Fatalf("open: %d %s", r.status, r.body)
			}
			v, r := e.join(sh)
			if r.status != 200 {
				t.Fatalf("join: %d %s", r.status, r.body)
			}
			owner := e.dial("/v1/channels/"+sh.id+"/ws", ownerHdr(tok))
			owner.next()                                 // hello
			e.dial("/v1/c/"+sh.id+"/ws?t="+v.token, nil) // never read
			if got := owner.next(); !strings.Contains(got, `"t":"peer"`) || !strings.Contains(got, `"online":true`) {
				t.Fatalf("owner: %s", got)
			}
			rm, err := e.srv.hub.room(context.Background(), sh.id)
			if err != nil {
				t.Fatal(err)
			}
			rm.mu.Lock()
			pc := rm.seats[v.peerID].conn
			rm.mu.Unlock()

			// The owner's reader: error frames (refusals) and the viewer going offline.
			refused, offline := make(chan struct{}, 1), make(chan struct{})
			go func() {
				for {
					_, b, err := owner.c.Read(context.Background())
					if err != nil {
						return
					}
					s := string(b)
					switch {
					case strings.Contains(s, "not reading fast enough"):
						select {
						case refused <- struct{}{}:
						default:
						}
					case strings.Contains(s, `"t":"peer"`) && strings.Contains(s, `"online":false`):
						close(offline)
						return
					}
				}
			}()
			env, _ := protocol.SealBytes(v.key[:], make([]byte, 3000))
			frame, _ := json.Marshal(map[string]any{"t": "msg", "to": v.peerID, "env": env})
			deadline := time.After(60 * time.Second)
			sawRefusal := false
		send:
			for {
				select {
				case <-offline:
					break send
				case <-refused:
					sawRefusal = true
				case <-deadline:
					t.Fatal("the viewer that never reads was not cut in 60 s")
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				err := owner.c.Write(ctx, websocket.MessageText, frame)
				cancel()
				if err != nil {
					t.Fatalf("owner write: %v", err)
				}
				time.Sleep(time.Millisecond)
			}
			if _, peak := pc.queued(); peak > bound+controlSlack {
				t.Errorf("the server held %d bytes for the viewer; the bound is %d + %d", peak, bound, controlSlack)
			}
			if tc.slowAfter < time.Second && !sawRefusal {
				t.Errorf("the owner was never told its frames were refused")
			}
			select {
			case <-pc.done:
			default:
				t.Errorf("the viewer's connection is still open")
			}
		})
	}
}
