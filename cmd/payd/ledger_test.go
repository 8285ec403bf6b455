package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/store/storetest"
)

// TestLedgerVerify runs `payd ledger verify` on each engine against a running
// payd's database: a balanced book exits 0; an account whose balance no
// longer matches its entries exits 1 naming it; bad arguments exit 2.
func TestLedgerVerify(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			e := apptest.Start(t, eng)
			if r := e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 5000}); r.Status != 201 {
				t.Fatalf("top-up: %d %s", r.Status, r.Body)
			}
			verify := func(args ...string) (int, string, string) {
				var out, errOut bytes.Buffer
				code := run(context.Background(), &env{stdout: &out, stderr: &errOut, getenv: func(k string) string {
					if k == "PAYD_SECRETS_KEY" {
						return e.Main.Config.SecretsKey // the key the running payd sealed its database with
					}
					return ""
				}},
					append([]string{"ledger"}, args...))
				return code, out.String(), errOut.String()
			}
			if code, out, errOut := verify("verify", "--database-url", e.Main.Config.DatabaseURL); code != 0 || !strings.Contains(out, "ledger balances") {
				t.Fatalf("balanced book: exit %d\n%s%s", code, out, errOut)
			}
			if _, err := e.Main.DB.Exec(context.Background(), "UPDATE ledger_balances SET balance = balance + 1 WHERE account_id IN (SELECT id FROM ledger_accounts WHERE kind = 'available')"); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := verify("verify", "--database-url", e.Main.Config.DatabaseURL)
			if code != 1 || !strings.Contains(errOut, "does NOT balance") {
				t.Fatalf("broken book: exit %d\n%s%s", code, out, errOut)
			}
			if code, _, _ := verify("check"); code != 2 {
				t.Fatalf("unknown subcommand: exit %d", code)
			}
		})
	}
}
