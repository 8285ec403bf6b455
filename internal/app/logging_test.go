package app

import (
	"bytes"
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
