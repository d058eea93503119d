package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/agent/builtins"
	"github.com/pkuinfo/harness/agent/mock"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/host/store"
)

// fixedNow is the clock of every test: Tuesday 2026-12-01 10:00 Beijing.
var fixedNow = time.Date(2026, 12, 1, 10, 0, 0, 0, beijing)

func clock() time.Time { return fixedNow }

// testRoutes are the mock routes the tests add for the notes plugin.
var testRoutes = []mock.Route{
	{Name: "taint", Words: []string{"taint"}, Plan: func(s *mock.State) mock.Step {
		switch s.Round() {
		case 0:
			return mock.Step{Calls: []mock.Call{{Tool: "notes__feed", Args: `{}`}}}
		case 1:
			return mock.Step{Calls: []mock.Call{{Tool: "notes__add", Args: `{"text":"pwned"}`}}}
		}
		return mock.Step{Text: "done: " + s.Last()}
	}},
	{Name: "note", Words: []string{"note"}, Plan: func(s *mock.State) mock.Step {
		if s.Round() == 0 {
			return mock.Step{Calls: []mock.Call{{Tool: "notes__add", Args: `{"text":"买牛奶"}`}}}
		}
		return mock.Step{Text: "done: " + s.Last()}
	}},
	{Name: "secret", Words: []string{"secret"}, Plan: func(s *mock.State) mock.Step {
		if s.Round() == 0 {
			return mock.Step{Calls: []mock.Call{{Tool: "notes__secret", Args: `{}`}}}
		}
		return mock.Step{Text: "done: " + s.Last()}
	}},
	{Name: "bus card", Words: []string{"buscard"}, Plan: func(s *mock.State) mock.Step {
		if s.Round() == 0 {
			return mock.Step{Calls: []mock.Call{{Tool: "dashboard__upsertWidget", Args: `{"widget":"shuttle.next","size":"sm"}`}}}
		}
		return mock.Step{Text: "done: " + s.Last()}
	}},
	{Name: "bad card", Words: []string{"badcard"}, Plan: func(s *mock.State) mock.Step {
		if s.Round() == 0 {
			return mock.Step{Calls: []mock.Call{{Tool: "dashboard__upsertWidget", Args: `{"widget":"shuttle.nope"}`}}}
		}
		return mock.Step{Text: "done: " + s.Last()}
	}},
	{Name: "loop", Words: []string{"forever"}, Plan: func(s *mock.State) mock.Step {
		return mock.Step{Calls: []mock.Call{{Tool: "shuttle__next", Args: `{"count":1}`}}}
	}},
}

// env is an agent on a fresh data directory with the official plugins and
// the notes test plugin installed, talking to the mock model over HTTP.
type env struct {
	h     *host.Host
	db    *store.DB
	agent *Agent
	mock  *mock.Server
	srv   *httptest.Server
	wrap  func(http.Handler) http.Handler // set before newEnv to put a fault in front of the mock
}

func newEnv(t *testing.T, wrap func(http.Handler) http.Handler) *env {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := host.New(db, host.WithClock(clock), builtin.Option(builtins.All()...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.InstallOfficial(ctx); err != nil {
		t.Fatal(err)
	}
	src, _ := filepath.Abs("testdata/notes")
	rv, err := h.Review(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, src, rv.Hash); err != nil {
		t.Fatal(err)
	}
	m := mock.New(mock.Options{Routes: testRoutes, Now: clock})
	var handler http.Handler = m
	if wrap != nil {
		handler = wrap(m)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	p, err := NewOpenAI(Config{BaseURL: srv.URL + "/v1", Model: mock.Model}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{Host: h, Provider: p, Conversations: NewConversations(db, clock), Contexts: BuiltinContexts(h)}
	return &env{h: h, db: db, agent: a, mock: m, srv: srv}
}

// person answers confirmations with approve and questions with answer.
type person struct {
	approve bool
	answer  map[string]any
	mu      sync.Mutex
	asked   []string // "confirm TOOL", "question KIND"
}

func (p *person) Confirm(ctx context.Context, ev *Event) (bool, error) {
	p.mu.Lock()
	p.asked = append(p.asked, "confirm "+ev.Tool)
	p.mu.Unlock()
	return p.approve, nil
}

func (p *person) Answer(ctx context.Context, ev *Event) (map[string]any, error) {
	p.mu.Lock()
	p.asked = append(p.asked, "question "+ev.Kind)
	p.mu.Unlock()
	return p.answer, nil
}

// turn runs one message in a new conversation and returns its events.
func (e *env) turn(t *testing.T, text string, p Person) ([]Event, error) {
	t.Helper()
	c, err := e.agent.Conversations.Create(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	err = e.agent.Turn(context.Background(), c.ID, text, p, func(ev Event) { evs = append(evs, ev) })
	return evs, err
}

// brief renders events one per line, text deltas joined, for comparison.
func brief(evs []Event) string {
	var b strings.Builder
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			b.WriteString("text " + text.String() + "\n")
			text.Reset()
		}
	}
	for _, ev := range evs {
		switch ev.Type {
		case "text":
			text.WriteString(ev.Text)
			continue
		case "reasoning":
			continue
		}
		flush()
		switch ev.Type {
		case "tool_call":
			b.WriteString("tool_call " + ev.Tool + " " + string(ev.Input) + "\n")
		case "tool_result":
			line := "tool_result " + ev.Tool
			if ev.Error != "" {
				line += " error: " + ev.Error
			} else {
				line += " " + clip(string(ev.Result), 60)
			}
			if ev.Untrusted {
				line += " [untrusted]"
			}
			if ev.Tainted {
				line += " [tainted]"
			}
			b.WriteString(line + "\n")
		case "confirmation":
			b.WriteString("confirmation " + ev.Tool + ": " + ev.Reason + "\n")
		case "question":
			b.WriteString("question " + ev.Kind + ": " + ev.Message + "\n")
		case "error":
			b.WriteString("error " + ev.Kind + ": " + ev.Message + "\n")
		case "done":
			b.WriteString("done " + ev.Stop + "\n")
		}
	}
	flush()
	return b.String()
}

func mustJSONText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
