package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDecodeResponses covers the schemas a client reads, each with one valid body and the error
// of one broken field.
func TestDecodeResponses(t *testing.T) {
	k := strings.Repeat("A", 43)
	meta := `{"protocol":1,"services":["store","channels"],"limits":{"store":{"maxBytes":1000000,"maxKeys":1000,"maxValueBytes":64000},"channels":{"maxOpen":5,"minTtlS":60,"maxTtlS":86400,"defaultTtlS":900,"maxPeers":5,"frameBytes":4096,"framesPerMin":60,"mailboxSlots":64},"joinsPerIpPerMin":20},"pow":{"difficulty":16,"salt":"abc"},"pages":[{"plugin":"demo","page":"view"}],"functions":[],"operator":{"name":"x","contact":""}}`
	tests := []struct {
		name string
		v    func() Validatable
		ok   string
		bad  string
		err  string
	}{
		{"error body", func() Validatable { return &ErrorBody{} },
			`{"error":{"code":"rate_limited","message":"m","retryAfterS":3}}`,
			`{"error":{"code":"teapot","message":"m"}}`, `error.code: unknown error code "teapot"`},
		{"register", func() Validatable { return &RegisterDeviceResponse{} },
			`{"deviceId":"abcdefgh"}`, `{"deviceId":"abc"}`, "deviceId: must match ^[A-Za-z0-9_-]{8,64}$"},
		{"token", func() Validatable { return &AuthTokenResponse{} },
			`{"token":"0123456789abcdef","expiresAt":1}`, `{"token":"short","expiresAt":1}`, "token: must be at least 16 characters"},
		{"store put", func() Validatable { return &StorePutResponse{} }, `{"version":1}`, `{"version":0}`, "version: must be ≥ 1, got 0"},
		{"store get", func() Validatable { return &StoreGetResponse{} },
			`{"key":"a/b","value":{"x":1},"version":3,"updatedAt":5,"expiresAt":9}`,
			`{"key":"a/../b","version":3,"updatedAt":5}`, `key: has a ".." segment`},
		{"store list", func() Validatable { return &StoreListResponse{} },
			`{"items":[{"key":"a","version":1,"updatedAt":2}],"cursor":"YQ"}`,
			`{"items":[{"key":"a","version":0,"updatedAt":2}]}`, "items[0].version: must be ≥ 1, got 0"},
		{"create channel", func() Validatable { return &CreateChannelResponse{} },
			`{"id":"AAAAAAAAAAAAAAAAAAAAAA","expiresAt":1}`, `{"id":"a/b","expiresAt":1}`, "id: must match ^[A-Za-z0-9_-]{8,64}$"},
		{"patch channel", func() Validatable { return &PatchChannelResponse{} }, `{"expiresAt":1}`, `{"expiresAt":"x"}`, "expiresAt: must be a number, not string (byte 16)"},
		{"channel info", func() Validatable { return &ChannelInfoResponse{} },
			`{"status":"open","meta":` + env1 + `,"chanPub":"` + k + `","expiresAt":1,"ownerOnline":false}`,
			`{"status":"paused","meta":` + env1 + `,"chanPub":"` + k + `","expiresAt":1,"ownerOnline":false}`, `status: unknown status "paused"`},
		{"join", func() Validatable { return &JoinResponse{} },
			`{"peerId":"abcd","peerToken":"0123456789abcdef","expiresAt":1}`,
			`{"peerId":"ab","peerToken":"0123456789abcdef","expiresAt":1}`, "peerId: must match ^[A-Za-z0-9_-]{4,64}$"},
		{"mailbox list", func() Validatable { return &MailboxListResponse{} },
			`{"items":[{"slot":"latest","env":` + env1 + `,"expiresAt":1}]}`,
			`{"items":[{"slot":"a/b","env":` + env1 + `,"expiresAt":1}]}`, "items[0].slot: must match ^[A-Za-z0-9._:-]{1,64}$"},
		{"meta", func() Validatable { return &MetaResponse{} }, meta,
			strings.Replace(meta, `"difficulty":16`, `"difficulty":65`, 1), "pow.difficulty: must be in 0–64, got 65"},
		{"meta limits", func() Validatable { return &MetaResponse{} }, meta,
			strings.Replace(meta, `"minTtlS":60`, `"minTtlS":1000`, 1), "limits.channels: TTLs must satisfy minTtlS ≤ defaultTtlS ≤ maxTtlS"},
		{"function", func() Validatable { return &FunctionRequest{} }, `{"input":{"a":1},"version":2}`, `{"version":0}`, "version: must be ≥ 1, got 0"},
		{"push schedule", func() Validatable { return &PushScheduleRequest{} }, `{"at":1,"payload":` + env1 + `}`, `{"at":1}`, "payload: is required"},
		{"push cancel", func() Validatable { return &PushCancelRequest{} }, `{"id":"x"}`, `{"id":""}`, "id: must not be empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := Decode([]byte(tc.ok), tc.v()); err != nil {
				t.Errorf("valid body: %v", err)
			}
			err := Decode([]byte(tc.bad), tc.v())
			if err == nil || err.Error() != tc.err {
				t.Errorf("broken body: %v, want %s", err, tc.err)
			}
		})
	}
}

func TestErrorValue(t *testing.T) {
	e := Errorf(CodeRateLimited, "slow down: %d", 3)
	e.RetryAfterS = 7
	b, _ := json.Marshal(e.Body())
	if e.Error() != "rate_limited: slow down: 3" || e.Status != 429 ||
		string(b) != `{"error":{"code":"rate_limited","message":"slow down: 3","retryAfterS":7}}` {
		t.Errorf("%v %d %s", e, e.Status, b)
	}
	b, _ = json.Marshal(Errorf(CodeGone, "closed").Body())
	if string(b) != `{"error":{"code":"gone","message":"closed"}}` {
		t.Errorf("%s", b)
	}
}

// Frames round-trip through encoding/json as values inside other structures.
func TestFramesThroughEncodingJSON(t *testing.T) {
	var env Envelope
	json.Unmarshal([]byte(env1), &env)
	in := struct {
		A OwnerInFrame  `json:"a"`
		B PeerInFrame   `json:"b"`
		C OwnerOutFrame `json:"c"`
		D PeerOutFrame  `json:"d"`
	}{
		OwnerInFrame{T: FrameHello, ID: "chan1234", ExpiresAt: 9, Peers: []PeerSummary{{PeerID: "p123", PeerPub: strings.Repeat("A", 43), JoinedAt: 1, Online: true}}},
		PeerInFrame{T: FrameExtended, ExpiresAt: 10},
		OwnerOutFrame{T: FrameMsg, To: "p123", Env: env},
		PeerOutFrame{T: FramePing},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":{"t":"hello","id":"chan1234","expiresAt":9,"peers":[{"peerId":"p123","peerPub":"` + strings.Repeat("A", 43) + `","joinedAt":1,"online":true}]},"b":{"t":"extended","expiresAt":10},"c":{"t":"msg","to":"p123","env":` + env1 + `},"d":{"t":"ping"}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	out := in
	out.A, out.B, out.C, out.D = OwnerInFrame{}, PeerInFrame{}, OwnerOutFrame{}, PeerOutFrame{}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(out)
	if string(b2) != want {
		t.Errorf("round trip: %s", b2)
	}
	if env.CiphertextLen() != 16 || !ValidStorePrefix("a/b:") || ValidStorePrefix("a b") {
		t.Errorf("helpers")
	}
}
