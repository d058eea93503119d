package natsbus_test

import (
	"context"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/server"
)

// BenchmarkCrossNodeFrames relays frames from an owner on node a to a viewer on node b through
// NATS, 16 in flight (sealing and opening included, as `harness cloud bench --nats` does).
// frames/s is the figure docs/PERFORMANCE.md records.
func BenchmarkCrossNodeFrames(b *testing.B) {
	a, nb := twoNodes(b, func(c *server.Config) { c.Limits.Channels.FramesPerMin = 1 << 30 })
	ch, _ := openChannel(b, a.URL, 1)
	v := join(b, linkOn(b, ch, a.URL, nb.URL))
	next(b, v.Events(), client.EventConnected)
	for {
		if ev := next(b, ch.Events(), client.EventPeer); ev.Online {
			break
		}
	}
	ctx := context.Background()
	const inflight = 16
	credits := make(chan struct{}, inflight)
	for range inflight {
		credits <- struct{}{}
	}
	done := make(chan struct{})
	go func() {
		got := 0
		for ev := range v.Events() {
			if ev.Type == client.EventMessage {
				credits <- struct{}{}
				if got++; got == b.N {
					close(done)
					return
				}
			}
		}
	}()
	b.ResetTimer()
	for range b.N {
		select {
		case <-credits:
		case <-time.After(time.Minute):
			b.Fatal("frames lost: no credit back in a minute")
		}
		if err := ch.Send(ctx, v.PeerID(), 1); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.Fatalf("frames lost: not all %d arrived in a minute", b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}
