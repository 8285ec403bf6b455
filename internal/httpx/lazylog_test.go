package httpx

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// A lazily formatted logger writes exactly what l.With writes, with later
// With and WithGroup calls, and nothing below the handler's level.
func TestLazyWithLogsAsWith(t *testing.T) {
	for _, mk := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler {
			return slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo})
		},
		func(b *bytes.Buffer) slog.Handler {
			return slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo})
		},
	} {
		var eager, lazy bytes.Buffer
		le := slog.New(mk(&eager)).With("request_id", "req_1")
		ll := LazyWith(slog.New(mk(&lazy)), slog.String("request_id", "req_1"))
		for _, l := range []*slog.Logger{le, ll} {
			l.Debug("hidden", "k", 1)
			l.Info("request", "status", 200)
			l.With("trace_id", "t1").Warn("with", "x", "y")
			l.WithGroup("g").With("a", 1).Error("grouped", "b", 2)
			l.LogAttrs(context.Background(), slog.LevelInfo, "attrs", slog.Int("n", 3))
		}
		strip := func(s string) string { // the time differs between the two
			var out []string
			for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
				if i := strings.Index(line, "level"); i >= 0 {
					line = line[i:]
				}
				out = append(out, line)
			}
			return strings.Join(out, "\n")
		}
		if got, want := strip(lazy.String()), strip(eager.String()); got != want {
			t.Errorf("lazy logger wrote\n%s\nwant (as With)\n%s", got, want)
		}
		if strings.Contains(lazy.String(), "hidden") || !strings.Contains(lazy.String(), "req_1") {
			t.Errorf("lazy logger wrote %q", lazy.String())
		}
	}
}
