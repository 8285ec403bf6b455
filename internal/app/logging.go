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
	return NewLoggerFormat(w, level, "json")
}

// LogFormats are the values of PAYD_LOG_FORMAT: slog's JSON handler (the
// default) or its text handler (key=value pairs).
var LogFormats = []string{"json", "text"}

// NewLoggerFormat makes the logger for a level name and a format of
// LogFormats ("text" gives slog's text handler, anything else JSON). Secrets
// are masked in both.
func NewLoggerFormat(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: l, ReplaceAttr: maskSecrets}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// Logger makes the logger c names: PAYD_LOG_LEVEL and PAYD_LOG_FORMAT.
func (c Config) Logger(w io.Writer) *slog.Logger { return NewLoggerFormat(w, c.LogLevel, c.LogFormat) }

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
