package payouts_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/payouts"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// payout is the payout object as tests read it.
type payout struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	Status           string            `json:"status"`
	Amount           int64             `json:"amount"`
	Currency         string            `json:"currency"`
	Provider         string            `json:"provider"`
	RecipientMSISDN  *string           `json:"recipient_msisdn"`
	RecipientAccount *string           `json:"recipient_account"`
	RecipientName    *string           `json:"recipient_name"`
	Description      *string           `json:"description"`
	Metadata         map[string]string `json:"metadata"`
	Reference        string            `json:"reference"`
	BatchID          *string           `json:"batch_id"`
	Screening        struct {
		Status  string `json:"status"`
		Matches []struct {
			EntryID     int      `json:"entry_id"`
			List        string   `json:"list"`
			ListName    string   `json:"list_name"`
			MatchedName string   `json:"matched_name"`
			Score       float64  `json:"score"`
			Explanation []string `json:"explanation"`
		} `json:"matches"`
	} `json:"screening"`
	FailureCode    *string `json:"failure_code"`
	FailureMessage *string `json:"failure_message"`
	ApprovedBy     *string `json:"approved_by"`
	Livemode       bool    `json:"livemode"`
	SucceededAt    *string `json:"succeeded_at"`
	FailedAt       *string `json:"failed_at"`
}

// batch is either batch object as tests read it.
type batch struct {
	ID               string  `json:"id"`
	Object           string  `json:"object"`
	Status           string  `json:"status"`
	Currency         string  `json:"currency"`
	Description      *string `json:"description"`
	RowCount         int     `json:"row_count"`
	TotalAmountMinor int64   `json:"total_amount_minor"`
	CreatedBy        string  `json:"created_by"`
	ApprovedBy       *string `json:"approved_by"`
	RowsSucceeded    *int    `json:"rows_succeeded"`
	RowsFailed       *int    `json:"rows_failed"`
	RowsCanceled     *int    `json:"rows_canceled"`
	RowsPending      *int    `json:"rows_pending"`
	ItemCount        int     `json:"item_count"`
	Succeeded        int     `json:"succeeded"`
	Failed           int     `json:"failed"`
	Canceled         int     `json:"canceled"`
	Pending          int     `json:"pending"`
}

// rowErr is one entry of error.rows.
type rowErr struct {
	Row     int    `json:"row"`
	Param   string `json:"param"`
	Message string `json:"message"`
}

type errBody struct {
	Error struct {
		Type    string   `json:"type"`
		Code    string   `json:"code"`
		Message string   `json:"message"`
		Param   string   `json:"param"`
		Rows    []rowErr `json:"rows"`
	} `json:"error"`
}

// fixtureList is the small sanctions fixture in the shared data.
func fixtureList(t testing.TB) string {
	return testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv")
}

// withSanctions configures the fixture list.
func withSanctions(t testing.TB) apptest.Option {
	path := fixtureList(t)
	return func(c *app.Config) { c.SanctionsList = path }
}

// topup adds sandbox funds.
func topup(t *testing.T, e *apptest.Env, currency string, amount int64) {
	t.Helper()
	if r := e.Post("/v1/sandbox/topups", map[string]any{"currency": currency, "amount_minor": amount}); r.Status != 201 {
		t.Fatalf("topup: %d %s", r.Status, r.Body)
	}
}

// balance returns the merchant's test-mode balance in currency.
func balance(t *testing.T, e *apptest.Env, currency string) ledger.Balance {
	t.Helper()
	bs, err := ledger.Balances(context.Background(), e.Main.DB, e.Merchant.MerchantID, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.Currency == currency {
			return b
		}
	}
	return ledger.Balance{Currency: currency}
}

// verifyLedger checks the book's invariants.
func verifyLedger(t *testing.T, e *apptest.Env) {
	t.Helper()
	if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
		t.Fatalf("ledger: %v", err)
	}
}

// getPayout reads a payout over the API.
func getPayout(t *testing.T, e *apptest.Env, id string) payout {
	t.Helper()
	var p payout
	r := e.Get("/v1/payouts/" + id)
	if r.Status != 200 {
		t.Fatalf("get %s: %d %s", id, r.Status, r.Body)
	}
	r.JSON(t, &p)
	return p
}

// getBatch reads a batch over the API.
func getBatch(t *testing.T, e *apptest.Env, id string) batch {
	t.Helper()
	var b batch
	r := e.Get("/v1/payouts/bulk/" + id)
	if r.Status != 200 {
		t.Fatalf("get %s: %d %s", id, r.Status, r.Body)
	}
	r.JSON(t, &b)
	return b
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPayout waits until the payout reaches status.
func waitPayout(t *testing.T, e *apptest.Env, id, status string) payout {
	t.Helper()
	var p payout
	waitFor(t, fmt.Sprintf("payout %s to be %s", id, status), 30*time.Second, func() bool {
		p = getPayout(t, e, id)
		return p.Status == status
	})
	return p
}

// countRows counts rows with a query.
func countRows(t *testing.T, e *apptest.Env, q string, args ...any) int {
	t.Helper()
	return storetest.Count(t, e.Main.DB, q, args...)
}

func sp(s string) *string { return &s }

func payoutsCreate(amount int64) payouts.CreateParams {
	return payouts.CreateParams{Amount: &amount, Currency: "DJF", Provider: "wallet_b", RecipientMSISDN: "+25377123456"}
}

func isCode(err error, code string) bool { return errs.IsCode(err, code) }
