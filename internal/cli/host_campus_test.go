package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host/abilities"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// The campus, otp, todos and schedules routes that host_campus.go and
// host_otp.go add to `harness serve`, on a Host opened as serve opens it.
func TestAbilityRoutes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, db, err := openHost(ctx, &hostFlags{data: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := api.New(h, api.Options{})
	for _, s := range []ServeSetup{campusRoutes, abilityServe} {
		if err := s(ctx, h, srv); err != nil {
			t.Fatal(err)
		}
	}
	// One timetable entry, written as a plugin would (no declarations checked here).
	entry, _ := expr.FromJSON([]byte(`{"entries":[{"id":"m","title":"高等数学","weekday":2,"start":"08:00","end":"09:50"}]}`))
	if _, err := abilities.New(db).Call(ctx, interp.AbilityCall{Plugin: "x", Tool: "t", Group: "timetable", Op: "upsert", Args: entry, ToolEffect: plugin.EffectWrite}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	tests := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/v1/otp", "", 200, `{"set":false}`},
		{"PUT", "/v1/otp", `{"secret":"JBSWY3DP1"}`, 400, `{"error":{"code":"bad_request","message":"otp secret: character '1' at 9 is not Base32 (A–Z, 2–7)"}}`},
		{"PUT", "/v1/otp", `{"secret":"JBSWY3DPEHPK3PXP"}`, 200, `{"set":true}`},
		{"GET", "/v1/otp", "", 200, `{"set":true}`},
		{"DELETE", "/v1/otp", "", 200, `{"set":false}`},
		{"PUT", "/v1/campus/treehole", `{"token":"jwt","cookie":"pku_uid=1"}`, 200, `{"holds":"token; cookies pku_uid","service":"treehole","signedIn":true}`},
		{"PUT", "/v1/campus/treehole", `{"cookie":"pku_uid=1"}`, 400, `{"error":{"code":"bad_request","message":"campus login treehole: treehole signs requests with a token: give --token"}}`},
		{"PUT", "/v1/campus/its", `{"password":"x"}`, 400, `{"error":{"code":"bad_request","message":"the body is not the JSON this route takes: json: unknown field \"password\""}}`},
		{"DELETE", "/v1/campus/nowhere", "", 404, `{"error":{"code":"not_found","message":"campus logout \"nowhere\": unknown campus service (known: card, its, treehole, blackboard, elective, cwfw, cwpay, bdkj, library, library-space)"}}`},
		{"DELETE", "/v1/campus/treehole", "", 200, `{"service":"treehole","signedIn":false}`},
		{"GET", "/v1/todos", "", 200, `{"hasMore":false,"items":[]}`},
		{"GET", "/v1/schedules", "", 200, `{"items":[]}`},
		{"GET", "/v1/timetable", "", 200, `{"entries":[{"id":"m","title":"高等数学","weekday":2,"start":"08:00","end":"09:50","location":null,"teacher":null,"note":null,"weeks":[],"source":"x"}]}`},
		{"GET", "/v1/timetable?weekday=3", "", 200, `{"entries":[]}`},
		{"GET", "/v1/timetable?weekday=8", "", 400, `{"error":{"code":"bad_request","message":"weekday \"8\": want 1 (Monday) to 7"}}`},
		{"GET", "/v1/schedules/7/runs", "", 404, `{"error":{"code":"not_found","message":"no schedule 7"}}`},
		{"GET", "/v1/schedules/x/runs", "", 400, `{"error":{"code":"bad_request","message":"schedule id \"x\" is not a number"}}`},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
		if tc.method != "GET" { // every state change says JSON, an empty body too
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := strings.TrimSpace(string(b)); resp.StatusCode != tc.status || got != tc.want {
			t.Errorf("%s %s: %d %s\nwant %d %s", tc.method, tc.path, resp.StatusCode, got, tc.status, tc.want)
		}
	}
	// The campus list shows every service and never a secret.
	resp, err := http.Get(ts.URL + "/v1/campus")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(b), `{"account":null,"services":[{"service":"card","title":"校园卡 Campus Card","base":"https://bdcard.pku.edu.cn","signedIn":false}`) ||
		strings.Count(string(b), `"service":`) != 10 || strings.Contains(string(b), "jwt") {
		t.Errorf("GET /v1/campus: %s", b)
	}
}
