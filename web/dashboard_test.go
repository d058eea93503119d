package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/agent/builtins"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/lang/expr"
)

// dashboardHost is a host with the assistant's built-ins (the dashboard among them) and the
// official shuttle plugin, its API with the web app's routes, and a dashboard whose second is
// a millisecond (the shuttle widget's 1m refresh is then 60 ms).
func dashboardHost(t *testing.T, opts ...host.Option) (*host.Host, *httptest.Server) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := host.New(db, append(opts, builtin.Option(builtins.All()...))...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.InstallOfficial(ctx); err != nil { // the built-ins and the official documents
		t.Fatal(err)
	}
	srv := api.New(h, api.Options{})
	routes(srv, h, &Dashboard{Host: h, Unit: time.Millisecond})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return h, ts
}

func addCard(t *testing.T, h *host.Host, input string) string {
	t.Helper()
	in, err := expr.FromJSON([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Call(context.Background(), host.CallRequest{Actor: host.ActorUser, Plugin: "dashboard", Tool: "upsertWidget", Input: in})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.Value.(*expr.Object).Get("id")
	return id.(string)
}

// TestDashboardEvents follows two shuttle cards and a card without a refresh interval: the
// ready event gives each card's interval, refresh events come for the refreshing cards only,
// each refresh re-reads the shuttle's data source into the host's cache (its fetch time moves
// on), and the two cards that share the source run its tool once per interval, not twice.
func TestDashboardEvents(t *testing.T) {
	h, ts := dashboardHost(t)
	a := addCard(t, h, `{"widget":"shuttle.next","size":"md"}`)
	b := addCard(t, h, `{"widget":"shuttle.next","size":"sm"}`)
	doc := `{"ui":1,"kind":"widget","title":"班次","description":"no refresh","sizes":["sm"],"root":{"type":"Text","text":"班次"}}`
	c := addCard(t, h, fmt.Sprintf(`{"document":%q,"tool":"shuttle.next","size":"sm"}`, doc))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	body := fmt.Sprintf(`{"cards":[%q,%q,%q]}`, a, b, c)
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/ui/dashboard/events", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	sc := bufio.NewScanner(resp.Body)
	next := func() DashboardEvent {
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev DashboardEvent
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("event %q: %v", line, err)
			}
			return ev
		}
		t.Fatalf("the stream ended: %v", sc.Err())
		return DashboardEvent{}
	}
	ready := next()
	want := []CardRefresh{{a, 60}, {b, 60}, {c, 0}}
	if ready.Type != "ready" || fmt.Sprint(ready.Cards) != fmt.Sprint(want) {
		t.Fatalf("ready %+v; want cards %v", ready, want)
	}
	count := map[string]int{}
	var fetched []time.Time
	for range 6 {
		ev := next()
		if ev.Type != "refresh" {
			t.Fatalf("event %+v", ev)
		}
		count[ev.Card]++
		if len(ev.Sources) != 1 || ev.Sources[0].Source != "next" || ev.Sources[0].Error != "" || ev.Sources[0].FetchedAt.IsZero() {
			t.Fatalf("refresh of %s: sources %+v", ev.Card, ev.Sources)
		}
		if ev.Card == a {
			fetched = append(fetched, ev.Sources[0].FetchedAt)
		}
	}
	cancel()
	if count[c] != 0 || count[a] < 2 || count[b] < 2 {
		t.Errorf("refresh events per card %v; want ≥ 2 for %s and %s, none for %s", count, a, b, c)
	}
	if !fetched[len(fetched)-1].After(fetched[0]) {
		t.Errorf("the data source was not refreshed: fetched at %v", fetched)
	}
	audit, err := h.Audit(context.Background(), "shuttle", 100)
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, e := range audit {
		if e.Tool == "next" {
			runs++
		}
	}
	// One run per interval for the two cards together (the last interval may have begun).
	if rounds := max(count[a], count[b]); runs > rounds+1 {
		t.Errorf("the shared source ran %d times in %d intervals", runs, rounds)
	}
}

// TestDashboardEventsAttacks sends what a hostile page or a broken client would: another
// origin, a form post, no body, cards that are not on the board, too many, twice the same,
// unknown fields. Each is refused before a stream opens.
func TestDashboardEventsAttacks(t *testing.T) {
	h, ts := dashboardHost(t)
	a := addCard(t, h, `{"widget":"shuttle.next"}`)
	many := make([]string, MaxCards+1)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprint("w", i))
	}
	cases := []struct {
		name, ctype, body string
		hdr               map[string]string
		status            int
		want              string
	}{
		{"other origin", "application/json", `{"cards":["` + a + `"]}`, map[string]string{"Origin": "https://evil.example"}, 403, "cross_site"},
		{"cross-site fetch", "application/json", `{"cards":["` + a + `"]}`, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "cross_site"},
		{"form post", "application/x-www-form-urlencoded", "cards=" + a, nil, 415, ""},
		{"text/plain", "text/plain", `{"cards":["` + a + `"]}`, nil, 415, ""},
		{"no body", "application/json", ``, nil, 400, "cards"},
		{"empty object", "application/json", `{}`, nil, 400, "cards"},
		{"not on the board", "application/json", `{"cards":["` + a + `","w0"]}`, nil, 400, `cards[1]: there is no card \"w0\"`},
		{"twice", "application/json", `{"cards":["` + a + `","` + a + `"]}`, nil, 400, "named twice"},
		{"too many", "application/json", `{"cards":[` + strings.Join(many, ",") + `]}`, nil, 400, "at most 40"},
		{"unknown field", "application/json", `{"cards":["` + a + `"],"every":"1s"}`, nil, 400, "unknown field"},
		{"cards not a list", "application/json", `{"cards":"` + a + `"}`, nil, 400, "cards"},
		{"two values", "application/json", `{"cards":["` + a + `"]}{}`, nil, 400, "more than one"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/ui/dashboard/events", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.ctype)
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
				t.Errorf("%d %s; want %d with %q", resp.StatusCode, b, tc.status, tc.want)
			}
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Errorf("a stream opened")
			}
		})
	}
}

// down answers every request as a server that is down.
type down struct{}

func (down) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 503, Status: "503 Service Unavailable", Header: http.Header{"Content-Type": {"text/html"}},
		Body: io.NopCloser(strings.NewReader("<html>down</html>")), Request: r}, nil
}

// TestDrawFailedCard draws the classrooms widget while the portal is down: the reply keeps the
// widget's title in the viewer's language, gives the plugin's own message as the error and the
// place in its file only as the detail.
func TestDrawFailedCard(t *testing.T) {
	_, ts := dashboardHost(t, host.WithTransport(down{}))
	for _, tc := range []struct{ locale, title string }{{"zh-Hans", "空闲教室"}, {"en", "Free classrooms"}} {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/ui/draw", strings.NewReader(`{"plugin":"classrooms","widget":"overview","locale":"`+tc.locale+`"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var rep DrawReply
		err = json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if rep.State != "error" || rep.Title != tc.title || rep.Error != "空闲教室查询未成功:所有教学楼都没有回应" ||
			!strings.HasPrefix(rep.Detail, "tools/overview.yaml:") || !strings.HasSuffix(rep.Detail, rep.Error) {
			t.Errorf("%s: %+v", tc.locale, rep)
		}
	}
}

// TestDrawToolCard draws two dashboard cards of a genui document bound to a tool, as
// dashboard__upsertWidget accepts them (the result declared as the data source "tool"): one
// draws the shuttle's answer; one asks the classrooms plugin for a building it does not know and
// fails with the plugin's own message, the place in its file only in the detail. A card that
// declares another source is refused.
func TestDrawToolCard(t *testing.T) {
	h, _ := dashboardHost(t, host.WithTransport(down{}))
	doc := `{"ui":1,"kind":"widget","title":"班次","description":"d","data":{"tool":{"source":"tool"}},"root":{"type":"Text","text":"${len(data.tool.directions) > 0 ? 'ok' : 'none'}"}}`
	addCard(t, h, fmt.Sprintf(`{"document":%q,"tool":"shuttle.next"}`, doc)) // what upsertWidget validates
	rep, err := Draw(context.Background(), h, DrawRequest{Document: json.RawMessage(doc), Tool: "shuttle.next", Locale: "en"})
	if err != nil || rep.State != "ok" || rep.Title != "班次" {
		t.Fatalf("%+v %v", rep, err)
	}
	if b, _ := json.Marshal(rep.Drawn.Root); string(b) != `{"text":"ok","type":"Text"}` {
		t.Errorf("drawn %s (problems %v)", b, rep.Drawn.Problems)
	}
	rooms := `{"ui":1,"kind":"widget","title":"五教","description":"d","data":{"tool":{"source":"tool"}},"root":{"type":"Text","text":"${data.tool.building}"}}`
	rep, err = Draw(context.Background(), h, DrawRequest{Document: json.RawMessage(rooms), Tool: "classrooms.free", Args: map[string]any{"building": "五教"}})
	if err != nil || rep.State != "error" || !strings.HasPrefix(rep.Error, "没有叫「五教」的教学楼") || !strings.HasPrefix(rep.Detail, "tools/free.yaml:") {
		t.Errorf("%+v %v", rep, err)
	}
	other := strings.Replace(doc, `{"source":"tool"}`, `{"source":"next"}`, 1)
	if _, err := Draw(context.Background(), h, DrawRequest{Document: json.RawMessage(other), Tool: "shuttle.next"}); err == nil {
		t.Errorf("a card bound to a tool read another source")
	}
}
