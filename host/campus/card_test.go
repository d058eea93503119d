package campus

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host/campus/campustest"
)

// TestCardPaymentCode signs in to the card stand-in with a password, finds the payer and draws
// codes: each call is a new code, and every request carried the mobile User-Agent and
// synAccessSource=h5 (docs/CAMPUS-PROTOCOLS.md §8.1).
func TestCardPaymentCode(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	if _, err := CardPayerOf(ctx, r.client); err == nil {
		t.Fatal("CardPayerOf before sign-in: no error")
	} else if nse := (*NotSignedInError)(nil); !errors.As(err, &nse) || nse.Service != "card" {
		t.Fatalf("CardPayerOf before sign-in: %v, want NotSignedInError for card", err)
	}
	if res := r.signer.SignIn(ctx, "card", campustest.User, campustest.Password, SignInOptions{}); !res.OK {
		t.Fatal(res.Err)
	}
	p, err := CardPayerOf(ctx, r.client)
	if err != nil {
		t.Fatal(err)
	}
	if want := (CardPayer{Account: campustest.CardAccount, PayAcc: campustest.PayAcc, PayType: campustest.PayType, Name: "电子账户", Holder: campustest.PersonName}); p != want {
		t.Fatalf("payer %+v, want %+v", p, want)
	}
	a, err := CardPaymentCode(ctx, r.client, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := CardPaymentCode(ctx, r.client, p)
	if err != nil {
		t.Fatal(err)
	}
	var issued []string
	r.stand.Set(func(s *campustest.Stand) { issued = append(issued, s.PayCodes...) })
	if a == b || len(issued) != 2 || issued[0] != a || issued[1] != b {
		t.Fatalf("codes %q, %q; the stand-in issued %q", a, b, issued)
	}
	if n := r.stand.Count("card GET /berserker-app/ykt/tsm/batchGetBarCodeGet"); n != 2 {
		t.Errorf("batchGetBarCodeGet requests: %d", n)
	}
	// A purse the card does not know is the card's own refusal, quoted.
	if _, err := CardPaymentCode(ctx, r.client, CardPayer{Account: "999", PayAcc: "000", PayType: "1"}); err == nil || !strings.Contains(err.Error(), `code 500: "账户信息有误"`) {
		t.Errorf("a wrong account: %v", err)
	}
}

// TestCardReplies feeds the card calls replies an attacker or a changed server might send.
func TestCardReplies(t *testing.T) {
	tests := []struct {
		name, reply string
		status      int
		want        string
	}{
		{"not json", `<html>`, 200, "not the card's JSON envelope"},
		{"http error", `{}`, 502, "HTTP 502"},
		{"failure envelope", `{"code":500,"success":false,"msg":"系统繁忙"}`, 200, `code 500: "系统繁忙"`},
		{"success false", `{"code":200,"success":false,"message":"x"}`, 200, `code 200: "x"`},
		{"no codes", `{"code":200,"success":true,"data":{"barcode":[]}}`, 200, "no payment code"},
		{"empty code", `{"code":200,"success":true,"data":{"barcode":["  "]}}`, 200, "empty or over 512 bytes"},
		{"huge code", `{"code":200,"success":true,"data":{"barcode":["` + strings.Repeat("9", 600) + `"]}}`, 200, "empty or over 512 bytes"},
		{"wrong shape", `{"code":200,"success":true,"data":{"barcode":"123"}}`, 200, "not the expected shape"},
		{"over a megabyte", `{"code":200,"success":true,"data":"` + strings.Repeat("a", 1<<20) + `"}`, 200, "over 1048576 bytes"},
		{"ok", `{"code":200,"success":true,"data":{"barcode":["281234","289999"]}}`, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var hdr http.Header
			var query string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hdr, query = r.Header.Clone(), r.URL.RawQuery
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.reply)
			}))
			defer srv.Close()
			ss := &MemorySessions{}
			ss.Put(context.Background(), &Session{Service: "card", Token: "jwt.x.y"})
			c := &Client{Sessions: ss, Bases: map[string]string{"card": srv.URL}}
			code, err := CardPaymentCode(context.Background(), c, CardPayer{Account: "1", PayAcc: "2", PayType: "3"})
			if tc.want == "" {
				if err != nil || code != "281234" {
					t.Fatalf("code %q, err %v", code, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to say %q", err, tc.want)
			}
			if hdr.Get("User-Agent") != uaCardApp || hdr.Get("Synaccesssource") != "h5" || hdr.Get("Synjones-Auth") != "bearer jwt.x.y" {
				t.Errorf("headers %v", hdr)
			}
			if query != "account=1&payacc=2&paytype=3&synAccessSource=h5" {
				t.Errorf("query %q", query)
			}
		})
	}
}
