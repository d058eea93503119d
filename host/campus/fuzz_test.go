package campus

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzParseEndpoints: any text is parsed or refused with the variable's name, never a panic; what
// is accepted has known names and http(s) URLs.
func FuzzParseEndpoints(f *testing.F) {
	for _, s := range []string{"", "iaaa=http://127.0.0.1:1", "card=https://x,its=http://y/", "nope=http://x", "iaaa=", "iaaa=http://", ",,", "iaaa=http://a=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseEndpoints(s)
		if err != nil {
			if !strings.Contains(err.Error(), EndpointsEnv) {
				t.Fatalf("error without the variable: %v", err)
			}
			return
		}
		for k, v := range m {
			if Lookup(k) == nil && DefaultBases[k] == "" || !(strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://")) {
				t.Fatalf("accepted %q=%q", k, v)
			}
		}
	})
}

// FuzzITSAlert: the failure-page reader never panics and returns only text that was in the page.
func FuzzITSAlert(f *testing.F) {
	for _, s := range []string{`<script>alert("账号或密码错误");history.go(-1);</script>`, `alert("欢迎")`, `alert('x');history.back()`, `alert("`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if msg, ok := itsAlert(s); ok && !strings.Contains(s, msg) {
			t.Fatalf("message %q not in the page", msg)
		}
	})
}

// FuzzJWTExpiry: any token gives the default or a time from its claim, never a panic.
func FuzzJWTExpiry(f *testing.F) {
	def := time.Date(2030, 3, 4, 0, 0, 0, 0, time.UTC)
	for _, s := range []string{"a.eyJleHAiOjE4OTg4MTI4MDB9.c", "a.b.c", "", "...", "a.eyJleHAiOiJ4In0.c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		jwtExpiry(s, def)
	})
}

func TestJWTExpiry(t *testing.T) {
	def := time.Date(2030, 3, 4, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		jwt  string
		want time.Time
	}{
		{"h.eyJleHAiOjE4OTg4MTI4MDB9.s", time.Unix(1898812800, 0).UTC()},
		{"h.eyJzdWIiOiJ4In0.s", def},
		{"not-a-jwt", def},
		{"h.!!!.s", def},
	}
	for _, tc := range tests {
		if got := jwtExpiry(tc.jwt, def); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.jwt, got, tc.want)
		}
	}
}

// FuzzEncryptPassword: IAAA's key text is parsed or refused, never a panic.
func FuzzEncryptPassword(f *testing.F) {
	k, _ := rsa.GenerateKey(rand.Reader, 1024)
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	p := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	f.Add(p)
	f.Add(strings.Join(strings.Split(p, "\n")[1:len(strings.Split(p, "\n"))-2], ""))
	f.Add(string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&k.PublicKey)})))
	f.Add("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----")
	f.Fuzz(func(t *testing.T, key string) {
		EncryptPassword(key, "pw")
	})
}

func TestEncryptPassword(t *testing.T) {
	k, _ := rsa.GenerateKey(rand.Reader, 1024)
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	pkix := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	lines := strings.Split(strings.TrimSpace(pkix), "\n")
	bare := strings.Join(lines[1:len(lines)-1], "")
	pkcs1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&k.PublicKey)}))
	for name, key := range map[string]string{"pkix": pkix, "bare base64": bare, "pkcs1": pkcs1} {
		enc, err := EncryptPassword(key, "Passw0rd")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(enc, "Passw0rd") {
			t.Fatalf("%s: plaintext", name)
		}
	}
	if _, err := EncryptPassword("garbage", "x"); err == nil {
		t.Error("garbage key accepted")
	}
}

// replyClient answers every campus request with one body, as a card server might.
type replyClient string

func (r replyClient) Do(_ context.Context, _ string, req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(string(r))), Header: http.Header{}, Request: req}, nil
}

// FuzzCardReplies: any card reply gives a payer and a code or an error naming the card path,
// never a panic; an accepted code is non-empty, trimmed and at most 512 bytes, and an accepted
// payer has an account, a purse and a type.
func FuzzCardReplies(f *testing.F) {
	for _, s := range []string{
		`{"code":200,"success":true,"data":{"barcode":["281234"]}}`,
		`{"code":200,"success":true,"data":{"card":[{"account":100000,"name":"张三","lostflag":0,"freezeflag":0}]}}`,
		`{"code":200,"success":true,"data":[{"name":"电子账户","payacc":"000","paytype":1}]}`,
		`{"code":401,"success":false,"message":"登录已过期"}`, `{"code":"200","success":true,"data":null}`, `[]`, `{`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cc := replyClient(s)
		code, err := CardPaymentCode(context.Background(), cc, CardPayer{Account: "1", PayAcc: "2", PayType: "3"})
		if err != nil {
			if !strings.Contains(err.Error(), "card ") {
				t.Fatalf("error without the card path: %v", err)
			}
		} else if code == "" || len(code) > 512 || strings.TrimSpace(code) != code {
			t.Fatalf("accepted code %q", code)
		}
		p, err := CardPayerOf(context.Background(), cc)
		if err == nil && (p.Account == "" || p.PayAcc == "" || p.PayType == "") {
			t.Fatalf("accepted payer %+v", p)
		}
	})
}
