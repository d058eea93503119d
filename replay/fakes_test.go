package replay

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/interp"
)

func decodeOne(t *testing.T, src string) *Case {
	t.Helper()
	cases, err := Decode(nil, "tests/t.yaml", "t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return cases[0]
}

func TestTransport(t *testing.T) {
	c := decodeOne(t, `
tool: x
responses:
  - { match: /a, method: POST, body: post-a }
  - { match: /a, status: 404, headers: { x-k: v }, body: any-a }
  - { match: /a, campus: treehole, body: campus-a }
  - { match: q=1, body: { ok: true } }
  - { match: b=二教, body: decoded }
expect: null
`)
	rec := NewRecorded(c)
	tr := rec.Transport()
	tests := []struct {
		method, url string
		want        string // "STATUS BODY CONTENT-TYPE" or "error: …"
	}{
		{"POST", "https://h.example/a", "200 post-a "},
		{"post", "https://h.example/a", "200 post-a "},
		{"GET", "https://h.example/a", "404 any-a "},
		{"GET", "https://h.example/b?q=1", `200 {"ok":true} application/json`},
		{"GET", "https://h.example/b", "error: no recorded response for GET https://h.example/b"},
		{"GET", "https://h.example/c?b=%E4%BA%8C%E6%95%99", "200 decoded "},
	}
	for _, tc := range tests {
		req, err := http.NewRequest(tc.method, tc.url, strings.NewReader("body"))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		resp, err := tr.RoundTrip(req)
		if err != nil {
			got = "error: " + err.Error()
		} else {
			b, _ := io.ReadAll(resp.Body)
			got = strings.TrimSpace(resp.Status[:3] + " " + string(b) + " " + resp.Header.Get("Content-Type"))
			if resp.Request != req || resp.ContentLength != int64(len(b)) {
				t.Errorf("%s %s: response not tied to its request or length wrong", tc.method, tc.url)
			}
		}
		if got != strings.TrimSpace(tc.want) {
			t.Errorf("%s %s: got %q, want %q", tc.method, tc.url, got, tc.want)
		}
	}
	req, _ := http.NewRequest("GET", "/chapi/a", nil)
	req.URL.Scheme, req.URL.Host = "", ""
	resp, err := rec.Campus().Do(context.Background(), "treehole", req)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "campus-a" {
		t.Errorf("campus: got %q, want campus-a", b)
	}
	_, err = rec.Campus().Do(context.Background(), "card", req)
	const wantCampus = "no recorded response for GET card:/chapi/a (add a response with campus: card and a match: found in the URL)"
	if err == nil || err.Error() != wantCampus {
		t.Errorf("campus card: got %v, want %s", err, wantCampus)
	}
	un := rec.Unanswered()
	if len(un) != 2 || un[0] != "no recorded response for GET https://h.example/b" || un[1] != wantCampus {
		t.Errorf("Unanswered: %q", un)
	}
}

func TestAbilities(t *testing.T) {
	c := decodeOne(t, `
tool: x
abilities:
  otp.code: "123456"
  verify.treehole:
    calls:
      - result: first
      - result: second
      - args: { code: "9" }
        result: with-code
      - args: { code: "0" }
        error: wrong code
expect: null
`)
	ab := NewRecorded(c).Abilities()
	obj := func(k, v string) any {
		if k == "" {
			return nil
		}
		return decodeOne(t, "tool: x\nexpect: { "+k+": '"+v+"' }\n").Expect
	}
	tests := []struct {
		group, op string
		args      any
		want      string
	}{
		{"otp", "code", nil, `"123456"`},
		{"otp", "code", nil, `"123456"`},
		{"verify", "treehole", obj("request", "/x"), `"first"`},
		{"verify", "treehole", obj("code", "9"), `"second"`},
		{"verify", "treehole", obj("code", "9"), `"with-code"`},
		{"verify", "treehole", obj("code", "9"), `"with-code"`},
		{"verify", "treehole", nil, `"second"`},
		{"verify", "treehole", obj("code", "0"), "error ability: wrong code"},
		{"verify", "treehole", obj("code", "0"), "error ability: wrong code"},
		{"verify", "treeholeSendCode", nil, "error : no recorded answer for ability verify.treeholeSendCode (add abilities: { verify.treeholeSendCode: … } to the test)"},
	}
	for i, tc := range tests {
		v, err := ab.Call(context.Background(), interp.AbilityCall{Group: tc.group, Op: tc.op, Args: tc.args})
		got := Show(v)
		if err != nil {
			kind := ""
			var ie *interp.Error
			if errors.As(err, &ie) {
				kind = ie.Kind
			}
			got = "error " + kind + ": " + err.Error()
		}
		if got != tc.want {
			t.Errorf("call %d %s.%s(%s): got %s, want %s", i, tc.group, tc.op, Show(tc.args), got, tc.want)
		}
	}
}

func TestContains(t *testing.T) {
	tests := []struct {
		got, want string
		ok        bool
	}{
		{`{"a":1,"b":{"c":2,"d":3}}`, `{"b":{"c":2}}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":[1,2]}`, `{"a":[1]}`, false},
		{`{"a":null}`, `{"a":null}`, true},
		{`{}`, `{"a":null}`, false},
		{`1`, `{}`, false},
		{`"x"`, `"x"`, true},
	}
	for _, tc := range tests {
		if got := Contains(mustJSON(t, tc.got), mustJSON(t, tc.want)); got != tc.ok {
			t.Errorf("Contains(%s, %s) = %v, want %v", tc.got, tc.want, got, tc.ok)
		}
	}
}
