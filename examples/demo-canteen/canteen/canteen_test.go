package canteen

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAuthorize: the template's bearer check, exact status and body.
func TestAuthorize(t *testing.T) {
	h := Authorize("tok", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	tests := []struct{ name, header, want string }{
		{"none", "", `{"jsonrpc":"2.0","error":{"code":-32001,"message":"unauthorized"},"id":null}` + "\n"},
		{"wrong", "Bearer nope", `{"jsonrpc":"2.0","error":{"code":-32001,"message":"unauthorized"},"id":null}` + "\n"},
		{"right", "Bearer tok", "ok"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/mcp", strings.NewReader("{}"))
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Body.String() != tc.want {
				t.Errorf("got %d %q, want %q", w.Code, w.Body.String(), tc.want)
			}
		})
	}
}

// TestReserveSeat: three seats per canteen, then an error; one seat per name.
func TestReserveSeat(t *testing.T) {
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := NewServer(&Seats{taken: map[string][]string{}}).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tests := []struct{ name, who, want string }{
		{"first", "甲", `{"canteen":"家园","left":2,"seat":1}`},
		{"twice", "甲", "甲 already has a seat in 家园"},
		{"second", "乙", `{"canteen":"家园","left":1,"seat":2}`},
		{"third", "丙", `{"canteen":"家园","left":0,"seat":3}`},
		{"full", "丁", "家园 is full (3 seats)"},
	}
	for _, tc := range tests {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "reserveSeat", Arguments: map[string]any{"canteen": "家园", "name": tc.who}})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Content[0].(*mcp.TextContent).Text
		if got != tc.want {
			t.Errorf("%s: got %q (isError %v), want %q", tc.name, got, res.IsError, tc.want)
		}
	}
}
