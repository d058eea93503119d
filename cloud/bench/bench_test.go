package bench_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/bench"
	"github.com/pkuinfo/harness/cloud/server/enginetest"
)

// TestEveryFrameCounted sends a million frames through each path — one node, and across two
// nodes on PostgreSQL and NATS — closed loop with 32 frames in flight per pair, and counts every
// one: each frame sent arrives, in order, and none is refused. -short and -race send 20,000.
func TestEveryFrameCounted(t *testing.T) {
	frames := int64(1_000_000)
	if testing.Short() || raceOn {
		frames = 20_000
	}
	for _, tc := range []struct {
		name    string
		engines bool
	}{
		{"one node", false},
		{"two nodes over NATS", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := bench.Options{Pairs: 16, Rate: 0, Inflight: 32, Duration: 4 * time.Minute, Frames: frames,
				Payload: 64, StoreWorkers: 1, Setup: 8}
			if tc.engines {
				o.DB, o.NATS = enginetest.Postgres(t), enginetest.NATS(t)
			}
			var log bytes.Buffer
			rep, err := bench.Run(context.Background(), o, &log)
			if err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			if rep.Sent != frames || rep.Received != rep.Sent || rep.SendErrors != 0 || rep.Refused != 0 || rep.OutOfOrder != 0 {
				t.Fatalf("sent %d of %d, received %d, send errors %d, refused %d, out of order %d\n%s",
					rep.Sent, frames, rep.Received, rep.SendErrors, rep.Refused, rep.OutOfOrder, log.String())
			}
			t.Logf("%d frames in %.1f s (%.0f/s), p99 %.2f ms", rep.Received, rep.Seconds, rep.FramesPerSec, rep.P99ms)
		})
	}
}

// TestMerge: reports of several client processes add up.
func TestMerge(t *testing.T) {
	a := &bench.Report{Server: "u", Pairs: 2, Connections: 4, Sent: 10, Received: 10, FramesPerSec: 100, P99ms: 2, MemPerConnKB: 4}
	b := &bench.Report{Server: "u", Pairs: 3, Connections: 6, Sent: 5, Received: 4, Refused: 1, FramesPerSec: 50, P99ms: 3, MemPerConnKB: 6}
	m := bench.Merge([]*bench.Report{a, nil, b})
	want := bench.Report{Server: "u (clients in 2 processes)", Pairs: 5, Connections: 10, Sent: 15, Received: 14, Refused: 1,
		FramesPerSec: 150, P99ms: 3, MemPerConnKB: 5}
	if *m != want {
		t.Errorf("merge = %+v\nwant %+v", *m, want)
	}
	if bench.Merge(nil) != nil {
		t.Error("merge of nothing is not nil")
	}
}
