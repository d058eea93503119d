package interp

import (
	"context"
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/lang/diag"
)

// Error kinds, the values of error.kind inside a `catch` (docs/DECISIONS.md §4).
const (
	KindCheck      = "check"      // a check step failed
	KindHTTP       = "http"       // a request was refused, failed, or got a non-2xx status
	KindTimeout    = "timeout"    // a request ran past its timeout
	KindLimit      = "limit"      // a run limit was reached (see limits.go)
	KindExpression = "expression" // an expression failed at run time
	KindAbility    = "ability"    // a host ability failed or was refused
	// KindSession: a campus request had no signed-in session to go with (the
	// person is not signed in to the service, or the face has no campus
	// client, as the author CLI's live runs).
	KindSession = "session"
	KindInput   = "input" // the tool input (or a call's input) is invalid
)

// Error is a failed run or step. Kind is one of the Kind constants; Msg is
// the message a plugin sees as error.message in catch. File and Pos locate
// the step or expression in the plugin (File is "" and Pos zero when there
// is no place, as for input errors); Step is the step path such as
// "steps[2] (let page)".
type Error struct {
	Kind string
	Msg  string
	File string
	Pos  diag.Pos
	Step string
	err  error // the underlying error, for errors.Is/As
}

// Error formats e as "FILE:LINE:COL: STEP: MSG", leaving out the parts that
// are empty.
func (e *Error) Error() string {
	s := ""
	if e.File != "" {
		s = e.File + ":"
		if e.Pos.Line > 0 {
			s += fmt.Sprintf("%d:%d:", e.Pos.Line, e.Pos.Col)
		}
		s += " "
	}
	if e.Step != "" {
		s += e.Step + ": "
	}
	return s + e.Msg
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.err }

// Wrap returns an *Error of kind with message msg whose underlying error is err, reachable
// through errors.Is and errors.As: a host that reports a Go error of its own as a run error
// (a built-in tool's, a server function's) keeps what a face needs from it, such as the
// consent request of a Cloud error.
func Wrap(kind, msg string, err error) *Error {
	return &Error{Kind: kind, Msg: msg, err: err}
}

// errf returns an *Error of the given kind without a place; the executor
// adds the place of the step that failed.
func errf(kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// limitErr returns the error for a limit, in the docs/DECISIONS.md §10 form
// "WHAT: GOT, the limit is LIMIT".
func limitErr(what, got, limit string) *Error {
	return &Error{Kind: KindLimit, Msg: fmt.Sprintf("%s: %s, the limit is %s", what, got, limit)}
}

// ctxErr turns a done context into an *Error: the run time limit (kind
// limit), a request timeout (kind timeout), or cancellation by the caller
// (kind timeout, "run canceled: …"). It returns nil while ctx is live.
func ctxErr(ctx context.Context) *Error {
	if ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	var rt *runTimeError
	switch {
	case errors.As(cause, &rt):
		return &Error{Kind: KindLimit, Msg: rt.Error(), err: cause}
	case errors.Is(cause, errReqTimeout):
		return &Error{Kind: KindTimeout, Msg: "request timed out", err: cause}
	default:
		return &Error{Kind: KindTimeout, Msg: "run canceled: " + cause.Error(), err: cause}
	}
}

// Format renders e for a person (STYLE §9): the error, then the line of
// the plugin file it points at and a caret under the column. files holds
// the plugin's files as loaded (plugin.Plugin.Files); without the file or
// a position it is just e.Error().
func (e *Error) Format(files map[string][]byte) string {
	src, ok := files[e.File]
	if !ok || e.Pos.Line < 1 {
		return e.Error()
	}
	return diag.Diagnostic{Severity: diag.Error, File: e.File, Pos: e.Pos, Path: e.Step, Msg: e.Msg}.Format(src)
}
