package replay

import (
	"testing"
	"testing/fstest"
	"time"

	"github.com/pkuinfo/harness/lang/diag"
)

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"empty", "", "t.yaml:1:1: test file holds no test"},
		{"not a mapping", "- a\n", "t.yaml:1:1: test must be a mapping, got a list"},
		{"missing tool and expect", "name: x\n", "t.yaml:1:1: test: missing key \"tool\"\nt.yaml:1:1: test: missing key \"expect\" or \"expectError\""},
		{"unknown key", "tool: a\nexpected: 1\n", "t.yaml:1:1: test: missing key \"expect\" or \"expectError\"\nt.yaml:2:1: test: unknown key \"expected\" (known: name, tool, input, now, kv, responses, abilities, expect, expectError, expectRequests)"},
		{"both expects", "tool: a\nexpect: 1\nexpectError: x\n", "t.yaml:3:14: test: give either expect or expectError, not both"},
		{"bad regex", "tool: a\nexpectError: '(x'\n", "t.yaml:2:14: expectError: bad regular expression: error parsing regexp: missing closing ): `(x`"},
		{"bad now", "tool: a\nnow: tomorrow\nexpect: 1\n", "t.yaml:2:6: now: cannot read \"tomorrow\" as a time (want ISO 8601 such as 2030-03-04T10:00:00+08:00, or Unix milliseconds)"},
		{"duplicate key", "tool: a\ntool: b\nexpect: 1\n", "t.yaml:2:1: test: duplicate key \"tool\""},
		{"alias", "tool: a\ninput: &x { a: 1 }\nexpect: *x\n", "t.yaml:3:9: YAML aliases are not allowed"},
		{"yaml syntax", "tool: a\nexpect: [1\n", "t.yaml:1: YAML: did not find expected ',' or ']'"},
		{"response without match", "tool: a\nresponses:\n  - body: x\nexpect: 1\n", "t.yaml:3:5: responses[0]: missing key \"match\""},
		{"response body and file", "tool: a\nresponses:\n  - { match: x, body: x, file: y }\nexpect: 1\n", "t.yaml:3:32: responses[0]: give either body or file, not both"},
		{"response bad status", "tool: a\nresponses:\n  - { match: x, status: 99 }\nexpect: 1\n", "t.yaml:3:25: responses[0].status must be an HTTP status from 100 to 599, got the scalar \"99\""},
		{"response file missing", "tool: a\nresponses:\n  - { match: x, file: nope.json }\nexpect: 1\n", "t.yaml:3:23: responses[0].file: cannot read \"nope.json\": file does not exist"},
		{"response file outside", "tool: a\nresponses:\n  - { match: x, file: ../../x.json }\nexpect: 1\n", "t.yaml:3:23: responses[0].file \"../../x.json\" is outside the plugin folder"},
		{"responses not a list", "tool: a\nresponses: { match: x }\nexpect: 1\n", "t.yaml:2:12: responses must be a list, got a mapping"},
		{"ability name", "tool: a\nabilities: { verify: 1 }\nexpect: 1\n", "t.yaml:2:14: abilities: \"verify\" is not of the form group.op (e.g. verify.treehole)"},
		{"ability call without result", "tool: a\nabilities:\n  otp.code: { calls: [ { args: {} } ] }\nexpect: 1\n", "t.yaml:3:24: abilities.otp.code.calls[0]: missing key \"result\" or \"error\""},
		{"expectRequests query", "tool: a\nexpect: 1\nexpectRequests:\n  - { match: x, query: 1 }\n", "t.yaml:4:24: expectRequests[0].query must be a mapping, got the scalar \"1\""},
		{"kv expires bad", "tool: a\nkv: { k: { value: 1, expires: soon } }\nexpect: 1\n", "t.yaml:2:31: kv k: expires: cannot read \"soon\" as a time (want ISO 8601 such as 2030-03-04T10:00:00+08:00, or Unix milliseconds)"},
		{"second document", "tool: a\nexpect: 1\n---\ntool: b\n", "t.yaml:4:1: test: missing key \"expect\" or \"expectError\""},
		{"null document", "null\n", "t.yaml:1:1: test must be a mapping, got null"},
		{"~ document after a test", "tool: a\nexpect: 1\n---\n~\n", "t.yaml:4:1: test must be a mapping, got null"},
		{"input null", "tool: a\ninput: ~\nexpect: 1\n", "t.yaml:2:8: input must be a mapping, got null (leave input out for no input)"},
		{"input empty", "tool: a\ninput:\nexpect: 1\n", "t.yaml:2:7: input must be a mapping, got null (leave input out for no input)"},
		{"custom tag", "tool: a\nexpect: !foo 1\n", "t.yaml:2:9: unsupported YAML tag !foo"},
	}
	fsys := fstest.MapFS{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(fsys, "tests/t.yaml", "t.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("Decode succeeded, want error %q", tc.want)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("Decode error\ngot:  %s\nwant: %s", got, tc.want)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	fsys := fstest.MapFS{
		"tests/fixtures/page.html": {Data: []byte("<p>hi</p>")},
	}
	src := `name: today
tool: free
input: { building: 二教, day: today }
now: 2030-03-04T10:00:00+08:00
kv:
  plain: { a: 1 }
  old: { value: [1, 2], expires: 1900000000000 }
  three: { value: 1, expires: 2, other: 3 }
responses:
  - match: retrClassRoomFree.do
    method: post
    headers: { content-type: application/json }
    body: '{"success":true}'
  - match: rows
    status: 500
    body: { rows: [1, 2.5, "x"], ok: true }
  - match: page
    file: fixtures/page.html
  - match: /chapi/
    campus: treehole
abilities:
  otp.code: "123456"
  verify.treehole:
    calls:
      - args: { code: "1" }
        result: { ok: 1 }
      - error: bad code
expect: { rooms: [{ room: "101", seats: 40 }], n: null, t: 2030-01-01 }
expectRequests:
  - match: retr
    method: post
    query: { page: 2 }
    json: [1]
    headers: { Referer: x }
---
tool: free
now: 1900000000000
expectError: '(?i)^bad'
`
	cases, err := Decode(fsys, "tests/free.yaml", "plugins/x/tests/free.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 {
		t.Fatalf("got %d cases, want 2", len(cases))
	}
	c := cases[0]
	check := func(what string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s: got %v, want %v", what, got, want)
		}
	}
	check("Title", c.Title(), "today")
	check("Tool", c.Tool, "free")
	check("ToolPos", c.ToolPos, diag.Pos{Line: 2, Col: 7})
	check("Input", Show(c.Input), `{"building":"二教","day":"today"}`)
	check("Now", c.Now.UnixMilli(), time.Date(2030, 3, 4, 2, 0, 0, 0, time.UTC).UnixMilli())
	check("len KV", len(c.KV), 3)
	check("KV[0]", Show(c.KV[0].Value)+" "+c.KV[0].Expires.String(), `{"a":1} 0001-01-01 00:00:00 +0000 UTC`)
	check("KV[1]", Show(c.KV[1].Value), "[1,2]")
	check("KV[1].Expires", c.KV[1].Expires.UnixMilli(), int64(1900000000000))
	check("KV[2]", Show(c.KV[2].Value), `{"value":1,"expires":2,"other":3}`)
	check("len Responses", len(c.Responses), 4)
	r := c.Responses[0]
	check("r0", r.Method+" "+r.Header.Get("Content-Type")+" "+string(r.Body)+" "+r.Campus, `POST application/json {"success":true} `)
	r = c.Responses[1]
	check("r1", r.Header.Get("Content-Type")+" "+string(r.Body), `application/json {"rows":[1,2.5,"x"],"ok":true}`)
	check("r1 status", r.Status, 500)
	r = c.Responses[2]
	check("r2", r.Header.Get("Content-Type")+" "+string(r.Body), " <p>hi</p>") // a fixture has only the headers the test gives
	check("r2 status", r.Status, 200)
	check("r3 campus", c.Responses[3].Campus, "treehole")
	check("otp.code", Show(c.Abilities["otp.code"].Value), `"123456"`)
	vt := c.Abilities["verify.treehole"]
	check("calls", len(vt.Calls), 2)
	check("call0", Show(vt.Calls[0].Args)+" "+Show(vt.Calls[0].Result), `{"code":"1"} {"ok":1}`)
	check("call1", vt.Calls[1].HasArgs, false)
	check("call1 error", vt.Calls[1].Error, "bad code")
	check("Expect", Show(c.Expect), `{"rooms":[{"room":"101","seats":40}],"n":null,"t":"2030-01-01"}`)
	check("ExpectPos", c.ExpectPos, diag.Pos{Line: 28, Col: 9})
	check("len ExpectRequests", len(c.ExpectRequests), 1)
	er := c.ExpectRequests[0]
	check("er", er.Match+" "+er.Method+" "+Show(er.Query)+" "+Show(er.JSON)+" "+er.Header["Referer"], `retr POST {"page":2} [1] x`)

	c = cases[1]
	check("Title 2", c.Title(), "#2")
	check("Input 2", Show(c.Input), "{}")
	check("Now 2", c.Now.UnixMilli(), int64(1900000000000))
	check("ExpectError", c.ExpectError.String(), "(?i)^bad")
	check("HasExpect", c.HasExpect, false)
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want string // UTC, RFC 3339
	}{
		{"2030-03-04T10:00:00+08:00", "2030-03-04T02:00:00Z"},
		{"2030-03-04T10:00:00Z", "2030-03-04T10:00:00Z"},
		{"2030-03-04T10:00:00", "2030-03-04T02:00:00Z"},
		{"2030-03-04T10:00", "2030-03-04T02:00:00Z"},
		{"2030-03-04 10:00", "2030-03-04T02:00:00Z"},
		{"2030-03-04", "2030-03-03T16:00:00Z"},
		{"1900000000000", "2030-03-17T17:46:40Z"},
		{"2030-03-04T10:00:00.5+08:00", "2030-03-04T02:00:00.5Z"},
	}
	for _, tc := range tests {
		got, err := ParseTime(tc.in)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", tc.in, err)
			continue
		}
		if s := got.UTC().Format(time.RFC3339Nano); s != tc.want {
			t.Errorf("ParseTime(%q) = %s, want %s", tc.in, s, tc.want)
		}
	}
	for _, bad := range []string{"", "now", "2030-13-01", "1e300"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) succeeded, want an error", bad)
		}
	}
}
