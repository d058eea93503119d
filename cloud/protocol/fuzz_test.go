package protocol

import (
	"bytes"
	"fmt"
	"testing"
)

var frameSeeds = []string{
	`{"t":"msg","to":"peer1","env":` + env1 + `}`,
	`{"t":"kick","peerId":"peer1"}`,
	`{"t":"ping"}`,
	`{"t":"msg","env":` + env1 + `}`,
	`{"t":"hello","id":"chan1234","expiresAt":5,"peers":[]}`,
	`{"t":"closed","reason":"kicked"}`,
	`{"t":"error","code":"conflict","message":"peer \"x\" offline"}`,
	`{"t":"pong","at":1}`,
	`{"t":"owner","online":true}`,
	`{"t":"peer","peerId":"abcd","online":false,"at":3}`,
	`{"t":"join","peerId":"abcd","peerPub":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","at":3}`,
	`{`, `null`, `{"t":null}`,
}

// FuzzFrame decodes arbitrary bytes as each of the four frame kinds. Invariant: whatever
// decodes re-encodes to JSON that decodes to the same frame and the same bytes (print → reparse
// is stable), and nothing panics.
func FuzzFrame(f *testing.F) {
	for _, s := range frameSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(name string, dec func([]byte) (string, error)) {
			out, err := dec(data)
			if err != nil {
				return
			}
			again, err := dec([]byte(out))
			if err != nil {
				t.Fatalf("%s: re-encoded %s does not decode: %v", name, out, err)
			}
			if !bytes.Equal([]byte(again), []byte(out)) {
				t.Fatalf("%s: unstable: %s then %s", name, out, again)
			}
		}
		check("ownerOut", ownerOut)
		check("peerOut", peerOut)
		check("ownerIn", ownerIn)
		check("peerIn", peerIn)
	})
}

// FuzzStoreKey checks that an accepted key has no empty, "." or ".." segment and only the
// allowed characters.
func FuzzStoreKey(f *testing.F) {
	for _, s := range []string{"a", "a/b", "../a", "a//b", "%2e%2e", "a\x00", ".", "a/./b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if CheckStoreKey(key) != nil {
			return
		}
		if len(key) > 256 || bytes.Contains([]byte("/"+key+"/"), []byte("/../")) ||
			bytes.Contains([]byte("/"+key+"/"), []byte("/./")) || bytes.Contains([]byte("/"+key+"/"), []byte("//")) {
			t.Fatalf("accepted bad key %q", key)
		}
	})
}

// FuzzDecodeRequest decodes arbitrary bytes as the request bodies a server reads. Invariant: no
// panic, and a value that validates validates again after a JSON round trip.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{`{"ttlS":60}`, `{"env":` + env1 + `,"ttlS":1}`, `{"authKey":"x","peerPub":"y"}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v := range []Validatable{&CreateChannelRequest{}, &MailboxPutRequest{}, &JoinRequest{},
			&RegisterDeviceRequest{}, &AuthTokenRequest{}, &StorePutRequest{}, &PatchChannelRequest{}} {
			_ = Decode(data, v)
		}
	})
}

// FuzzFastFrame is a differential test: whenever the fast frame parser accepts data, the strict
// encoding/json decoder must accept it too and read the same values.
func FuzzFastFrame(f *testing.F) {
	for _, s := range frameSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		` { "t" : "msg" , "to":"peer1","env":{"c":"x","v":1,"n":"y"} } `,
		`{"t":"msg","t":"ping"}`, `{"t":"m\u0073g"}`, `{"t":"msg","env":{"v":01}}`, `{"t":"msg","env":{"v":1.0}}`,
		`{"t":"msg","env":{}}`, `{"t":"msg","env":null}`, `{"t":"é"}`, `{}`, `{"to":"a"}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := fastFrame(data)
		if !ok {
			return
		}
		var slow frameWire
		if err := decodeStrict(data, &slow); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json refused: %v", data, err)
		}
		str := func(p *string) string {
			if p == nil {
				return "<nil>"
			}
			return "=" + *p
		}
		env := func(e *Envelope) string {
			if e == nil {
				return "<nil>"
			}
			return fmt.Sprintf("%+v", *e)
		}
		a := fmt.Sprint(str(fast.T), str(fast.To), str(fast.PeerID), env(fast.Env), fast.present())
		b := fmt.Sprint(str(slow.T), str(slow.To), str(slow.PeerID), env(slow.Env), slow.present())
		if a != b {
			t.Fatalf("%q: fast %s, encoding/json %s", data, a, b)
		}
	})
}
