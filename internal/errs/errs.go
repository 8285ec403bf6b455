// Package errs holds payd's one domain error type. Services return *Error (or
// wrap one); the HTTP layer maps Kind to a status code and error type in a
// single function.
package errs

import (
	"errors"
	"fmt"
)

// Kind classifies an error for the HTTP layer.
type Kind int

// The kinds of error a service can return.
const (
	KindInternal         Kind = iota // 500 api_error
	KindInvalid                      // 400 invalid_request_error
	KindUnauthenticated              // 401 authentication_error
	KindPermission                   // 403 permission_error
	KindNotFound                     // 404 invalid_request_error resource_missing
	KindConflict                     // 409 invalid_request_error (invalid_state and friends)
	KindTooLarge                     // 413 invalid_request_error request_too_large
	KindUnsupportedMedia             // 415 invalid_request_error
	KindIdempotency                  // 409/422 idempotency_error
	KindRateLimited                  // 429 rate_limit_error
	KindPaymentRequired              // 402 (insufficient balance and the like)
	KindProvider                     // 502 provider_error
	KindProviderTimeout              // 504 provider_error
	KindUnavailable                  // 503 provider_error / api_error
)

// RowError names one bad row of a batch upload.
type RowError struct {
	Row     int    `json:"row"`
	Param   string `json:"param"`
	Message string `json:"message"`
}

// Error is a domain error with a stable machine code and a human message.
type Error struct {
	Kind    Kind
	Code    string         // machine-readable, e.g. "parameter_missing"
	Message string         // human-readable; never holds secrets or internals
	Param   string         // the offending field, when there is one
	Status  int            // overrides the kind's HTTP status when non-zero
	Rows    []RowError     // batch validation errors
	Extra   map[string]any // extra members of the error object (e.g. payment_intent)
	Err     error          // the cause, for logs only
}

func (e *Error) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Param)
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// As returns the *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// IsCode reports whether err carries the given code.
func IsCode(err error, code string) bool {
	e := As(err)
	return e != nil && e.Code == code
}

// Invalid is a 400 naming the field at fault.
func Invalid(param, code, format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// Missing is a 400 for a required field that is absent.
func Missing(param string) *Error {
	return &Error{Kind: KindInvalid, Code: "parameter_missing", Param: param, Message: "missing required parameter: " + param}
}

// NotFound is a 404 for an object the caller cannot see.
func NotFound(what, id string) *Error {
	return &Error{Kind: KindNotFound, Code: "resource_missing", Param: "id", Message: fmt.Sprintf("no such %s: '%s'", what, id)}
}

// InvalidState is a 409 for a transition the state machine forbids.
func InvalidState(format string, args ...any) *Error {
	return &Error{Kind: KindConflict, Code: "invalid_state", Message: fmt.Sprintf(format, args...)}
}

// Conflict is a 409 with its own code.
func Conflict(code, format string, args ...any) *Error {
	return &Error{Kind: KindConflict, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Permission is a 403.
func Permission(code, format string, args ...any) *Error {
	return &Error{Kind: KindPermission, Code: code, Message: fmt.Sprintf(format, args...)}
}

// PaymentRequired is a 402 with its own code.
func PaymentRequired(code, format string, args ...any) *Error {
	return &Error{Kind: KindPaymentRequired, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Internal wraps an unexpected failure; its message never reaches a client.
func Internal(err error) *Error {
	return &Error{Kind: KindInternal, Code: "api_error", Message: "an internal error occurred", Err: err}
}
