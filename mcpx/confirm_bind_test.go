package mcpx

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConfirmationBoundToItsCall: the answer to a confirmation (a retry carrying requestState)
// counts only on the tool it was asked for, from the client it was asked of. A client that
// sends the id of a confirmation pending elsewhere — another client's, or a write's id on a
// read tool — must not run that call.
func TestConfirmationBoundToItsCall(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	s := NewServer(e.b, Options{})
	// The asker cannot elicit: its write is refused to it, and its confirmation stays pending.
	asker := connect(t, s, nil)
	res, err := asker.CallTool(ctx, &mcp.CallToolParams{Name: "notes__add", Arguments: map[string]any{"text": "x"}})
	if err != nil || !res.IsError {
		t.Fatalf("the write of a client that cannot elicit: %v %v", res, err)
	}
	pending := e.h.Pending()
	if len(pending) != 1 {
		t.Fatalf("%d confirmations pending, want 1", len(pending))
	}
	cid := pending[0].ID
	accept := mcp.InputResponseMap{confirmKey: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}}
	other := connect(t, s, nil)
	for _, tc := range []struct {
		who  *mcp.ClientSession
		tool string
	}{
		{other, "notes__echo"}, // another client, another tool
		{other, "notes__add"},  // another client, the same tool
		{asker, "notes__echo"}, // the asker, another tool
	} {
		res, err := tc.who.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"word": "hi"},
			RequestState: cid, InputResponses: accept})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			t.Errorf("%s with another call's requestState: ran (%s)", tc.tool, text(res))
		}
	}
	if n := len(e.h.Pending()); n != 1 {
		t.Errorf("%d confirmations pending after the forged answers, want the asker's 1 untouched", n)
	}
	entries, err := e.h.Audit(ctx, "notes", 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if en.Tool == "add" && en.Outcome == "ok" {
			t.Fatalf("notes.add ran on a forged answer: %+v", en)
		}
	}
}
