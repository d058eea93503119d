package api

import (
	"errors"
	"net/http"
	"testing"

	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/interp"
)

// A tool that failed for want of a campus session is not_signed_in with the service, so that a
// face can point to its own sign-in; a plugin's message that merely says "not signed in" stays
// tool_failed.
func TestClassifyNotSignedIn(t *testing.T) {
	nse := &campus.NotSignedInError{Service: "card"}
	tests := []struct {
		name    string
		err     error
		status  int
		code    string
		service string
	}{
		{"built-in without a card session", interp.Wrap("tool", "campus card: "+nse.Error(), nse), http.StatusConflict, "not_signed_in", "card"},
		{"wrapped twice", interp.Wrap("tool", "x", errors.Join(errors.New("y"), &campus.NotSignedInError{Service: "its", Reason: "expired"})), http.StatusConflict, "not_signed_in", "its"},
		{"a plugin's own words", &interp.Error{Kind: "check", Msg: "not signed in to card: run harness campus login card"}, http.StatusUnprocessableEntity, "tool_failed", ""},
	}
	for _, tc := range tests {
		e := classify(tc.err)
		if e.Status != tc.status || e.Code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, e.Status, e.Code, tc.status, tc.code)
			continue
		}
		if got, _ := e.Extra["service"].(string); got != tc.service {
			t.Errorf("%s: service %q, want %q", tc.name, got, tc.service)
		}
		if got, _ := e.Extra["title"].(string); tc.service == "card" && got != "校园卡 Campus Card" {
			t.Errorf("%s: title %q", tc.name, got)
		}
	}
}
