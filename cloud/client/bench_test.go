package client_test

import (
	"context"
	"testing"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/server"
)

// BenchmarkRelayRoundTrip measures one frame owner → server → viewer, sealed and opened, with
// the reference server in-process on loopback: the latency floor of Channel.Send.
func BenchmarkRelayRoundTrip(b *testing.B) {
	// The default 60 frames per minute per party would stop the loop after 60 frames.
	ts := newTestServer(b, func(c *server.Config) { c.Limits.Channels.FramesPerMin = 1 << 30 })
	ch, v := openPair(b, ts, client.OpenOptions{})
	ctx := context.Background()
	msg := map[string]any{"t": "code", "code": "8461-2290-7315", "at": 1767225600000}
	b.ReportAllocs()
	for b.Loop() {
		if err := ch.Send(ctx, v.PeerID(), msg); err != nil {
			b.Fatal(err)
		}
		for ev := range v.Events() {
			if ev.Type == client.EventMessage {
				break
			}
		}
	}
}
