package agentapi

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/agent"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/store"
)

// BenchmarkFirstByteToEvent measures, over real HTTP on loopback, the time
// from the provider writing its first chunk to the API's client reading
// the first "text" event of the turn (goal ≤ 5 ms, docs/PERFORMANCE.md "The assistant"). The metric is
// ms/first-event; ns/op is the whole turn.
func BenchmarkFirstByteToEvent(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	h, err := host.New(db)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := h.InstallOfficial(ctx); err != nil {
		b.Fatal(err)
	}
	sent := make(chan time.Time, 1)
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		sent <- time.Now()
		w.Write([]byte(`data: {"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"好"}}]}` + "\n\n"))
		w.(http.Flusher).Flush()
		w.Write([]byte(`data: {"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"))
	}))
	defer model.Close()
	p, _ := agent.NewOpenAI(agent.Config{BaseURL: model.URL + "/v1", Model: "m"}, nil)
	a := &agent.Agent{Host: h, Provider: p, Conversations: agent.NewConversations(db, nil)}
	s := api.New(h, api.Options{})
	Register(s, a)
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, _ := a.Conversations.Create(ctx, "bench")
	var total time.Duration
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/conversations/"+c.ID+"/messages", strings.NewReader(`{"text":"hi"}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(res.Body)
		var t0 time.Time
		for sc.Scan() {
			if sc.Text() == "event: text" {
				at := time.Now()
				t0 = <-sent
				total += at.Sub(t0)
			}
			if sc.Text() == "event: done" {
				break
			}
		}
		res.Body.Close()
		if t0.IsZero() {
			b.Fatal("no text event")
		}
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/first-event")
}
