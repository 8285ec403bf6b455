package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// The error types of the API's error envelope.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeAuthentication = "authentication_error"
	TypePermission     = "permission_error"
	TypeIdempotency    = "idempotency_error"
	TypeRateLimit      = "rate_limit_error"
	TypeProvider       = "provider_error"
	TypeAPI            = "api_error"
)

// Error codes a client commonly branches on (the API documents more).
const (
	CodeInvalidAPIKey        = "invalid_api_key"
	CodePermissionDenied     = "permission_denied"
	CodeResourceMissing      = "resource_missing"
	CodeInvalidState         = "invalid_state"
	CodeIdempotencyKeyInUse  = "idempotency_key_in_use"
	CodeIdempotencyKeyReused = "idempotency_key_reused"
	CodeRateLimited          = "rate_limited"
	CodeOTPInvalid           = "otp_invalid"
	CodeInsufficientBalance  = "insufficient_balance"
	CodeDatabaseUnavailable  = "database_unavailable"
)

// Error is an error answer of the API: its envelope
// {"error":{"type","code","message","param","request_id"}} and HTTP status.
// A provider's refusal of a payment (402) answers the canceled payment
// intent instead of an envelope: then Code and Message come from the intent's
// last_error, and the method returns the intent alongside the Error.
type Error struct {
	HTTPStatus int    `json:"-"`
	Type       string `json:"type"`
	Code       string `json:"code"`
	Message    string `json:"message"`
	// Param names the request field at fault, when one is.
	Param     string `json:"param,omitempty"`
	RequestID string `json:"request_id"`
	// Rows lists every bad row of a bulk payout (code invalid_rows).
	Rows []ErrorRow `json:"rows,omitempty"`
	// Body is the answer's raw body.
	Body []byte `json:"-"`

	decoded bool
}

// ErrorRow is one bad row of a bulk payout.
type ErrorRow struct {
	Row     int    `json:"row"`
	Param   string `json:"param"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	s := fmt.Sprintf("payd: %d %s", e.HTTPStatus, e.Code)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Param != "" {
		s += " (param " + e.Param + ")"
	}
	if e.RequestID != "" {
		s += " [" + e.RequestID + "]"
	}
	return s
}

// decodedAlongside reports whether err is an *Error whose body was also
// decoded into the method's result (a 402 payment intent).
func decodedAlongside(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.decoded
}

// newError reads an error answer.
func newError(resp *http.Response, body []byte) *Error {
	e := &Error{HTTPStatus: resp.StatusCode, Body: body, RequestID: resp.Header.Get("Request-Id")}
	var env struct {
		Error *Error `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		env.Error.HTTPStatus, env.Error.Body = resp.StatusCode, body
		if env.Error.RequestID == "" {
			env.Error.RequestID = e.RequestID
		}
		return env.Error
	}
	var refused struct {
		Object    string `json:"object"`
		LastError *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"last_error"`
	}
	if json.Unmarshal(body, &refused) == nil && refused.LastError != nil {
		e.Type, e.Code, e.Message = TypeProvider, refused.LastError.Code, refused.LastError.Message
		return e
	}
	e.Type, e.Code, e.Message = TypeAPI, http.StatusText(resp.StatusCode), "answer without an error envelope"
	return e
}

// ErrorCode returns the API error code of err ("" when err is not an
// *Error), for switch statements.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
