package cli

import (
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/pkuinfo/harness/agent/mock"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdMockLLM is the script command `mockllm [STATUS]`: it serves the mock
// model on a loopback port for the rest of the script and points
// $OPENAI_BASE_URL and $HARNESS_MODEL at it; with STATUS every request is
// answered with that HTTP status instead (a provider failing).
func cmdMockLLM(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 {
		ts.Fatalf("usage: mockllm [STATUS]")
	}
	note := mock.Route{Name: "note", Words: []string{"note"}, Plan: func(s *mock.State) mock.Step {
		if s.Round() == 0 {
			return mock.Step{Calls: []mock.Call{{Tool: "notes__add", Args: `{"text":"买牛奶"}`}}}
		}
		return mock.Step{Text: "done: " + s.Last()}
	}}
	var h http.Handler = mock.New(mock.Options{Routes: []mock.Route{note}})
	if len(args) == 1 {
		status, err := strconv.Atoi(args[0])
		if err != nil {
			ts.Fatalf("mockllm: bad status %q", args[0])
		}
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(status)
			w.Write([]byte(`{"error":{"message":"the mock is failing on purpose","type":"server_error"}}`))
		})
	}
	srv := httptest.NewServer(h)
	ts.Defer(srv.Close)
	ts.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	ts.Setenv("HARNESS_MODEL", mock.Model)
	ts.Setenv("OPENAI_API_KEY", "")
}
