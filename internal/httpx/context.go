package httpx

import (
	"context"
	"log/slog"
)

type loggerKey struct{}
type requestIDKey struct{}

// WithRequest returns ctx carrying a request's id and its logger (which
// logs the id), for LoggerFrom and RequestIDFrom.
func WithRequest(ctx context.Context, id string, log *slog.Logger) context.Context {
	return context.WithValue(context.WithValue(ctx, requestIDKey{}, id), loggerKey{}, log)
}

// LoggerFrom returns the request-scoped logger (with the request id), or
// the default logger outside a request.
func LoggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// RequestIDFrom returns the request id in ctx ("" outside a request).
func RequestIDFrom(ctx context.Context) string {
	s, _ := ctx.Value(requestIDKey{}).(string)
	return s
}
