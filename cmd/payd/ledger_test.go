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

// TestLedgerVerifySeesADoubledPayout: a paid payout whose reserve and paid
// movements were both copied, entries and balances included, keeps every sum
// balanced; `payd ledger verify` still exits 1 and names the payout.
func TestLedgerVerifySeesADoubledPayout(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			e := apptest.Start(t, eng)
			ctx := context.Background()
			if r := e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 50_000}); r.Status != 201 {
				t.Fatalf("top-up: %d %s", r.Status, r.Body)
			}
			r := e.Post("/v1/payouts", map[string]any{"amount_minor": 1500, "currency": "DJF", "provider": "wallet_b",
				"recipient_msisdn": "+25377123456", "recipient_name": "Fatouma Ahmed Houssein"})
			var p struct{ ID, Status string }
			r.JSON(t, &p)
			if r.Status != 201 || p.Status != "succeeded" {
				t.Fatalf("payout: %d %s", r.Status, r.Body)
			}
			verify := func() (int, string) {
				var out, errOut bytes.Buffer
				code := run(ctx, &env{stdout: &out, stderr: &errOut, getenv: func(k string) string {
					if k == "PAYD_SECRETS_KEY" {
						return e.Main.Config.SecretsKey
					}
					return ""
				}}, []string{"ledger", "verify", "--database-url", e.Main.Config.DatabaseURL})
				return code, out.String() + errOut.String()
			}
			if code, out := verify(); code != 0 {
				t.Fatalf("before the copy: exit %d\n%s", code, out)
			}
			db := e.Main.DB
			for _, q := range []string{
				`INSERT INTO ledger_transactions (id, merchant_id, livemode, kind, reference, created_at)
					SELECT 'copy_' || id, merchant_id, livemode, kind, reference, created_at FROM ledger_transactions WHERE reference = ?`,
				`INSERT INTO ledger_entries (transaction_id, account_id, currency, amount)
					SELECT 'copy_' || e.transaction_id, e.account_id, e.currency, e.amount FROM ledger_entries e
					JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.reference = ? AND t.id NOT LIKE 'copy_%'`,
				// Each account's balance follows its copied entries, so every sum still holds.
				`UPDATE ledger_balances SET balance = balance + (SELECT CAST(SUM(e.amount) AS BIGINT) FROM ledger_entries e
					WHERE e.account_id = ledger_balances.account_id AND e.transaction_id IN
					(SELECT id FROM ledger_transactions WHERE reference = ? AND id LIKE 'copy_%'))
					WHERE slot = (SELECT MIN(slot) FROM ledger_balances b WHERE b.account_id = ledger_balances.account_id)
					AND account_id IN (SELECT e.account_id FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
					WHERE t.reference = ? AND t.id LIKE 'copy_%')`,
			} {
				args := []any{p.ID}
				if strings.Count(q, "?") == 2 {
					args = append(args, p.ID)
				}
				if _, err := db.Exec(ctx, q, args...); err != nil {
					t.Fatal(err)
				}
			}
			code, out := verify()
			if code != 1 || !strings.Contains(out, p.ID+" payout paid more than once") ||
				!strings.Contains(out, p.ID+" payout reserved again without a release") {
				t.Fatalf("doubled payout: exit %d\n%s", code, out)
			}
			if strings.Contains(out, "is unbalanced") || strings.Contains(out, "has balance") {
				t.Fatalf("the copy was not in balance, so the test proves nothing:\n%s", out)
			}
		})
	}
}
