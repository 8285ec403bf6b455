package payouts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/payouts"
	"github.com/payd/payd/internal/store"
)

// TestSinglePayoutSucceeds: a payout reserves, pays and books exactly two
// postings; the float ends at the provider's clearing account.
func testSinglePayoutSucceeds(t *testing.T, e *apptest.Env) {
	topup(t, e, "DJF", 100_000)
	r := e.Post("/v1/payouts", map[string]any{"amount": 1500, "currency": "DJF", "provider": "wallet_b",
		"recipient_msisdn": "+25377123456", "recipient_name": "Fatouma Ahmed Houssein", "description": "salary",
		"metadata": map[string]string{"employee": "42"}})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var p payout
	r.JSON(t, &p)
	if p.Status != "succeeded" || p.Object != "payout" || !strings.HasPrefix(p.ID, "po_") || p.SucceededAt == nil ||
		p.Screening.Status != "clear" || p.Reference != p.ID || p.Metadata["employee"] != "42" || p.BatchID != nil {
		t.Fatalf("payout: %s", r.Body)
	}
	if b := balance(t, e, "DJF"); b.Available != 98_500 || b.Reserved != 0 {
		t.Fatalf("balance %+v", b)
	}
	if n := countRows(t, e, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ?", p.ID); n != 2 {
		t.Fatalf("%d ledger transactions for the payout, want reserve + paid", n)
	}
	evs, _ := events.ForObject(context.Background(), e.Main.DB, p.ID)
	if len(evs) != 2 || evs[0].Type != "payout.created" || evs[1].Type != "payout.succeeded" {
		t.Fatalf("events %+v", evs)
	}
	if got := getPayout(t, e, p.ID); got.Status != "succeeded" {
		t.Fatalf("retrieve: %+v", got)
	}
	e.Post("/v1/payouts", map[string]any{"amount": 700, "currency": "DJF", "provider": "bank_a", "recipient_account": "DJ0012345"})
	for _, c := range []struct {
		query string
		n     int
	}{
		{"", 2}, {"?status=succeeded", 2}, {"?status=failed", 0}, {"?provider=bank_a", 1},
		{"?recipient=%2B25377123456", 1}, {"?recipient=+25377123456", 1}, {"?recipient=DJ0012345", 1}, {"?limit=1", 1},
	} {
		var l struct {
			Data    []payout `json:"data"`
			HasMore bool     `json:"has_more"`
		}
		r := e.Get("/v1/payouts" + c.query)
		if r.Status != 200 {
			t.Fatalf("list %s: %d %s", c.query, r.Status, r.Body)
		}
		r.JSON(t, &l)
		if len(l.Data) != c.n {
			t.Fatalf("list %s: %d payouts, want %d", c.query, len(l.Data), c.n)
		}
	}
	if r := e.Get("/v1/payouts?status=paid"); r.Status != 400 || r.ErrorCode() != "parameter_invalid" {
		t.Fatalf("bad status filter: %d %s", r.Status, r.Body)
	}

	// More than available: 402 insufficient_balance, nothing reserved.
	before := balance(t, e, "DJF")
	n := countRows(t, e, "SELECT COUNT(*) FROM payouts WHERE merchant_id = ?", e.Merchant.MerchantID)
	r = e.Post("/v1/payouts", map[string]any{"amount": before.Available + 1, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"})
	if r.Status != 402 || r.ErrorCode() != "insufficient_balance" {
		t.Fatalf("short: %d %s", r.Status, r.Body)
	}
	if b := balance(t, e, "DJF"); b != before || countRows(t, e, "SELECT COUNT(*) FROM payouts WHERE merchant_id = ?", e.Merchant.MerchantID) != n {
		t.Fatalf("a refused payout moved money or was written: %+v", b)
	}
	if r := e.Post("/v1/payouts", map[string]any{"amount": before.Available, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"}); r.Status != 201 {
		t.Fatalf("exactly the available balance: %d %s", r.Status, r.Body)
	}

	// Another merchant's payout, or the other mode's, is 404 and not listed.
	requireHidden(t, e, "/v1/payouts", func(key string) []apptest.Request {
		return []apptest.Request{
			{Method: "GET", Path: "/v1/payouts/" + p.ID, Key: key},
			{Method: "POST", Path: "/v1/payouts/" + p.ID + "/retry", Key: key},
			{Method: "POST", Path: "/v1/payouts/" + p.ID + "/approve", Key: key},
		}
	})
	verifyLedger(t, e)
}

// TestSinglePayoutScenarios walks the sandbox scenarios' payout outcomes.
func testSinglePayoutScenarios(t *testing.T, e *apptest.Env) {
	topup(t, e, "DJF", 1_000_000)
	cases := []struct {
		name           string
		body           map[string]any
		header         string
		status         int
		payoutStatus   string
		failureCode    string
		wantErrorParam string
	}{
		{"insufficient_funds by number", map[string]any{"provider": "wallet_b", "recipient_msisdn": "+253000000002"}, "", 201, "failed", "insufficient_funds", ""},
		{"insufficient_funds by header", map[string]any{"provider": "wallet_a", "recipient_msisdn": "+25377000001"}, "insufficient_funds", 201, "failed", "insufficient_funds", ""},
		{"account_closed by account", map[string]any{"provider": "bank_a", "recipient_account": "sandbox_account_closed"}, "", 201, "failed", "account_not_found", ""},
		{"account_closed by number on bank_b", map[string]any{"provider": "bank_b", "recipient_account": "DJ77"}, "account_closed", 201, "failed", "account_not_found", ""},
		{"velocity_limit", map[string]any{"provider": "wallet_b", "recipient_msisdn": "+2530000000010"}, "", 201, "failed", "velocity_limit_exceeded", ""},
		{"duplicate_msisdn", map[string]any{"provider": "wallet_a", "recipient_msisdn": "+253000000007"}, "", 201, "failed", "wallet_locked", ""},
		{"success", map[string]any{"provider": "wallet_b", "recipient_msisdn": "+253000000001"}, "", 201, "succeeded", "", ""},
		{"otp_expired has no OTP step", map[string]any{"provider": "wallet_b", "recipient_msisdn": "+25377000002"}, "otp_expired", 201, "succeeded", "", ""},
		{"sandbox_webhook_fail", map[string]any{"provider": "wallet_b", "recipient_msisdn": "+253000000001"}, "sandbox_webhook_fail", 201, "succeeded", "", ""},
		{"kyc_blocked", map[string]any{"provider": "wallet_b", "recipient_msisdn": "+253000000008"}, "", 201, "held", "", ""},
		{"network_timeout", map[string]any{"provider": "bank_b", "recipient_account": "DJ99"}, "network_timeout", 201, "processing", "", ""},
		{"velocity_limit not offered on wallet_a", map[string]any{"provider": "wallet_a", "recipient_msisdn": "+2530000000010"}, "", 400, "", "", "recipient_msisdn"},
		{"unknown scenario header", map[string]any{"provider": "wallet_a", "recipient_msisdn": "+25377000003"}, "lucky", 400, "", "", "X-Service-Scenario"},
		{"unknown account scenario", map[string]any{"provider": "bank_a", "recipient_account": "sandbox_nope"}, "", 400, "", "", "recipient_account"},
		{"card scenario on a payout", map[string]any{"provider": "wallet_a", "recipient_msisdn": "+25377000004"}, "card_declined", 400, "", "", "X-Service-Scenario"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := balance(t, e, "DJF")
			c.body["amount"], c.body["currency"] = 1000, "DJF"
			req := apptest.Request{Method: "POST", Path: "/v1/payouts", Key: e.SK, Body: c.body}
			if c.header != "" {
				req.Headers = map[string]string{"X-Service-Scenario": c.header}
			}
			r := e.Do(req)
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
			}
			if c.status == 400 {
				var eb errBody
				r.JSON(t, &eb)
				if eb.Error.Code != "invalid_scenario" || eb.Error.Param != c.wantErrorParam {
					t.Fatalf("error %s", r.Body)
				}
				if b := balance(t, e, "DJF"); b != before {
					t.Fatalf("a refused payout moved money: %+v → %+v", before, b)
				}
				return
			}
			var p payout
			r.JSON(t, &p)
			if p.Status != c.payoutStatus || (c.failureCode != "" && (p.FailureCode == nil || *p.FailureCode != c.failureCode)) {
				t.Fatalf("payout %s", r.Body)
			}
			switch p.Status {
			case "failed":
				if b := balance(t, e, "DJF"); b != before {
					t.Fatalf("a failed payout kept money: %+v → %+v", before, b)
				}
				evs, _ := events.ForObject(context.Background(), e.Main.DB, p.ID)
				if len(evs) != 2 || evs[1].Type != "payout.failed" {
					t.Fatalf("events %+v", evs)
				}
			case "processing":
				p = waitPayout(t, e, p.ID, "failed")
				if *p.FailureCode != "provider_timeout" {
					t.Fatalf("timeout ended %+v", p)
				}
			case "held":
				if b := balance(t, e, "DJF"); b.Reserved != before.Reserved+1000 {
					t.Fatalf("a held payout is not reserved: %+v", b)
				}
				rr := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/" + p.ID + "/review", Key: e.SK2, Body: map[string]string{"decision": "release"}})
				if rr.Status != 200 {
					t.Fatalf("release: %d %s", rr.Status, rr.Body)
				}
				rr.JSON(t, &p)
				if p.Status != "succeeded" {
					t.Fatalf("released kyc hold: %s", rr.Body)
				}
			}
			if c.header == "sandbox_webhook_fail" {
				if n := countRows(t, e, "SELECT COUNT(*) FROM sandbox_webhook_fail WHERE object_id = ?", p.ID); n != 1 {
					t.Fatal("sandbox_webhook_fail payout not marked")
				}
			}
		})
	}
	verifyLedger(t, e)
}

// TestSinglePayoutValidation: each rule gives a 400 naming the field, and
// nothing is written.
func testSinglePayoutValidation(t *testing.T, e *apptest.Env) {
	topup(t, e, "DJF", 100_000)
	base := func() map[string]any {
		return map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"}
	}
	cases := []struct {
		name  string
		edit  func(m map[string]any)
		param string
		code  string
	}{
		{"amount missing", func(m map[string]any) { delete(m, "amount") }, "amount", "parameter_missing"},
		{"amount and amount_minor", func(m map[string]any) { m["amount_minor"] = 100 }, "amount_minor", "parameter_invalid"},
		{"amount_minor zero", func(m map[string]any) { delete(m, "amount"); m["amount_minor"] = 0 }, "amount_minor", "amount_invalid"},
		{"amount zero", func(m map[string]any) { m["amount"] = 0 }, "amount", "amount_invalid"},
		{"amount negative", func(m map[string]any) { m["amount"] = -5 }, "amount", "amount_invalid"},
		{"amount fractional", func(m map[string]any) { m["amount"] = 1.5 }, "amount", "parameter_invalid"},
		{"amount string", func(m map[string]any) { m["amount"] = "100" }, "amount", "parameter_invalid"},
		{"currency missing", func(m map[string]any) { delete(m, "currency") }, "currency", "parameter_missing"},
		{"currency unknown", func(m map[string]any) { m["currency"] = "XYZ" }, "currency", "currency_invalid"},
		{"currency lower case", func(m map[string]any) { m["currency"] = "djf" }, "currency", "currency_invalid"},
		{"currency not for the rail", func(m map[string]any) { m["currency"] = "ETB" }, "currency", "currency_not_supported"},
		{"provider missing", func(m map[string]any) { delete(m, "provider") }, "provider", "parameter_missing"},
		{"provider unknown", func(m map[string]any) { m["provider"] = "wallet_z" }, "provider", "provider_invalid"},
		{"card gateway is no payout rail", func(m map[string]any) { m["provider"] = "card_gateway_cnp" }, "provider", "provider_invalid"},
		{"both recipients", func(m map[string]any) { m["recipient_account"] = "DJ001" }, "recipient_account", "recipient_conflict"},
		{"wallet without msisdn", func(m map[string]any) { delete(m, "recipient_msisdn") }, "recipient_msisdn", "parameter_missing"},
		{"bank without account", func(m map[string]any) { m["provider"] = "bank_a" }, "recipient_account", "parameter_missing"},
		{"bank with nothing", func(m map[string]any) { m["provider"] = "bank_b"; delete(m, "recipient_msisdn") }, "recipient_account", "parameter_missing"},
		{"msisdn not E.164", func(m map[string]any) { m["recipient_msisdn"] = "77123456" }, "recipient_msisdn", "msisdn_invalid"},
		{"description too long", func(m map[string]any) { m["description"] = strings.Repeat("é", 141) }, "description", "parameter_too_long"},
		{"name too long", func(m map[string]any) { m["recipient_name"] = strings.Repeat("a", 141) }, "recipient_name", "parameter_too_long"},
		{"control characters", func(m map[string]any) { m["description"] = "a\x00b" }, "description", "parameter_invalid"},
		{"unknown field", func(m map[string]any) { m["colour"] = "red" }, "colour", "parameter_unknown"},
		{"metadata not strings", func(m map[string]any) { m["metadata"] = map[string]any{"n": 1} }, "metadata", "parameter_invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := base()
			c.edit(m)
			r := e.Post("/v1/payouts", m)
			var eb errBody
			r.JSON(t, &eb)
			if r.Status != 400 || eb.Error.Param != c.param || eb.Error.Code != c.code {
				t.Fatalf("got %d %s, want 400 %s %s", r.Status, r.Body, c.param, c.code)
			}
		})
	}
	if n := countRows(t, e, "SELECT COUNT(*) FROM payouts WHERE merchant_id = ?", e.Merchant.MerchantID); n != 0 {
		t.Fatalf("%d payouts written by refused requests", n)
	}
	if b := balance(t, e, "DJF"); b.Available != 100_000 || b.Reserved != 0 {
		t.Fatalf("balance %+v", b)
	}
}

// TestFourEyesSinglePayout: over the threshold a payout waits for another
// principal; its creator (key or portal user) is refused.
func testFourEyesSinglePayout(t *testing.T, e *apptest.Env) {
	ctx := context.Background()
	topup(t, e, "DJF", 100_000)
	if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 1000}); r.Status != 200 {
		t.Fatalf("settings %d %s", r.Status, r.Body)
	}
	var p payout
	e.Post("/v1/payouts", map[string]any{"amount": 1000, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"}).JSON(t, &p)
	if p.Status != "succeeded" {
		t.Fatalf("at the threshold: %+v", p)
	}
	r := e.Post("/v1/payouts", map[string]any{"amount": 1001, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"})
	r.JSON(t, &p)
	if r.Status != 201 || p.Status != "requires_approval" {
		t.Fatalf("over the threshold: %d %s", r.Status, r.Body)
	}
	if r := e.Post("/v1/payouts/"+p.ID+"/approve", nil); r.Status != 403 || r.ErrorCode() != "self_approval_not_allowed" {
		t.Fatalf("creator approves: %d %s", r.Status, r.Body)
	}
	r = e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/" + p.ID + "/approve", Key: e.SK2})
	r.JSON(t, &p)
	key2, _ := e.Main.Merchants.Authenticate(ctx, e.SK2)
	if r.Status != 200 || p.Status != "succeeded" || p.ApprovedBy == nil || *p.ApprovedBy != key2.ID {
		t.Fatalf("second key approves: %d %s", r.Status, r.Body)
	}
	if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/" + p.ID + "/approve", Key: e.SK2}); r.Status != 409 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("approve twice: %d %s", r.Status, r.Body)
	}

	// Portal users are principals too.
	svc := e.Main.Payouts()
	u1, err := e.Main.Merchants.CreateUser(ctx, e.Merchant.MerchantID, "ops1@example.com", "correct horse battery", "approver")
	if err != nil {
		t.Fatal(err)
	}
	u2, err := e.Main.Merchants.CreateUser(ctx, e.Merchant.MerchantID, "ops2@example.com", "correct horse battery", "approver")
	if err != nil {
		t.Fatal(err)
	}
	user := func(u merchants.User) auth.Principal {
		return auth.Principal{ID: u.ID, MerchantID: u.MerchantID, Kind: auth.KindUser, Role: u.Role}
	}
	amount := int64(5000)
	byUser, err := svc.Create(ctx, store.NoClaim, user(u1), payoutsCreate(amount))
	if err != nil || byUser.Status != "requires_approval" {
		t.Fatalf("user create: %v %+v", err, byUser)
	}
	if _, err := svc.Approve(ctx, store.NoClaim, user(u1), byUser.ID); !isCode(err, "self_approval_not_allowed") {
		t.Fatalf("user approves own payout: %v", err)
	}
	approved, err := svc.Approve(ctx, store.NoClaim, user(u2), byUser.ID)
	if err != nil || approved.Status != "succeeded" || *approved.ApprovedBy != u2.ID {
		t.Fatalf("other user approves: %v %+v", err, approved)
	}
	// Batches too: a user cannot approve the batch it made; a key can.
	req, err := payouts.ParseBatchJSON([]byte(`{"currency":"DJF","rows":[{"recipient_msisdn":"+25377000001","amount":700,"provider":"wallet_b","reference":"u1"}]}`), false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.CreateBatch(ctx, store.NoClaim, user(u1), req)
	if err != nil || b.CreatedBy != u1.ID {
		t.Fatalf("user creates a batch: %v %+v", err, b)
	}
	if _, err := svc.ApproveBatch(ctx, store.NoClaim, user(u1), b.ID); !isCode(err, "self_approval_not_allowed") {
		t.Fatalf("user approves own batch: %v", err)
	}
	if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk/" + b.ID + "/approve", Key: e.SK}); r.Status != 200 {
		t.Fatalf("a key approves a user's batch: %d %s", r.Status, r.Body)
	}
	// A key approves what a user made, and a user what a key made.
	r = e.Post("/v1/payouts", map[string]any{"amount": 2000, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456"})
	r.JSON(t, &p)
	if approved, err = svc.Approve(ctx, store.NoClaim, user(u1), p.ID); err != nil || approved.Status != "succeeded" {
		t.Fatalf("user approves a key's payout: %v", err)
	}
	verifyLedger(t, e)
}

// TestScreeningHoldAndReview: a listed name holds the payout with its
// matches; review is four-eyes; reject cancels and releases the float.
func testScreeningHoldAndReview(t *testing.T, e *apptest.Env) {
	topup(t, e, "DJF", 100_000)
	create := func(name string) payout {
		var p payout
		r := e.Post("/v1/payouts", map[string]any{"amount": 3000, "currency": "DJF", "provider": "wallet_b",
			"recipient_msisdn": "+25377123456", "recipient_name": name})
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &p)
		return p
	}
	clear := create("Fatouma Ahmed Houssein")
	if clear.Status != "succeeded" || clear.Screening.Status != "clear" {
		t.Fatalf("clear name: %+v", clear)
	}
	held := create("Daniel Moreno")
	if held.Status != "held" || held.Screening.Status != "hit" || len(held.Screening.Matches) == 0 ||
		held.Screening.Matches[0].EntryID != 15102 || held.Screening.Matches[0].Score <= 0 {
		t.Fatalf("listed name: %+v", held)
	}
	if b := balance(t, e, "DJF"); b.Reserved != 3000 {
		t.Fatalf("held payout not reserved: %+v", b)
	}
	review := func(key, id, decision string) *apptest.Response {
		return e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/" + id + "/review", Key: key,
			Body: map[string]string{"decision": decision, "note": "checked the passport"}})
	}
	if r := review(e.SK, held.ID, "reject"); r.Status != 403 || r.ErrorCode() != "self_approval_not_allowed" {
		t.Fatalf("creator reviews: %d %s", r.Status, r.Body)
	}
	if r := review(e.SK2, held.ID, "maybe"); r.Status != 400 || r.ErrorCode() != "parameter_invalid" {
		t.Fatalf("bad decision: %d %s", r.Status, r.Body)
	}
	r := review(e.SK2, held.ID, "reject")
	var p payout
	r.JSON(t, &p)
	if r.Status != 200 || p.Status != "canceled" || p.FailureCode == nil || *p.FailureCode != "screening_rejected" {
		t.Fatalf("reject: %d %s", r.Status, r.Body)
	}
	if b := balance(t, e, "DJF"); b.Reserved != 0 || b.Available != 97_000 {
		t.Fatalf("reject did not release: %+v", b)
	}
	if r := review(e.SK2, held.ID, "release"); r.Status != 409 {
		t.Fatalf("review a canceled payout: %d", r.Status)
	}
	held = create("Elvis Angus Logan Morey")
	r = review(e.SK2, held.ID, "release")
	r.JSON(t, &p)
	if r.Status != 200 || p.Status != "succeeded" {
		t.Fatalf("release: %d %s", r.Status, r.Body)
	}
	evs, _ := events.ForObject(context.Background(), e.Main.DB, held.ID)
	if len(evs) != 3 || evs[0].Type != "payout.created" || evs[1].Type != "payout.held" || evs[2].Type != "payout.succeeded" {
		t.Fatalf("events %+v", evs)
	}
	verifyLedger(t, e)
}

// TestRetry: a failed payout is retried under its reference; anything else
// is 409.
func testRetry(t *testing.T, e *apptest.Env) {
	topup(t, e, "DJF", 10_000)
	var p payout
	e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts", Key: e.SK, Headers: map[string]string{"X-Service-Scenario": "insufficient_funds"},
		Body: map[string]any{"amount": 4000, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456", "reference": "pay-7"}}).JSON(t, &p)
	if p.Status != "failed" || p.Reference != "pay-7" {
		t.Fatalf("payout %+v", p)
	}
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/" + p.ID + "/retry", Key: e.SK, Headers: map[string]string{"X-Service-Scenario": "success"}})
	var retried payout
	r.JSON(t, &retried)
	if r.Status != 200 || retried.Status != "processing" || retried.FailureCode != nil || retried.Reference != "pay-7" {
		t.Fatalf("retry: %d %s", r.Status, r.Body)
	}
	p = waitPayout(t, e, p.ID, "succeeded")
	if r := e.Post("/v1/payouts/"+p.ID+"/retry", nil); r.Status != 409 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("retry a succeeded payout: %d %s", r.Status, r.Body)
	}
	// reserve, failed, reserve again, paid
	if n := countRows(t, e, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ?", p.ID); n != 4 {
		t.Fatalf("%d ledger transactions", n)
	}
	if n := countRows(t, e, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ? AND kind = 'payout_paid'", p.ID); n != 1 {
		t.Fatalf("paid %d times", n)
	}
	if b := balance(t, e, "DJF"); b.Available != 6000 || b.Reserved != 0 {
		t.Fatalf("balance %+v", b)
	}
	if r := e.Post("/v1/payouts", map[string]any{"amount": 1, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456", "reference": "pay-7"}); r.Status != 409 || r.ErrorCode() != "reference_taken" {
		t.Fatalf("reference reused: %d %s", r.Status, r.Body)
	}
	verifyLedger(t, e)
}
