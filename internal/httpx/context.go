package httpx

import (
	"context"
	"log/slog"
)

// Request is what a request's context carries for LoggerFrom and
// RequestIDFrom: its id and its logger (which logs the id).
type Request struct {
	ID  string
	Log *slog.Logger
}

type requestKey struct{}

// WithRequest returns ctx carrying a request's id and its logger (which
// logs the id), for LoggerFrom and RequestIDFrom.
func WithRequest(ctx context.Context, id string, log *slog.Logger) context.Context {
	return WithRequestInfo(ctx, &Request{ID: id, Log: log})
}

// WithRequestInfo is WithRequest with the caller's own Request (which the
// caller may allocate with the rest of its per-request state); it must not
// change once in ctx.
func WithRequestInfo(ctx context.Context, req *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, req)
}

// LoggerFrom returns the request-scoped logger (with the request id), or
// the default logger outside a request.
func LoggerFrom(ctx context.Context) *slog.Logger {
	if r, ok := ctx.Value(requestKey{}).(*Request); ok && r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

// RequestIDFrom returns the request id in ctx ("" outside a request).
func RequestIDFrom(ctx context.Context) string {
	if r, ok := ctx.Value(requestKey{}).(*Request); ok {
		return r.ID
	}
	return ""
}
