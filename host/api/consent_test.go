package api

import (
	"errors"
	"net/http"
	"testing"

	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/interp"
)

// A tool failure becomes consent_required with the consent request only when the host's Cloud
// handle refused it for want of consent: a plugin's own message that merely says so, a Cloud
// error without a request, or a bare Cloud error outside a run stay what they were.
func TestClassifyConsent(t *testing.T) {
	ask := &cloud.Error{Code: cloud.CodeConsentRequired, Plugin: "card-share", Msg: "allow it first",
		Ask: &cloud.ConsentAsk{Plugin: "card-share", Provider: "cloud.example.org", Panel: "/v1/cloud/plugins/card-share/consent"}}
	tests := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"built-in refused for consent", interp.Wrap("tool", "card-share.start: "+ask.Error(), ask), http.StatusForbidden, "consent_required"},
		{"document's cloud.call refused", interp.Wrap("ability", "ability cloud.call: "+ask.Error(), ask), http.StatusForbidden, "consent_required"},
		{"a plugin's message that says consent_required", &interp.Error{Kind: "check", Msg: `consent_required {"consent":{"plugin":"other"}}`}, http.StatusUnprocessableEntity, "tool_failed"},
		{"offline, no request", interp.Wrap("tool", "x", &cloud.Error{Code: cloud.CodeOffline}), http.StatusUnprocessableEntity, "tool_failed"},
		{"a Cloud error outside a run", ask, http.StatusInternalServerError, "internal"},
		{"wrapped twice", interp.Wrap("tool", "y", errors.Join(errors.New("z"), ask)), http.StatusForbidden, "consent_required"},
	}
	for _, tc := range tests {
		e := classify(tc.err)
		if e.Status != tc.status || e.Code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, e.Status, e.Code, tc.status, tc.code)
			continue
		}
		got, has := e.Extra["consent"]
		if (tc.code == "consent_required") != has {
			t.Errorf("%s: consent in the reply = %v", tc.name, got)
		}
		if has && got.(*cloud.ConsentAsk).Plugin != "card-share" {
			t.Errorf("%s: consent for %v", tc.name, got)
		}
	}
}
