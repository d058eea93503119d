package mock

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, srv *httptest.Server, body string) (int, string) {
	t.Helper()
	res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestMock(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, beijing) }
	srv := httptest.NewServer(New(Options{Now: now}))
	defer srv.Close()
	tools := `"tools":[{"type":"function","function":{"name":"shuttle__next","parameters":{}}},{"type":"function","function":{"name":"schedule__remind","parameters":{}}}]`
	cases := []struct {
		name, body string
		status     int
		want       []string
	}{
		{"shuttle, not streamed", `{"model":"mock-agent","messages":[{"role":"user","content":"下一班校车"}],` + tools + `}`, 200,
			[]string{`"finish_reason":"tool_calls"`, `"function":{"arguments":"{}","name":"shuttle__next"}`}},
		{"remind", `{"model":"mock-agent","messages":[{"role":"user","content":"提醒我复习"}],` + tools + `}`, 200,
			[]string{`"name":"schedule__remind"`, `\"daily\":\"09:00\"`, `\"everyDays\":3`, `\"times\":16`}},
		{"remind soon is one-off", `{"model":"mock-agent","messages":[{"role":"user","content":"马上提醒我"}],` + tools + `}`, 200,
			[]string{`\"at\":\"2026-12-01 10:02\"`}},
		{"soon alone", `{"model":"mock-agent","messages":[{"role":"user","content":"soon"}],` + tools + `}`, 200,
			[]string{`\"at\":\"2026-12-01 10:02\"`}},
		{"streamed with split arguments", `{"model":"mock-agent","stream":true,"messages":[{"role":"user","content":"remind me"}],` + tools + `}`, 200,
			[]string{`"reasoning_content":"按脚本应答。"`, `"arguments":"{\"d"`, `"finish_reason":"tool_calls"`, "data: [DONE]"}},
		{"after the result, text", `{"model":"mock-agent","messages":[{"role":"user","content":"校车"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"shuttle__next","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"{\"error\":\"boom\"}"}],` + tools + `}`, 200,
			[]string{"`shuttle__next` 没有成功:boom"}},
		{"a shown form is said, not echoed as JSON", `{"model":"mock-agent","messages":[{"role":"user","content":"表单"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"ui__render","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"{\"shown\":true,\"document\":{\"ui\":1}}"}],"tools":[{"type":"function","function":{"name":"ui__render","parameters":{}}}]}`, 200,
			[]string{"表单在上面"}},
		{"tool not offered", `{"model":"mock-agent","messages":[{"role":"user","content":"remember milk"}]}`, 200,
			[]string{"我想调用 `memory__remember`"}},
		{"who without context", `{"model":"mock-agent","messages":[{"role":"user","content":"who"}]}`, 200, []string{"没有注入任何 <context> 块"}},
		{"who echoes the blocks", `{"model":"mock-agent","messages":[{"role":"system","content":"x <context source=\"memory\" kind=\"data\">\nI like tea\n</context> y"},{"role":"user","content":"who"}]}`, 200,
			[]string{`<context source=\"memory\" kind=\"data\">\nI like tea\n</context>`}},
		{"remote plugin loads the plugins tools first", `{"model":"mock-agent","messages":[{"role":"user","content":"加一个远程插件 https://canteen.example.org/mcp"}],"tools":[{"type":"function","function":{"name":"plugins__use","parameters":{}}}]}`, 200,
			[]string{`"name":"plugins__use"`}},
		{"remote plugin opens the sheet for the message's URL", `{"model":"mock-agent","messages":[{"role":"user","content":"加一个远程插件 https://canteen.example.org/mcp"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"plugins__use","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"{}"}],"tools":[{"type":"function","function":{"name":"plugins__use","parameters":{}}},{"type":"function","function":{"name":"plugins__installRemote","parameters":{}}}]}`, 200,
			[]string{`"name":"plugins__installRemote"`, `\"url\":\"https://canteen.example.org/mcp\"`}},
		{"echo says the message's text verbatim", `{"model":"mock-agent","messages":[{"role":"user","content":"回显: <script>x</script> 校车"}]}`, 200,
			[]string{`"content":"<script>x</script> 校车"`}},
		{"render shows the message's document", `{"model":"mock-agent","messages":[{"role":"user","content":"render: {\"ui\":1}"}],"tools":[{"type":"function","function":{"name":"ui__render","parameters":{}}}]}`, 200,
			[]string{`"name":"ui__render"`, `"arguments":"{\"document\":{\"ui\":1}}"`}},
		{"call calls the message's tool with its arguments", `{"model":"mock-agent","messages":[{"role":"user","content":"调用: shuttle__next {\"count\":2}"}],` + tools + `}`, 200,
			[]string{`"name":"shuttle__next"`, `"arguments":"{\"count\":2}"`}},
		{"call calls several tools in order, one a round", `{"model":"mock-agent","messages":[{"role":"user","content":"调用: shuttle__next {} 调用: schedule__remind {\"text\":\"x\"}"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"shuttle__next","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"{}"}],` + tools + `}`, 200,
			[]string{`"name":"schedule__remind"`, `"arguments":"{\"text\":\"x\"}"`}},
		{"wrong model", `{"model":"gpt-4","messages":[]}`, 404, []string{`"model_not_found"`}},
		{"not JSON", `{`, 400, []string{`"invalid_request_error"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, srv, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("missing %s in %s", w, body)
				}
			}
		})
	}
	res, _ := http.Get(srv.URL + "/v1/models")
	var models struct{ Data []struct{ ID string } }
	json.NewDecoder(res.Body).Decode(&models)
	res.Body.Close()
	if len(models.Data) != 1 || models.Data[0].ID != Model {
		t.Errorf("models %+v", models)
	}
}
