package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRefusesBadRetention: a retention setting that does not parse, or
// that breaks a rule (keys under 24 hours, deliveries outliving their
// events), stops `payd serve` before it opens anything, naming the variable.
func TestServeRefusesBadRetention(t *testing.T) {
	dir := t.TempDir()
	for name, value := range map[string]string{
		"PAYD_RETENTION_EVENTS":           "a month",
		"PAYD_RETENTION_DELIVERIES":       "90d",
		"PAYD_RETENTION_REQUEST_LOGS":     "-1h",
		"PAYD_RETENTION_IDEMPOTENCY_KEYS": "1h",
	} {
		db := filepath.Join(dir, name+".db")
		vars := map[string]string{"PAYD_DATABASE_URL": "sqlite:" + db, "PAYD_ADDR": "127.0.0.1:0", name: value}
		code, _, errOut := runPayd(vars, "serve")
		if code == 0 || !strings.Contains(errOut, name) {
			t.Errorf("%s=%s: exit %d, stderr %q; want a refusal naming the variable", name, value, code, errOut)
		}
		if _, err := os.Stat(db); err == nil {
			t.Errorf("%s=%s: serve created the database before refusing", name, value)
		}
	}
}
