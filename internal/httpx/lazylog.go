package httpx

import (
	"context"
	"log/slog"
	"slices"
)

// LazyWith returns a logger that logs attrs with every record, as
// l.With(attrs...) does, but formats them only when a record at an enabled
// level is handled. l.With formats them at once (the JSON and text handlers
// pre-encode them): every request's logger carries its request id, and with
// the log level above info most requests log nothing, so formatting it for
// each request was work thrown away (2 % of an authenticated GET's CPU).
// A record costs the formatting of attrs each time it is handled, which for
// a request's one access-log line is what l.With cost.
func LazyWith(l *slog.Logger, attrs ...slog.Attr) *slog.Logger {
	return slog.New(&deferredAttrs{h: l.Handler(), attrs: attrs})
}

// deferredAttrs holds attributes unformatted until a record needs them.
type deferredAttrs struct {
	h     slog.Handler
	attrs []slog.Attr
}

func (d *deferredAttrs) Enabled(ctx context.Context, level slog.Level) bool {
	return d.h.Enabled(ctx, level)
}

func (d *deferredAttrs) Handle(ctx context.Context, r slog.Record) error {
	return d.h.WithAttrs(d.attrs).Handle(ctx, r)
}

func (d *deferredAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &deferredAttrs{h: d.h, attrs: append(slices.Clip(d.attrs), attrs...)}
}

func (d *deferredAttrs) WithGroup(name string) slog.Handler {
	return d.h.WithAttrs(d.attrs).WithGroup(name)
}

// LazyOne is the storage of a logger LazyWith would return for one
// attribute, for a caller that allocates it with the rest of its
// per-request state (one allocation instead of four).
type LazyOne struct {
	d    deferredAttrs
	attr [1]slog.Attr
	l    slog.Logger
}

// Init makes z the logger LazyWith(l, a) returns, and returns it. z must not
// be copied or initialised again while the logger is in use.
func (z *LazyOne) Init(l *slog.Logger, a slog.Attr) *slog.Logger {
	z.attr[0] = a
	z.d = deferredAttrs{h: l.Handler(), attrs: z.attr[:]}
	z.l = *slog.New(&z.d)
	return &z.l
}
