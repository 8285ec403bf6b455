package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd/payd/internal/store"
)

// TestKeyActionsAudited: `payd key create` and `payd key revoke` leave rows in
// the merchant's audit log (the one the portal shows), naming the operator,
// the key and its mode; a failed revoke leaves none.
func TestKeyActionsAudited(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payd.db")
	vars := map[string]string{"PAYD_DATABASE_URL": "sqlite:" + path, "PAYD_LOG_LEVEL": "error"}
	code, out, errOut := runPayd(vars, "merchant", "create", "--name", "Audited", "--json")
	if code != 0 {
		t.Fatalf("merchant create: exit %d %s", code, errOut)
	}
	var m struct {
		MerchantID string `json:"merchant_id"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runPayd(vars, "key", "create", "--merchant", m.MerchantID, "--kind", "publishable", "--json")
	if code != 0 {
		t.Fatalf("key create: exit %d %s", code, errOut)
	}
	var k struct{ ID, Secret string }
	if err := json.Unmarshal([]byte(out), &k); err != nil || !strings.HasPrefix(k.ID, "key_") {
		t.Fatalf("key create printed %q", out)
	}
	if code, _, errOut := runPayd(vars, "key", "revoke", "--merchant", m.MerchantID, "--key", k.ID); code != 0 {
		t.Fatalf("key revoke: exit %d %s", code, errOut)
	}
	if code, _, _ := runPayd(vars, "key", "revoke", "--merchant", m.MerchantID, "--key", k.ID); code == 0 {
		t.Fatal("revoking a revoked key succeeded")
	}
	db, err := store.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(context.Background(), "SELECT action, principal_id, object_id, livemode, detail FROM portal_audit WHERE merchant_id = ? ORDER BY id", m.MerchantID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var action, principal, object, detail string
		var live bool
		if err := rows.Scan(&action, &principal, &object, &live, &detail); err != nil {
			t.Fatal(err)
		}
		if principal != "operator" || object != k.ID || live {
			t.Errorf("audit row %s: principal %s, object %s, live %v", action, principal, object, live)
		}
		if strings.Contains(detail, k.Secret) {
			t.Errorf("audit row %s holds the key", action)
		}
		got = append(got, action)
	}
	if strings.Join(got, ",") != "api_key.create,api_key.revoke" {
		t.Fatalf("audit actions %v, want api_key.create then api_key.revoke", got)
	}
}
