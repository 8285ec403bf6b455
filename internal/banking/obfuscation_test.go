package banking_test

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/testutil"
)

// obfuscatedNames reads internal/screening/testdata/obfuscations.csv: listed
// names disguised the ways an evader would.
func obfuscatedNames(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.RepoRoot(t), "internal", "screening", "testdata", "obfuscations.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows[1:] {
		name, err := strconv.Unquote(`"` + r[1] + `"`)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, name)
	}
	return out
}

// withEvalList configures the small OFAC-format list shipped with the
// screening package (no shared data needed).
func withEvalList(t *testing.T) apptest.Option {
	path := filepath.Join(testutil.RepoRoot(t), "internal", "screening", "testdata", "evallist", "sdn.csv")
	return func(c *app.Config) { c.SanctionsList = path }
}

// TestTransferScreeningObfuscations: every disguised listed name is held
// (ACWP) whether it is the creditor's or the debtor's, and a clear name
// beside them settles.
func TestTransferScreeningObfuscations(t *testing.T) {
	names := obfuscatedNames(t)
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		debtor := newBank(t, e, "Debtor bank", "DEBTDJJDXXX", false)
		creditor := newBank(t, e, "Creditor bank", "CREDDJJDXXX", false)
		fund(t, e, debtor, 1_000_000)
		var txs []tx
		for i, n := range names {
			x := tx{Creditor: n, DebtorAgent: debtor.BIC, CreditorAgent: creditor.BIC, Amount: 100}
			if i%2 == 1 {
				x.Creditor, x.Debtor = "", n
			}
			txs = append(txs, x)
		}
		txs = append(txs, tx{Creditor: "Fatouma Ahmed Houssein", DebtorAgent: debtor.BIC, CreditorAgent: creditor.BIC, Amount: 100})
		rep := submitJSON(t, e, debtor.SK, message(newMsgID(), txs...), 202)
		for i, n := range names {
			if got := rep.Transactions[i].Status; got != "ACWP" {
				t.Errorf("%q: transaction %s, want ACWP (held for screening)", n, got)
			}
		}
		if last := rep.Transactions[len(names)]; last.Status != "ACSC" {
			t.Errorf("clear name: %s, want ACSC", last.Status)
		}
		verifyLedger(t, e)
	}, withEvalList(t))
}

// TestLiveTransfersNeedAList: with no sanctions list loaded a live pacs.008
// is refused with 503 screening_unavailable and nothing is recorded; test
// mode goes on unscreened.
func TestLiveTransfersNeedAList(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		debtor := newBank(t, e, "Debtor bank", "DEBTDJJDXXX", false)
		creditor := newBank(t, e, "Creditor bank", "CREDDJJDXXX", false)
		if err := e.Main.Merchants.SetKYC(ctx, debtor.MerchantID, "approved"); err != nil {
			t.Fatal(err)
		}
		if err := e.Main.Merchants.ConnectProvider(ctx, debtor.MerchantID, "bank_a", merchants.ProviderConfig{
			BaseURL: "http://127.0.0.1:9/bank_a", APIKey: "k", CallbackSecret: "c"}); err != nil {
			t.Fatal(err)
		}
		live, err := e.Main.Merchants.CreateKey(ctx, debtor.MerchantID, true, "secret")
		if err != nil {
			t.Fatal(err)
		}
		msg := message(newMsgID(), tx{DebtorAgent: debtor.BIC, CreditorAgent: creditor.BIC, Amount: 100})
		r := postJSON(e, live.Secret, "/banking/v1/transfers", msg)
		if r.Status != 503 || r.ErrorCode() != "screening_unavailable" {
			t.Fatalf("live transfer without a list: %d %s", r.Status, r.Body)
		}
		var n int
		if err := e.Main.DB.QueryRow(ctx, "SELECT COUNT(*) FROM transfers WHERE livemode = ?", true).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%d live transfers recorded (%v)", n, err)
		}
		fund(t, e, debtor, 1000)
		if rep := submitJSON(t, e, debtor.SK, message(newMsgID(), tx{DebtorAgent: debtor.BIC, CreditorAgent: creditor.BIC, Amount: 100}), 200); rep.Transactions[0].Status != "ACSC" {
			t.Fatalf("test-mode transfer without a list: %+v", rep)
		}
	})
}
