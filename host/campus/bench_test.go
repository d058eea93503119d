package campus

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/pkuinfo/harness/host/campus/campustest"
)

// BenchmarkSignInCard is one password sign-in to the card against the stand-ins: IAAA's public
// key, RSA, oauthlogin.do, the three portal/card redirects, and the sealed session stored.
func BenchmarkSignInCard(b *testing.B) {
	r := newRig(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := r.signer.SignIn(ctx, "card", campustest.User, campustest.Password, SignInOptions{}); !res.OK {
			b.Fatal(res.Err)
		}
	}
}

// BenchmarkSignedRequest is one card request through the campus client: the sealed session read
// and opened, the request signed, sent to the stand-in and checked for expiry.
func BenchmarkSignedRequest(b *testing.B) {
	r := newRig(b)
	ctx := context.Background()
	if res := r.signer.SignIn(ctx, "card", campustest.User, campustest.Password, SignInOptions{}); !res.OK {
		b.Fatal(res.Err)
	}
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest("GET", "/berserker-app/ykt/tsm/queryCard", nil)
		resp, err := r.client.Do(ctx, "card", req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
