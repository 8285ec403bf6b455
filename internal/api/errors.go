package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/payd/payd/internal/errs"
)

// statusAndType is the one place where a domain error kind becomes an HTTP
// status and an error type.
func statusAndType(e *errs.Error) (int, string) {
	status, typ := http.StatusInternalServerError, "api_error"
	switch e.Kind {
	case errs.KindInvalid:
		status, typ = http.StatusBadRequest, "invalid_request_error"
	case errs.KindUnauthenticated:
		status, typ = http.StatusUnauthorized, "authentication_error"
	case errs.KindPermission:
		status, typ = http.StatusForbidden, "permission_error"
	case errs.KindNotFound:
		status, typ = http.StatusNotFound, "invalid_request_error"
	case errs.KindConflict:
		status, typ = http.StatusConflict, "invalid_request_error"
	case errs.KindTooLarge:
		status, typ = http.StatusRequestEntityTooLarge, "invalid_request_error"
	case errs.KindUnsupportedMedia:
		status, typ = http.StatusUnsupportedMediaType, "invalid_request_error"
	case errs.KindIdempotency:
		status, typ = http.StatusConflict, "idempotency_error"
	case errs.KindRateLimited:
		status, typ = http.StatusTooManyRequests, "rate_limit_error"
	case errs.KindPaymentRequired:
		status, typ = http.StatusPaymentRequired, "invalid_request_error"
	case errs.KindProvider:
		status, typ = http.StatusBadGateway, "provider_error"
	case errs.KindProviderTimeout:
		status, typ = http.StatusGatewayTimeout, "provider_error"
	case errs.KindUnavailable:
		status, typ = http.StatusServiceUnavailable, "provider_error"
	}
	if e.Status != 0 {
		status = e.Status
	}
	return status, typ
}

// ErrorBody is the JSON error envelope.
type ErrorBody struct {
	Error ErrorObject `json:"error"`
}

// ErrorObject is the error member.
type ErrorObject struct {
	Type      string          `json:"type"`
	Code      string          `json:"code"`
	Message   string          `json:"message"`
	Param     string          `json:"param,omitempty"`
	RequestID string          `json:"request_id"`
	Rows      []errs.RowError `json:"rows,omitempty"`
	Extra     map[string]any  `json:"-"`
}

// WriteError answers err in the error envelope. Unknown errors become a 500
// whose message reveals nothing; the cause goes to the log only.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	e := errs.As(err)
	if e == nil {
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			e = &errs.Error{Kind: errs.KindInvalid, Code: "request_canceled", Message: "the client closed the request", Status: 499}
		} else {
			e = errs.Internal(err)
		}
	}
	status, typ := statusAndType(e)
	if status >= 500 && e.Kind == errs.KindInternal {
		logIt := func() {
			if e.Err != nil {
				LoggerFrom(r.Context()).Error("internal error", "err", err, "cause", e.Err)
			} else {
				LoggerFrom(r.Context()).Error("internal error", "err", err)
			}
		}
		// An idempotent run's answer is held until its commit, and a run
		// that met its key taken is answered otherwise (the stored answer
		// replayed, or 409 idempotency_key_in_use): its own failure reached
		// nobody and is no fault of payd's. It is logged only if sent.
		if b, ok := w.(*bufferedResponse); ok {
			b.onSend = append(b.onSend, logIt)
		} else {
			logIt()
		}
	}
	body := map[string]any{
		"type": typ, "code": e.Code, "message": e.Message, "request_id": RequestIDFrom(r.Context()),
	}
	if e.Param != "" {
		body["param"] = e.Param
	}
	if len(e.Rows) > 0 {
		body["rows"] = e.Rows
	}
	for k, v := range e.Extra {
		if _, taken := body[k]; !taken {
			body[k] = v
		}
	}
	if e.Kind == errs.KindRateLimited {
		if ra, ok := e.Extra["retry_after"]; ok {
			if s, ok := ra.(string); ok {
				w.Header().Set("Retry-After", s)
			}
			delete(body, "retry_after")
		}
	}
	WriteJSON(w, status, map[string]any{"error": body})
}

// LoggerFrom returns the request-scoped logger (with the request id).
func LoggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

type loggerKey struct{}
type requestIDKey struct{}

// RequestIDFrom returns the request id in ctx.
func RequestIDFrom(ctx context.Context) string {
	s, _ := ctx.Value(requestIDKey{}).(string)
	return s
}
