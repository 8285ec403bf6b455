package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/httpx"
)

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
	status, typ := httpx.StatusAndType(e)
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

// LoggerFrom returns the request-scoped logger (with the request id):
// httpx.LoggerFrom, named here for the API's handlers.
func LoggerFrom(ctx context.Context) *slog.Logger { return httpx.LoggerFrom(ctx) }

// RequestIDFrom returns the request id in ctx: httpx.RequestIDFrom, named
// here for the API's handlers.
func RequestIDFrom(ctx context.Context) string { return httpx.RequestIDFrom(ctx) }
