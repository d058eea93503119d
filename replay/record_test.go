package replay

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestRecordQuickstart records a run of the quickstart tool through a Recorder (the upstream is a
// function, never the network), writes it as a test, and replays that test: it must pass.
func TestRecordQuickstart(t *testing.T) {
	p, diags, err := plugin.LoadDir("testdata/my-classrooms")
	if err != nil || len(diags) != 0 {
		t.Fatalf("LoadDir: %v %v", err, diags)
	}
	upstream := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		body := `{"success":true,"rows":[{"buildingName":"一教","classroomFree":16,"classroomSum":32},` + "\n" + `{"buildingName":"二教","classroomFree":0,"classroomSum":40}]}`
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json;charset=UTF-8"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
	rec := &Recorder{Next: upstream}
	now := time.Date(2030, 3, 4, 2, 0, 0, 0, time.UTC)
	input := expr.NewObject(0)
	result, err := interp.Run(context.Background(), p, "overview", input, interp.Options{Transport: rec, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	data, err := EncodeTest(RecordedTest{Name: "recorded", Tool: "overview", Input: input, Now: now, Exchanges: rec.Exchanges(), Result: result}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const want = `name: recorded
tool: overview
input: {}
now: "2030-03-04T10:00:00+08:00"
responses:
  - match: https://portal.pku.edu.cn/publicQuery/classroomQuery/retrClassRoomInfos.do
    headers: {content-type: application/json;charset=UTF-8}
    body: |-
      {"success":true,"rows":[{"buildingName":"一教","classroomFree":16,"classroomSum":32},
      {"buildingName":"二教","classroomFree":0,"classroomSum":40}]}
expect:
  buildings:
    - building: 一教
      free: 16
      total: 32
    - building: 二教
      free: 0
      total: 40
`
	if string(data) != want {
		t.Errorf("EncodeTest:\n%s\nwant:\n%s", data, want)
	}
	cases, err := Decode(nil, "tests/recorded.yaml", "recorded.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if o := RunCase(context.Background(), p, cases[0]); !o.Passed {
		t.Errorf("the recorded test fails: %q", o.Problems)
	}
}

// TestEncodeRoundTrip checks that every value EncodeTest writes decodes to an equal value, and
// the response and error forms.
func TestEncodeRoundTrip(t *testing.T) {
	result, err := expr.FromJSON([]byte(`{"s":["2030-01-01","true","123","null","~","a: b","- x","#c","line1\nline2\n"," lead","é"],` +
		`"n":[0,-1,1.5,1e21,1e-7,123456789012],"b":[true,false,null],"o":{"":1,"a b":{"c":[]},"yes":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	result.(*expr.Object).Set("nan", math.NaN())
	var side []string
	files := fstest.MapFS{}
	sideFile := func(i int, ext string, data []byte) (string, error) {
		name := "fixtures/r" + string(rune('0'+i)) + ext
		side = append(side, name)
		files["tests/"+name] = &fstest.MapFile{Data: data}
		return name, nil
	}
	x := []Exchange{
		{Method: "POST", URL: "https://h.example/a?b=1", Status: 201, Header: http.Header{"Location": {"https://h.example/b"}}, Body: nil},
		{Method: "GET", URL: "https://h.example/gbk", Status: 200, Header: http.Header{"Content-Type": {"text/html; charset=gbk"}}, Body: []byte{0xc4, 0xe3, 0xba, 0xc3}},
	}
	for _, tc := range []struct {
		name string
		t    RecordedTest
	}{
		{"result", RecordedTest{Tool: "t", Input: expr.NewObject(0), Now: time.UnixMilli(1898820000000), Exchanges: x, Result: result}},
		{"error", RecordedTest{Tool: "t", Input: expr.NewObject(0), Now: time.UnixMilli(1898820000000), Err: &interp.Error{Kind: "check", Msg: "查询失败 (1+1)", File: "tools/t.yaml"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			side = nil
			data, err := EncodeTest(tc.t, sideFile)
			if err != nil {
				t.Fatal(err)
			}
			cases, err := Decode(files, "tests/t.yaml", "t.yaml", data)
			if err != nil {
				t.Fatalf("%v\n%s", err, data)
			}
			c := cases[0]
			if !c.Now.Equal(tc.t.Now) {
				t.Errorf("now: got %v, want %v", c.Now, tc.t.Now)
			}
			if tc.t.Err != nil {
				if c.ExpectError == nil || !c.ExpectError.MatchString("查询失败 (1+1)") || c.ExpectError.MatchString("x查询失败 (1+1)") {
					t.Errorf("expectError %v does not match exactly the message", c.ExpectError)
				}
				return
			}
			if d := Diff(c.Expect, tc.t.Result); d != nil {
				t.Errorf("expect does not read back: %q\n%s", d, data)
			}
			if len(c.Responses) != 2 || len(side) != 1 {
				t.Fatalf("got %d responses and side files %q\n%s", len(c.Responses), side, data)
			}
			r0, r1 := c.Responses[0], c.Responses[1]
			if r0.Method != "POST" || r0.Status != 201 || r0.Header.Get("Location") != "https://h.example/b" || r0.Match != "https://h.example/a?b=1" || len(r0.Body) != 0 {
				t.Errorf("response 1 reads back as %+v", r0)
			}
			if r1.Method != "" || r1.Status != 200 || !bytes.Equal(r1.Body, x[1].Body) || side[0] != "fixtures/r2.html" {
				t.Errorf("response 2 reads back as %+v (side files %q)", r1, side)
			}
		})
	}
}

func TestEncodeRefusesNodes(t *testing.T) {
	_, err := EncodeTest(RecordedTest{Tool: "t", Result: []any{&expr.Node{}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "result: an HTML node cannot be written to a test") {
		t.Errorf("got %v", err)
	}
	_, err = EncodeTest(RecordedTest{Tool: "t", Exchanges: []Exchange{{Method: "GET", URL: "u", Status: 200, Body: []byte{0xff}}}}, nil)
	if err == nil {
		t.Errorf("a binary body without a side file: got %v", err)
	}
}
