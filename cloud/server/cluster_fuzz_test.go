package server

import (
	"bytes"
	"testing"
)

// FuzzDecodeEvent: any bus message decodes to an event or is dropped, never a panic; what
// decodes encodes back to a message that decodes the same.
func FuzzDecodeEvent(f *testing.F) {
	for _, e := range []event{{Node: "a", K: evOwner, On: true, At: 5}, {Node: "b", K: evToPeer, Peer: "p", Frame: []byte(`{"t":"msg"}`)},
		{Node: "c", K: evJoin, Peer: "p", Pub: "k", Tok: "h", At: 1}} {
		f.Add(e.encode())
	}
	f.Add([]byte("{}"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, ok := decodeEvent(data)
		if !ok {
			return
		}
		e2, ok := decodeEvent(e.encode())
		if !ok || e2.Node != e.Node || e2.K != e.K || e2.Peer != e.Peer || !bytes.Equal(e2.Frame, e.Frame) {
			t.Fatalf("%q: round trip %+v → %+v", data, e, e2)
		}
	})
}
