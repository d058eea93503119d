package protocol

import (
	"fmt"
	"net/http"
)

// ErrorCode is a WireErrorCode of seed 003 (“### WireErrorCode”): the `error.code` of an
// ErrorBody and the `code` of an `error` frame.
type ErrorCode string

// The wire error codes, in the seed's order.
const (
	CodeBadRequest      ErrorCode = "bad_request"
	CodeUnauthorized    ErrorCode = "unauthorized"
	CodeForbidden       ErrorCode = "forbidden"
	CodeNotFound        ErrorCode = "not_found"
	CodeGone            ErrorCode = "gone"
	CodeConflict        ErrorCode = "conflict"
	CodePayloadTooLarge ErrorCode = "payload_too_large"
	CodeRateLimited     ErrorCode = "rate_limited"
	CodeQuota           ErrorCode = "quota"
	CodePowInvalid      ErrorCode = "pow_invalid"
	CodeUnsupported     ErrorCode = "unsupported"
	CodeServer          ErrorCode = "server"
)

// Valid reports whether c is one of the twelve wire error codes.
func (c ErrorCode) Valid() bool {
	switch c {
	case CodeBadRequest, CodeUnauthorized, CodeForbidden, CodeNotFound, CodeGone, CodeConflict,
		CodePayloadTooLarge, CodeRateLimited, CodeQuota, CodePowInvalid, CodeUnsupported, CodeServer:
		return true
	}
	return false
}

// HTTPStatus is the HTTP status that carries c. The seed fixes eight (“error.code maps to HTTP
// statuses as usual”) and `501 unsupported`; for the rest this package decides: `quota` is
// 413 (the write is too large for what is left), `pow_invalid` is 400, `server` is 500.
// An unknown code maps to 500.
func (c ErrorCode) HTTPStatus() int {
	switch c {
	case CodeBadRequest, CodePowInvalid:
		return http.StatusBadRequest
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeNotFound:
		return http.StatusNotFound
	case CodeConflict:
		return http.StatusConflict
	case CodeGone:
		return http.StatusGone
	case CodePayloadTooLarge, CodeQuota:
		return http.StatusRequestEntityTooLarge
	case CodeRateLimited:
		return http.StatusTooManyRequests
	case CodeUnsupported:
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}

// ErrorBody is the body of every error response (seed 003 “### ErrorBody”).
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is ErrorBody.error. RetryAfterS (seconds, ≥ 0) is set on `rate_limited`.
type ErrorDetail struct {
	Code        ErrorCode `json:"code"`
	Message     string    `json:"message"`
	RetryAfterS *int64    `json:"retryAfterS,omitempty"`
}

// Validate checks the schema: a known code and a retryAfterS that is not negative.
func (b *ErrorBody) Validate() error {
	if !b.Error.Code.Valid() {
		return fieldErr("error.code", "unknown error code %q", b.Error.Code)
	}
	if b.Error.RetryAfterS != nil && *b.Error.RetryAfterS < 0 {
		return fieldErr("error.retryAfterS", "must be ≥ 0, got %d", *b.Error.RetryAfterS)
	}
	return nil
}

// Error is a wire error as a Go error: what a server answers and what a client receives.
// Status is the HTTP status (0 inside a frame); RetryAfterS is seconds, or 0.
type Error struct {
	Code        ErrorCode
	Message     string
	Status      int
	RetryAfterS int64
}

// Errorf builds an Error with code's usual HTTP status.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Status: code.HTTPStatus()}
}

// Error prints "code: message".
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Body is the ErrorBody that carries e.
func (e *Error) Body() ErrorBody {
	b := ErrorBody{Error: ErrorDetail{Code: e.Code, Message: e.Message}}
	if e.Code == CodeRateLimited {
		r := e.RetryAfterS
		b.Error.RetryAfterS = &r
	}
	return b
}

// ValidationError says which field of a wire value breaks its schema and how. Field is a path
// such as "env.n" or "peers[2].peerPub".
type ValidationError struct {
	Field  string
	Reason string
}

// Error prints "field: reason".
func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

func fieldErr(field, format string, args ...any) error {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// prefixErr puts parent in front of a ValidationError's field.
func prefixErr(parent string, err error) error {
	if err == nil {
		return nil
	}
	if ve, ok := err.(*ValidationError); ok {
		f := parent
		if ve.Field != "" {
			f += "." + ve.Field
		}
		return &ValidationError{Field: f, Reason: ve.Reason}
	}
	return fmt.Errorf("%s: %w", parent, err)
}
