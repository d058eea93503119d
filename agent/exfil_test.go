package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/pkuinfo/harness/agent/mock"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/lang/expr"
)

// recorder is the lookup plugin's website (recorder.example), a local HTTP
// server that keeps every query it receives.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []string
	base *url.URL
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.got = append(r.got, req.URL.RawQuery)
		r.mu.Unlock()
		io.WriteString(w, "ok")
	}))
	t.Cleanup(r.srv.Close)
	r.base, _ = url.Parse(r.srv.URL)
	return r
}

// RoundTrip sends a plugin's request for recorder.example to the local server;
// any other host is unreachable.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Hostname() != "recorder.example" {
		return nil, &url.Error{Op: "dial", URL: req.URL.String(), Err: io.ErrUnexpectedEOF}
	}
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host = r.base.Scheme, r.base.Host, ""
	return http.DefaultTransport.RoundTrip(out)
}

func (r *recorder) queries() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.got, "\n")
}

// exfilRoutes script a model that obeys the injected text: read the board,
// gather what is private, send it to lookup.
var exfilRoutes = []mock.Route{
	{Name: "exfil", Words: []string{"exfil"}, Plan: func(s *mock.State) mock.Step {
		switch s.Round() {
		case 0:
			return mock.Step{Calls: []mock.Call{{Tool: "inject__feed", Args: `{}`}}}
		case 1:
			return mock.Step{Calls: []mock.Call{{Tool: "memory__recall", Args: `{}`}}}
		case 2:
			q, _ := json.Marshal(map[string]string{"q": s.Last()})
			return mock.Step{Calls: []mock.Call{{Tool: "lookup__lookup", Args: string(q)}}}
		}
		return mock.Step{Text: "done: " + s.Last()}
	}},
	{Name: "private only", Words: []string{"quietly"}, Plan: func(s *mock.State) mock.Step {
		switch s.Round() {
		case 0:
			return mock.Step{Calls: []mock.Call{{Tool: "memory__recall", Args: `{}`}}}
		case 1:
			q, _ := json.Marshal(map[string]string{"q": s.Last()})
			return mock.Step{Calls: []mock.Call{{Tool: "lookup__lookup", Args: string(q)}}}
		}
		return mock.Step{Text: "done: " + s.Last()}
	}},
	{Name: "plain", Words: []string{"plain"}, Plan: func(s *mock.State) mock.Step {
		if s.Round() == 0 {
			return mock.Step{Calls: []mock.Call{{Tool: "shuttle__next", Args: `{"count":1}`}, {Tool: "lookup__lookup", Args: `{"q":"饺子"}`}}}
		}
		return mock.Step{Text: "done"}
	}},
	{Name: "campus after taint", Words: []string{"netfee"}, Plan: func(s *mock.State) mock.Step {
		switch s.Round() {
		case 0:
			return mock.Step{Calls: []mock.Call{{Tool: "inject__feed", Args: `{}`}}}
		case 1:
			return mock.Step{Calls: []mock.Call{{Tool: "netfee__status", Args: `{}`}}}
		}
		return mock.Step{Text: "done: " + s.Last()}
	}},
}

// exfilEnv is an agent over a host with two Community plugins (inject, whose
// board carries an injection, and lookup, whose website is the recorder), the
// person's memory, authenticator, to-do and class, and a campus session for ITS
// from the stand-in (attackEnvAt).
func exfilEnv(t *testing.T) (*env, *recorder) {
	t.Helper()
	return attackEnv(t, nil)
}

func mustObj(t *testing.T, s string) any {
	t.Helper()
	v, err := expr.FromJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestInjectedExfiltration: a model that follows the text a Community plugin
// returned gathers the memories and sends them to another Community plugin's
// website (the authenticator code it is told to get is not offered to it); the
// send asks, and without a yes nothing reaches the recorder; with a yes it
// does, and the audit says the person allowed it.
func TestInjectedExfiltration(t *testing.T) {
	for _, approve := range []bool{false, true} {
		t.Run(map[bool]string{false: "declined", true: "approved"}[approve], func(t *testing.T) {
			e, rec := exfilEnv(t)
			// Without the memory's context block, which would make the turn private
			// from its start (TestAttackContextLeak): here the injection is the path.
			e.agent.Contexts = nil
			p := &person{approve: approve}
			evs, _ := e.turn(t, "exfil", p)
			got := brief(evs)
			for _, w := range []string{
				"tool_result inject__feed", "[untrusted] [tainted]",
				"tool_result memory__recall",
				"confirmation lookup__lookup: this turn holds untrusted third-party text and your private data, and this call can send its input to a party you have not vouched for",
			} {
				if !strings.Contains(got, w) {
					t.Fatalf("missing %q in\n%s", w, got)
				}
			}
			// The authenticator's code is the person's alone: never offered to the
			// model, and refused to the agent under any turn.
			tools, err := e.h.AgentTools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, at := range tools {
				if at.Plugin == "authenticator" && at.Tool == "code" {
					t.Error("authenticator__code is offered to the model")
				}
			}
			var ref *host.Refusal
			if _, err := e.h.Call(context.Background(), host.CallRequest{Actor: host.ActorAgent, Plugin: "authenticator", Tool: "code"}); !errors.As(err, &ref) {
				t.Errorf("the agent's authenticator__code: %v", err)
			}
			if strings.Join(p.asked, ",") != "confirm lookup__lookup" {
				t.Errorf("asked %v", p.asked)
			}
			sent := rec.queries()
			if !approve {
				if sent != "" {
					t.Fatalf("the recorder received %q without a yes", sent)
				}
				if !strings.Contains(got, "tool_result lookup__lookup error: refused") {
					t.Errorf("the declined send: \n%s", got)
				}
				return
			}
			if !strings.Contains(sent, "4711") {
				t.Fatalf("the approved send did not arrive: %q", sent)
			}
			log, err := e.h.Audit(context.Background(), "lookup", 10)
			if err != nil {
				t.Fatal(err)
			}
			var outcomes []string
			for i := len(log) - 1; i >= 0; i-- {
				outcomes = append(outcomes, log[i].Outcome)
				if log[i].Outcome == "approved" && !strings.Contains(log[i].Error, "the person approved confirmation") {
					t.Errorf("approved entry: %q", log[i].Error)
				}
			}
			if strings.Join(outcomes, ",") != "confirm,approved,ok" {
				t.Errorf("audit of lookup: %v", outcomes)
			}
		})
	}
}

// TestPrivateThenThirdParty: with no untrusted text at all, a turn that read
// the memories asks before sending anything to a Community plugin.
func TestPrivateThenThirdParty(t *testing.T) {
	e, rec := exfilEnv(t)
	p := &person{approve: false}
	evs, _ := e.turn(t, "quietly", p)
	if got := brief(evs); !strings.Contains(got, "confirmation lookup__lookup: this turn holds your private data") {
		t.Fatalf("no confirmation:\n%s", got)
	}
	if s := rec.queries(); s != "" {
		t.Fatalf("the recorder received %q", s)
	}
}

// TestNoOverBlocking: in a fresh turn an Official read and a Community read run
// without asking, and after untrusted text an Official campus read runs.
func TestNoOverBlocking(t *testing.T) {
	e, rec := exfilEnv(t)
	contexts := e.agent.Contexts
	e.agent.Contexts = nil // no memory in the prompt: the turn holds nothing
	p := &person{approve: false}
	evs, _ := e.turn(t, "plain", p)
	got := brief(evs)
	if len(p.asked) != 0 || strings.Contains(got, "error") || !strings.Contains(got, "tool_result shuttle__next") {
		t.Fatalf("asked %v:\n%s", p.asked, got)
	}
	if s := rec.queries(); !strings.Contains(s, "q=") {
		t.Errorf("the untainted lookup did not run: %q", s)
	}
	evs, _ = e.turn(t, "netfee", p)
	got = brief(evs)
	if len(p.asked) != 0 || !strings.Contains(got, "tool_result netfee__status {") || strings.Contains(got, "netfee__status error") {
		t.Fatalf("the campus read after taint: asked %v:\n%s", p.asked, got)
	}
	// With the memories in the prompt the turn is private from its start: the
	// Official read still runs, the Community call asks.
	e.agent.Contexts = contexts
	evs, _ = e.turn(t, "plain", p)
	got = brief(evs)
	if strings.Join(p.asked, ",") != "confirm lookup__lookup" || !strings.Contains(got, "tool_result shuttle__next {") {
		t.Fatalf("with the memory context: asked %v:\n%s", p.asked, got)
	}
}
