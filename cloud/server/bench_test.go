package server

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// BenchmarkRelayOwnerFrame is the server's per-frame work for an owner → peer frame: decode and
// validate, rate and size checks, encode the peer frame, queue it.
func BenchmarkRelayOwnerFrame(b *testing.B) {
	e := newEnv(&testing.T{}, nil)
	defer e.srv.Close()
	env, _ := protocol.SealBytes(make([]byte, 32), make([]byte, 64))
	frame, _ := json.Marshal(protocol.OwnerOutFrame{T: "msg", To: "peer1", Env: env})
	c := newConn(1<<20, time.Minute)
	var q [][]byte
	rm := &room{ch: Channel{ID: "chan1234", MaxPeers: 1}, seats: map[string]*seat{"peer1": {p: Peer{ID: "peer1"}, conn: c}}}
	e.srv.cfg.Limits.Channels.FramesPerMin = 1 << 40
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if r := e.srv.relayOwnerFrame(rm, frame); r != nil {
			b.Fatalf("%s", r)
		}
		q = c.take(q[:0])
		c.release(len(q[0]))
	}
}

// BenchmarkDecodeOwnerOutFrame is the decoder alone.
func BenchmarkDecodeOwnerOutFrame(b *testing.B) {
	env, _ := protocol.SealBytes(make([]byte, 32), make([]byte, 64))
	frame, _ := json.Marshal(protocol.OwnerOutFrame{T: "msg", To: "peer1", Env: env})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := protocol.DecodeOwnerOutFrame(frame); err != nil {
			b.Fatal(err)
		}
	}
}
