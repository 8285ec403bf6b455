//go:build payd_notracing

package tracing

import (
	"context"
	"log/slog"
)

// A payd built with the payd_notracing tag has no tracing: load is a
// constant nil, so the compiler drops every hook's "on" branch, and Setup
// makes no exporter. It exists to measure what the hooks cost while tracing
// is off, against a build without them; releases are built without the tag.

// load is always nil in this build.
func load() *tracerState { return nil }

// NotInThisBuild is what Setup logs in a build without tracing.
const NotInThisBuild = "tracing: not in this build (built with the payd_notracing tag); no spans are made"

// Setup logs that tracing is not in this build and returns a shutdown that
// does nothing: the OTEL_* variables are ignored.
func Setup(ctx context.Context, log *slog.Logger, version string) (shutdown func(context.Context) error, err error) {
	if log != nil {
		log.Warn(NotInThisBuild)
	}
	return func(context.Context) error { return nil }, nil
}
