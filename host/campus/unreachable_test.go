package campus

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host/campus/campustest"
)

// TestUnreachableStopsTheBatch: with IAAA out of reach (a refused port, a
// server that does not speak TLS), the batch stops after the first service
// with one message in the person's language naming IAAA, and saves nothing.
func TestUnreachableStopsTheBatch(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + ln.Addr().String()
	ln.Close()
	plain := httptest.NewServer(http.NotFoundHandler()) // answers plain HTTP on the https URL below
	defer plain.Close()
	notTLS := "https://" + strings.TrimPrefix(plain.URL, "http://")
	for _, tc := range []struct {
		name, base, cause, zh, en string
	}{
		{"refused", closed, CauseRefused, "无法连接 IAAA(127.0.0.1):请确认已连接校园网或 VPN", "Cannot reach IAAA (127.0.0.1): check that you are on the campus network or VPN"},
		{"not TLS", notTLS, CauseTLS, "无法安全连接 IAAA(127.0.0.1)", "Cannot connect securely to IAAA (127.0.0.1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			r.signer.Bases["iaaa"] = tc.base
			results, err := r.signer.SignInAll(context.Background(), Batch{Services: []string{"card", "treehole", "blackboard"}, User: campustest.User, Password: campustest.Password})
			if err != nil {
				t.Fatal(err)
			}
			if len(results) != 1 {
				t.Fatalf("%d results, want the batch to stop after the first: %+v", len(results), results)
			}
			var u *Unreachable
			if !errors.As(results[0].Err, &u) || u.Service != "iaaa" || u.Cause != tc.cause {
				t.Fatalf("error %v (%T), want an Unreachable of IAAA, cause %s", results[0].Err, results[0].Err, tc.cause)
			}
			if zh := u.Message("zh-Hans"); !strings.HasPrefix(zh, tc.zh) || strings.Contains(zh, "dial tcp") {
				t.Errorf("zh: %q", zh)
			}
			if en := u.Message("en"); !strings.HasPrefix(en, tc.en) {
				t.Errorf("en: %q", en)
			}
			if _, _, ok, _ := r.acc.User(context.Background(), AccountIAAA); ok {
				t.Error("the account was saved though nothing signed in")
			}
		})
	}
}

func TestClassify(t *testing.T) {
	dnsErr := &net.DNSError{Err: "no such host", Name: "iaaa.pku.edu.cn", IsNotFound: true}
	tests := []struct {
		err   error
		cause string // "" for not unreachable
	}{
		{dnsErr, CauseDNS},
		{&net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}, CauseTimeout},
		{context.DeadlineExceeded, CauseTimeout},
		{context.Canceled, ""},
		{errors.New("IAAA refused: E01"), ""},
		{&IAAAError{Code: "E01"}, ""},
	}
	for _, tc := range tests {
		u := Classify("card", "https://iaaa.pku.edu.cn/x", tc.err)
		if (u == nil) != (tc.cause == "") || (u != nil && (u.Cause != tc.cause || u.Host != "iaaa.pku.edu.cn")) {
			t.Errorf("Classify(%v) = %+v, want cause %q", tc.err, u, tc.cause)
		}
	}
}
