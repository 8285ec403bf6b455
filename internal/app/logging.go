package app

import (
	"io"
	"log/slog"
	"regexp"
)

// secretPattern matches anything shaped like a payd secret: API keys and
// webhook signing secrets. Log calls must never pass secrets; this mask is
// the second line of defence.
var secretPattern = regexp.MustCompile(`\b(sk|pk)_(test|live)_[0-9a-z]{8,}|\bwhsec_[0-9A-Za-z]{8,}`)

// NewLogger makes the JSON logger for a level name. String values that look
// like keys or signing secrets are masked before they are written.
func NewLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: maskSecrets}))
}

func maskSecrets(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindString {
		if s := a.Value.String(); secretPattern.MatchString(s) {
			return slog.String(a.Key, secretPattern.ReplaceAllStringFunc(s, func(m string) string {
				return m[:min(len(m), 8)] + "[redacted]"
			}))
		}
	}
	return a
}
