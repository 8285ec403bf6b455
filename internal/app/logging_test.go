package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestLoggerMasksSecrets(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(&buf, "info")
	log.Info("oops", "key", "sk_live_abcdefgh12345678", "msg2", "Bearer pk_test_zz99zz99zz99 and whsec_AbCdEf123456789", "ok", "sk_test_")
	out := buf.String()
	for _, secret := range []string{"abcdefgh12345678", "zz99zz99zz99", "AbCdEf123456789"} {
		if strings.Contains(out, secret) {
			t.Fatalf("secret %q logged: %s", secret, out)
		}
	}
	if !strings.Contains(out, "sk_live_[redacted]") || !strings.Contains(out, `"ok":"sk_test_"`) {
		t.Fatalf("mask output unexpected: %s", out)
	}
}

func TestLogFormat(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	for _, c := range []struct {
		format string
		check  func(t *testing.T, line string)
	}{
		{"", func(t *testing.T, line string) {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("default format is not JSON: %q (%v)", line, err)
			}
			if rec["level"] != "WARN" || rec["msg"] != "hello" || rec["n"] != float64(3) || rec["key"] != "sk_test_[redacted]" {
				t.Errorf("JSON record %v", rec)
			}
		}},
		{"json", func(t *testing.T, line string) {
			if !strings.HasPrefix(line, "{") {
				t.Errorf("json: %q", line)
			}
		}},
		{"text", func(t *testing.T, line string) {
			if strings.HasPrefix(line, "{") || !strings.Contains(line, "level=WARN msg=hello n=3 key=sk_test_[redacted]") || !strings.HasPrefix(line, "time=") {
				t.Errorf("text: %q", line)
			}
		}},
	} {
		t.Run("format="+c.format, func(t *testing.T) {
			cfg, err := ConfigFromEnv(env(map[string]string{"PAYD_LOG_FORMAT": c.format, "PAYD_LOG_LEVEL": "warn"}))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			l := cfg.Logger(&buf)
			l.Info("below the level")
			l.Warn("hello", "n", 3, "key", "sk_test_0123456789abcdef")
			out := strings.TrimSpace(buf.String())
			if strings.Contains(out, "below the level") || strings.Count(out, "\n") != 0 {
				t.Fatalf("want one line at warn: %q", out)
			}
			c.check(t, out)
		})
	}
	if _, err := ConfigFromEnv(env(map[string]string{"PAYD_LOG_FORMAT": "logfmt"})); err == nil || !strings.Contains(err.Error(), "PAYD_LOG_FORMAT") {
		t.Errorf("PAYD_LOG_FORMAT=logfmt: err %v, want a refusal naming the variable", err)
	}
}
