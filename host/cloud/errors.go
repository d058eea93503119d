package cloud

import (
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// Code is the kind of a Cloud failure a plugin sees (seed 003 "插件指南" §2–3:
// CloudError('consent_required'), 'offline', 'protocol').
type Code string

// The codes of an *Error.
const (
	// CodeConsentRequired: the person has not allowed this plugin to use Cloud (with the
	// current provider).
	CodeConsentRequired Code = "consent_required"
	// CodeOffline: the provider could not be reached; writes and calls are not queued.
	CodeOffline Code = "offline"
	// CodeUnavailable: no provider is set, or it does not offer a service the plugin uses.
	CodeUnavailable Code = "unavailable"
	// CodeNotDeclared: the plugin called a service its manifest's cloud.uses does not list.
	CodeNotDeclared Code = "not_declared"
	// CodeE2ERequired: a plaintext write by a plugin whose manifest says `e2e: true`.
	CodeE2ERequired Code = "e2e_required"
	// CodeProtocol: the provider answered with an error (Wire is its code: conflict, quota, …).
	CodeProtocol Code = "protocol"
)

// Error is a Cloud failure of one plugin's call. Wire is the provider's error code for
// CodeProtocol; Err, when set, is the underlying error (a *protocol.Error or a transport
// error), reachable through errors.As.
type Error struct {
	Code   Code
	Plugin string
	Wire   protocol.ErrorCode
	Msg    string
	Err    error
	// Ask is set on CodeConsentRequired (and on CodeUnavailable for want of a provider): the
	// request a face turns into the host's consent panel.
	Ask *ConsentAsk
}

// ConsentAsk is what a face needs to ask the person for a plugin's Cloud consent (seed 003
// "插件指南" §2: cloud.requestConsent() shows the host's consent panel; the host never grants
// by itself). Panel is the API route of the plugin's consent panel (GET for its content, PUT
// with actor user to allow), Settings the web app's Settings → Cloud page, Command the CLI
// command that shows the same panel and allows. Provider is the provider host the consent
// would be for, "" when no provider is set (the face leads to Settings → Cloud first).
type ConsentAsk struct {
	Plugin   string `json:"plugin"`
	Provider string `json:"provider"`
	Panel    string `json:"panel"`
	Settings string `json:"settings"`
	Command  string `json:"command"`
}

func askFor(plugin, provider string) *ConsentAsk {
	return &ConsentAsk{Plugin: plugin, Provider: provider, Panel: "/v1/cloud/plugins/" + plugin + "/consent",
		Settings: "/settings/cloud", Command: "harness cloud consent " + plugin + " on"}
}

// Error is "cloud: PLUGIN: CODE: message".
func (e *Error) Error() string {
	s := "cloud: "
	if e.Plugin != "" {
		s += e.Plugin + ": "
	}
	s += string(e.Code)
	if e.Wire != "" {
		s += " (" + string(e.Wire) + ")"
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// IsCode reports whether err is (or wraps) an *Error with code c.
func IsCode(err error, c Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == c
}

func errf(plugin string, c Code, format string, a ...any) *Error {
	return &Error{Code: c, Plugin: plugin, Msg: fmt.Sprintf(format, a...)}
}
