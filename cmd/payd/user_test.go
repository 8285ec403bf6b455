package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestUserCreateAndList drives `payd user create` and `payd user list` on
// each engine: the user gets a one-time invitation password printed once
// (it signs in, and the user must replace it), the list shows the user as
// invited and never a password or its hash, the creation is audited under
// the operator in the same commit, and refused input changes nothing.
func TestUserCreateAndList(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			ctx := context.Background()
			url := storetest.MigratedURL(t, eng)
			vars := map[string]string{"PAYD_DATABASE_URL": url, "PAYD_LOG_LEVEL": "error",
				"PAYD_SECRETS_KEY": strings.Repeat("ab", 32)}
			code, out, errOut := runPayd(vars, "merchant", "create", "--name", "Users Inc", "--json")
			if code != 0 {
				t.Fatalf("merchant create: exit %d %s", code, errOut)
			}
			var mer struct {
				MerchantID string `json:"merchant_id"`
			}
			if err := json.Unmarshal([]byte(out), &mer); err != nil {
				t.Fatal(err)
			}

			code, out, errOut = runPayd(vars, "user", "create", "--merchant", mer.MerchantID, "--email", " Ops@Example.COM ", "--role", "approver", "--json")
			if code != 0 {
				t.Fatalf("user create: exit %d %s", code, errOut)
			}
			var u userCreated
			if err := json.Unmarshal([]byte(out), &u); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(u.ID, "usr_") || u.Email != "ops@example.com" || u.Role != "approver" || u.MerchantID != mer.MerchantID || len(u.Password) < 10 {
				t.Fatalf("user create printed %+v", u)
			}
			code, out, _ = runPayd(vars, "user", "create", "--merchant", mer.MerchantID, "--email", "second@example.com", "--role", "viewer")
			if code != 0 || !strings.Contains(out, "second@example.com") || !strings.Contains(out, "one-time") {
				t.Fatalf("user create (table): exit %d %q", code, out)
			}

			db, err := store.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var hash string
			var must bool
			if err := db.QueryRow(ctx, "SELECT password_hash, must_set_password FROM users WHERE id = ?", u.ID).Scan(&hash, &must); err != nil {
				t.Fatal(err)
			}
			if !must || hash == "" || strings.Contains(hash, u.Password) {
				t.Fatalf("stored user: must_set_password %v, hash %q", must, hash)
			}

			// Refused: a taken email, a bad role, an unknown merchant, missing flags.
			for _, c := range []struct {
				args []string
				code int
				msg  string
			}{
				{[]string{"--merchant", mer.MerchantID, "--email", "OPS@example.com", "--role", "viewer"}, 1, "email exists"},
				{[]string{"--merchant", mer.MerchantID, "--email", "third@example.com", "--role", "owner"}, 1, "role must be"},
				{[]string{"--merchant", mer.MerchantID, "--email", "not-an-address", "--role", "viewer"}, 1, "email"},
				{[]string{"--merchant", "mer_unknown", "--email", "fourth@example.com", "--role", "viewer"}, 1, "merchant"},
				{[]string{"--merchant", mer.MerchantID, "--email", "fifth@example.com"}, 2, "--role"},
			} {
				code, _, errOut := runPayd(vars, append([]string{"user", "create"}, c.args...)...)
				if code != c.code || !strings.Contains(errOut, c.msg) {
					t.Errorf("user create %v: exit %d %q, want %d naming %q", c.args, code, errOut, c.code, c.msg)
				}
			}

			code, out, errOut = runPayd(vars, "user", "list", "--merchant", mer.MerchantID, "--json")
			if code != 0 {
				t.Fatalf("user list: exit %d %s", code, errOut)
			}
			if strings.Contains(out, "password") || strings.Contains(out, hash) || strings.Contains(out, u.Password) {
				t.Fatalf("user list shows a password: %s", out)
			}
			var list []userRow
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatal(err)
			}
			if len(list) != 3 || list[1].ID != u.ID || list[1].Status != "invited" || list[1].Role != "approver" || list[2].Email != "second@example.com" {
				t.Fatalf("user list: %+v", list)
			}
			if code, out, _ := runPayd(vars, "user", "list", "--merchant", mer.MerchantID); code != 0 || !strings.Contains(out, "ops@example.com") || !strings.Contains(out, "invited") {
				t.Fatalf("user list (table): exit %d %q", code, out)
			}
			if code, _, errOut := runPayd(vars, "user", "list", "--merchant", "mer_unknown"); code != 1 || !strings.Contains(errOut, "merchant") {
				t.Fatalf("user list of an unknown merchant: exit %d %q", code, errOut)
			}

			var principal, object, detail string
			var live bool
			if err := db.QueryRow(ctx, "SELECT principal_id, object_id, detail, livemode FROM portal_audit WHERE merchant_id = ? AND action = 'user.create' AND object_id = ?",
				mer.MerchantID, u.ID).Scan(&principal, &object, &detail, &live); err != nil {
				t.Fatalf("no audit row for the user: %v", err)
			}
			if principal != "operator" || live || detail != "ops@example.com as approver" || strings.Contains(detail, u.Password) {
				t.Fatalf("audit row: principal %s live %v detail %q", principal, live, detail)
			}
			if n := storetest.Count(t, db, "SELECT COUNT(*) FROM portal_audit WHERE action = 'user.create'"); n != 2 {
				t.Fatalf("%d user.create audit rows, want 2 (refusals leave none)", n)
			}
			if n := storetest.Count(t, db, "SELECT COUNT(*) FROM users"); n != 3 {
				t.Fatalf("%d users, want 3", n)
			}

			// The invitation password signs in (the portal then asks for a new one).
			cfg, err := app.ConfigFromEnv(func(k string) string { return vars[k] })
			if err != nil {
				t.Fatal(err)
			}
			m := &app.Main{Config: cfg}
			if err := m.Open(ctx); err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if _, err := m.Merchants.Login(ctx, "ops@example.com", u.Password); err != nil {
				t.Fatalf("the invitation password does not sign in: %v", err)
			}
		})
	}
}
