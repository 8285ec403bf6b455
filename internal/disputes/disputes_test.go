package disputes_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
)

// TestDisputeMoney: a dispute takes the intent's amount out of available
// (below zero when available is short), gives it back when won, and keeps it
// when lost; the balance history shows both movements; the ledger balances.
func TestDisputeMoney(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		t.Run("negative and back when won", func(t *testing.T) {
			pi := cardPayment(t, e, 1000, "4242424242424242")
			// 800 refunded: 200 of the payment is left in available.
			want(t, post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": pi, "amount_minor": 800}), 201, "")
			before := available(t, e, false, "USD")
			d := sandboxDispute(t, e, pi, "product_not_received")
			if d.Status != "needs_response" || d.AmountMinor != 1000 || d.Currency != "USD" || d.Reason != "product_not_received" ||
				!strings.HasPrefix(d.ID, "dp_") || d.Object != "dispute" || d.PaymentIntent != pi || d.Livemode || d.ClosedAt != nil ||
				!d.EvidenceDueBy.Equal(d.CreatedAt.Add(7*24*time.Hour)) || len(d.Evidence) != 6 {
				t.Fatalf("dispute %+v", d)
			}
			if got := available(t, e, false, "USD"); got != before-1000 || got >= 0 {
				t.Fatalf("available %d, want %d (below zero)", got, before-1000)
			}
			if in := getIntent(t, e, e.SK, pi); !in.Disputed {
				t.Fatalf("intent %+v is not disputed", in)
			}
			verifyLedger(t, e)
			r := post(e, e.SK, "/v1/disputes/"+d.ID, map[string]any{"evidence": map[string]any{"uncategorized_text": "winning_evidence",
				"receipt_text": "Order 1042"}, "submit": true})
			want(t, r, 200, "")
			if got := decode[dispute](t, r); got.Status != "under_review" || *got.Evidence["receipt_text"] != "Order 1042" {
				t.Fatalf("submitted %+v", got)
			}
			won := waitStatus(t, e, e.SK, d.ID, "under_review")
			if won.Status != "won" || won.ClosedAt == nil {
				t.Fatalf("decided %+v", won)
			}
			if got := available(t, e, false, "USD"); got != before {
				t.Fatalf("available %d after won, want %d", got, before)
			}
			if k := ledgerKinds(t, e, d.ID); !slices.Equal(k, []string{"dispute", "dispute_reversal"}) {
				t.Fatalf("ledger kinds %v", k)
			}
			if ev := eventTypes(t, e, d.ID); !slices.Equal(ev, []string{"dispute.created", "dispute.funds_withdrawn", "dispute.updated",
				"dispute.closed", "dispute.funds_reinstated"}) {
				t.Fatalf("events %v", ev)
			}
			// The balance history: both movements, signed, with the dispute as source.
			r = get(e, e.SK, "/v1/balance_transactions?source="+d.ID)
			want(t, r, 200, "")
			bt := decode[struct {
				Data []struct {
					Type   string `json:"type"`
					Amount int64  `json:"amount_minor"`
				} `json:"data"`
			}](t, r)
			if len(bt.Data) != 2 || bt.Data[0].Type != "dispute_reversal" || bt.Data[0].Amount != 1000 ||
				bt.Data[1].Type != "dispute" || bt.Data[1].Amount != -1000 {
				t.Fatalf("balance transactions %+v", bt.Data)
			}
			want(t, get(e, e.SK, "/v1/balance_transactions?type=dispute"), 200, "")
			// The settlement report (JSON) sums the day's dispute movements.
			r = get(e, e.SK, "/v1/reports/settlement?currency=USD&date="+time.Now().UTC().Format("2006-01-02"))
			want(t, r, 200, "")
			rep := decode[struct {
				Disputes []struct {
					Currency   string `json:"currency"`
					Count      int64  `json:"disputes_count"`
					Withdrawn  int64  `json:"withdrawn_minor"`
					Reinstated int64  `json:"reinstated_minor"`
				} `json:"disputes"`
			}](t, r)
			if len(rep.Disputes) != 1 || rep.Disputes[0].Currency != "USD" || rep.Disputes[0].Count != 1 ||
				rep.Disputes[0].Withdrawn != 1000 || rep.Disputes[0].Reinstated != 1000 {
				t.Fatalf("settlement report disputes %+v", rep.Disputes)
			}
			verifyLedger(t, e)
		})
		t.Run("lost keeps it withdrawn", func(t *testing.T) {
			pi := cardPayment(t, e, 700, "4242424242424242")
			before := available(t, e, false, "USD")
			d := sandboxDispute(t, e, pi, "")
			if d.Reason != "general" {
				t.Fatalf("default reason %q", d.Reason)
			}
			want(t, post(e, e.SK, "/v1/disputes/"+d.ID, map[string]any{"evidence": map[string]any{"uncategorized_text": "losing_evidence"},
				"submit": true}), 200, "")
			lost := waitStatus(t, e, e.SK, d.ID, "under_review")
			if lost.Status != "lost" || lost.ClosedAt == nil {
				t.Fatalf("decided %+v", lost)
			}
			if got := available(t, e, false, "USD"); got != before-700 {
				t.Fatalf("available %d, want %d", got, before-700)
			}
			if k := ledgerKinds(t, e, d.ID); !slices.Equal(k, []string{"dispute"}) {
				t.Fatalf("ledger kinds %v", k)
			}
			verifyLedger(t, e)
		})
		t.Run("other evidence stays under review", func(t *testing.T) {
			d := sandboxDispute(t, e, cardPayment(t, e, 300, "4242424242424242"), "duplicate")
			want(t, post(e, e.SK, "/v1/disputes/"+d.ID, map[string]any{"evidence": map[string]any{"uncategorized_text": "see receipt"},
				"submit": true}), 200, "")
			time.Sleep(400 * time.Millisecond) // four push delays
			if got := getDispute(t, e, e.SK, d.ID); got.Status != "under_review" {
				t.Fatalf("dispute %+v", got)
			}
		})
		t.Run("close accepts the loss", func(t *testing.T) {
			pi := cardPresentPayment(t, e, 4500)
			before := available(t, e, false, "DJF")
			d := sandboxDispute(t, e, pi, "fraudulent")
			r := post(e, e.SK, "/v1/disputes/"+d.ID+"/close", nil)
			want(t, r, 200, "")
			if got := decode[dispute](t, r); got.Status != "lost" || got.ClosedAt == nil {
				t.Fatalf("closed %+v", got)
			}
			want(t, post(e, e.SK, "/v1/disputes/"+d.ID+"/close", nil), 409, "invalid_state")
			want(t, post(e, e.SK, "/v1/disputes/"+d.ID, map[string]any{"evidence": map[string]any{"receipt_text": "late"}}), 409, "invalid_state")
			if got := available(t, e, false, "DJF"); got != before-4500 {
				t.Fatalf("available %d, want %d", got, before-4500)
			}
			if ev := eventTypes(t, e, d.ID); !slices.Equal(ev, []string{"dispute.created", "dispute.funds_withdrawn", "dispute.closed"}) {
				t.Fatalf("events %v", ev)
			}
			verifyLedger(t, e)
		})
	})
}

// TestEvidence: saving keeps needs_response; a text over 20,000 characters
// or an unknown field is a 400 naming the field; after submitting, or after
// evidence_due_by, evidence is read-only (409); refused requests change
// nothing.
func TestEvidence(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		d := sandboxDispute(t, e, cardPayment(t, e, 500, "4242424242424242"), "fraudulent")
		path := "/v1/disputes/" + d.ID
		r := post(e, e.SK, path, map[string]any{"evidence": map[string]any{"customer_name": "Amina Hassan", "receipt_text": "Receipt 1"},
			"metadata": map[string]string{"case": "7"}})
		want(t, r, 200, "")
		saved := decode[dispute](t, r)
		if saved.Status != "needs_response" || *saved.Evidence["customer_name"] != "Amina Hassan" || saved.Evidence["customer_email"] != nil ||
			saved.Metadata["case"] != "7" {
			t.Fatalf("saved %+v", saved)
		}
		// Fields not named keep their value; null clears.
		r = post(e, e.SK, path, map[string]any{"evidence": map[string]any{"customer_email": "a@example.dj", "receipt_text": nil}})
		want(t, r, 200, "")
		if got := decode[dispute](t, r); *got.Evidence["customer_name"] != "Amina Hassan" || *got.Evidence["customer_email"] != "a@example.dj" ||
			got.Evidence["receipt_text"] != nil {
			t.Fatalf("second save %+v", got)
		}
		events := len(eventTypes(t, e, d.ID))
		snapshot := getDispute(t, e, e.SK, d.ID)
		refused := func(body any, status int, code, param string) {
			t.Helper()
			r := post(e, e.SK, path, body)
			want(t, r, status, code)
			if param != "" && errParam(t, r) != param {
				t.Fatalf("param %q, want %q", errParam(t, r), param)
			}
			if got := getDispute(t, e, e.SK, d.ID); got.Status != snapshot.Status || !sameEvidence(got, snapshot) {
				t.Fatalf("a refused request changed the dispute: %+v", got)
			}
			if n := len(eventTypes(t, e, d.ID)); n != events {
				t.Fatalf("a refused request emitted events (%d, was %d)", n, events)
			}
		}
		long := strings.Repeat("é", 20001)
		refused(map[string]any{"evidence": map[string]any{"receipt_text": long}, "submit": true}, 400, "parameter_invalid", "evidence.receipt_text")
		refused(map[string]any{"evidence": map[string]any{"favourite_colour": "blue"}}, 400, "parameter_unknown", "evidence.favourite_colour")
		refused(map[string]any{"evidence": map[string]any{"customer_name": 7}}, 400, "parameter_invalid", "evidence.customer_name")
		refused(map[string]any{"evidence": "text"}, 400, "parameter_invalid", "evidence")
		refused(map[string]any{"submit": "yes"}, 400, "parameter_invalid", "submit")
		// Exactly the limit is accepted.
		want(t, post(e, e.SK, path, map[string]any{"evidence": map[string]any{"product_description": strings.Repeat("é", 20000)}}), 200, "")
		want(t, post(e, e.SK, path, map[string]any{"submit": true}), 200, "")
		events = len(eventTypes(t, e, d.ID))
		snapshot = getDispute(t, e, e.SK, d.ID)
		if snapshot.Status != "under_review" {
			t.Fatalf("submitted %+v", snapshot)
		}
		refused(map[string]any{"evidence": map[string]any{"customer_name": "Someone else"}}, 409, "invalid_state", "")
		refused(map[string]any{"submit": true}, 409, "invalid_state", "")
		refused(nil, 409, "invalid_state", "")
		want(t, post(e, e.SK, path+"/close", nil), 409, "invalid_state")

		// Past evidence_due_by: read-only.
		late := sandboxDispute(t, e, cardPayment(t, e, 400, "4242424242424242"), "general")
		if _, err := e.Main.DB.Exec(context.Background(), "UPDATE disputes SET evidence_due_by = ? WHERE id = ?",
			time.Now().Add(-time.Minute).UnixMicro(), late.ID); err != nil {
			t.Fatal(err)
		}
		want(t, post(e, e.SK, "/v1/disputes/"+late.ID, map[string]any{"evidence": map[string]any{"receipt_text": "too late"}}), 409, "invalid_state")
		if got := getDispute(t, e, e.SK, late.ID); got.Status != "needs_response" || got.Evidence["receipt_text"] != nil {
			t.Fatalf("late dispute %+v", got)
		}
		verifyLedger(t, e)
	})
}

func sameEvidence(a, b dispute) bool {
	for k, v := range a.Evidence {
		w := b.Evidence[k]
		if (v == nil) != (w == nil) || (v != nil && *v != *w) {
			return false
		}
	}
	return len(a.Evidence) == len(b.Evidence)
}

// TestSandboxTrigger: who and what the sandbox route may dispute.
func TestSandboxTrigger(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		pi := cardPayment(t, e, 600, "4242424242424242")
		t.Run("live key", func(t *testing.T) {
			live := e.LiveKey(t, "wallet_a")
			want(t, post(e, live, "/v1/sandbox/disputes", map[string]any{"payment_intent": pi}), 403, "permission_denied")
			if n := count(t, e, "SELECT COUNT(*) FROM disputes"); n != 0 {
				t.Fatalf("%d disputes", n)
			}
		})
		t.Run("bad input", func(t *testing.T) {
			r := post(e, e.SK, "/v1/sandbox/disputes", map[string]any{"payment_intent": pi, "reason": "bored"})
			want(t, r, 400, "parameter_invalid")
			if errParam(t, r) != "reason" {
				t.Fatalf("param %q", errParam(t, r))
			}
			want(t, post(e, e.SK, "/v1/sandbox/disputes", map[string]any{}), 400, "parameter_missing")
			want(t, post(e, e.SK, "/v1/sandbox/disputes", map[string]any{"payment_intent": "pi_nope"}), 404, "resource_missing")
			r = post(e, e.SK, "/v1/sandbox/disputes", map[string]any{"payment_intent": bankPayment(t, e, 100)})
			want(t, r, 400, "parameter_invalid")
			if errParam(t, r) != "payment_intent" {
				t.Fatalf("param %q", errParam(t, r))
			}
		})
		t.Run("not succeeded", func(t *testing.T) {
			r := post(e, e.SK, "/v1/payment_intents", map[string]any{"amount_minor": 100, "currency": "USD", "provider": "wallet_a",
				"return_url": "http://merchant.example/return", "metadata": map[string]string{"wallet_a_mode": "card"}})
			want(t, r, 201, "")
			want(t, post(e, e.SK, "/v1/sandbox/disputes", map[string]any{"payment_intent": decode[intent](t, r).ID}), 409, "invalid_state")
		})
		t.Run("fully refunded", func(t *testing.T) {
			ref := cardPayment(t, e, 250, "4242424242424242")
			want(t, post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": ref}), 201, "")
			want(t, post(e, e.SK, "/v1/sandbox/disputes", map[string]any{"payment_intent": ref}), 409, "invalid_state")
			if in := getIntent(t, e, e.SK, ref); in.Disputed {
				t.Fatalf("intent %+v", in)
			}
		})
		t.Run("disputed once; then no refund", func(t *testing.T) {
			d := sandboxDispute(t, e, pi, "fraudulent")
			want(t, post(e, e.SK, "/v1/sandbox/disputes", map[string]any{"payment_intent": pi}), 409, "invalid_state")
			before := available(t, e, false, "USD")
			want(t, post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": pi}), 409, "charge_disputed")
			want(t, post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": pi, "amount_minor": 1}), 409, "charge_disputed")
			if got := available(t, e, false, "USD"); got != before {
				t.Fatalf("available %d, was %d", got, before)
			}
			if n := count(t, e, "SELECT COUNT(*) FROM refunds WHERE payment_intent = ?", pi); n != 0 {
				t.Fatalf("%d refunds", n)
			}
			// Isolation: another merchant, and the live mode, see nothing.
			other, err := e.Main.Merchants.Create(context.Background(), merchants.CreateParams{Name: "Other"})
			if err != nil {
				t.Fatal(err)
			}
			want(t, get(e, other.SecretKeys[0], "/v1/disputes/"+d.ID), 404, "resource_missing")
			want(t, post(e, other.SecretKeys[0], "/v1/disputes/"+d.ID+"/close", nil), 404, "resource_missing")
			want(t, post(e, other.SecretKeys[0], "/v1/sandbox/disputes", map[string]any{"payment_intent": pi}), 404, "resource_missing")
			live := e.LiveKey(t, "wallet_a")
			want(t, get(e, live, "/v1/disputes/"+d.ID), 404, "resource_missing")
			r := get(e, other.SecretKeys[0], "/v1/disputes")
			want(t, r, 200, "")
			if l := decode[struct {
				Data []dispute `json:"data"`
			}](t, r); len(l.Data) != 0 {
				t.Fatalf("another merchant lists %d disputes", len(l.Data))
			}
			// Filters.
			r = get(e, e.SK, "/v1/disputes?status=needs_response&payment_intent="+pi)
			want(t, r, 200, "")
			if l := decode[struct {
				Data []dispute `json:"data"`
			}](t, r); len(l.Data) != 1 || l.Data[0].ID != d.ID {
				t.Fatalf("filtered list %+v", l.Data)
			}
			want(t, get(e, e.SK, "/v1/disputes?status=open"), 400, "parameter_invalid")
			verifyLedger(t, e)
		})
	})
}

// TestDisputedCard: the sandbox card 4000000000000259 succeeds and is
// disputed (fraudulent) PAYD_SANDBOX_PUSH_DELAY later, once.
func TestDisputedCard(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		before := available(t, e, false, "USD")
		pi := cardPayment(t, e, 1200, "4000000000000259")
		d := disputeOf(t, e, e.SK, pi)
		if d.Reason != "fraudulent" || d.Status != "needs_response" || d.AmountMinor != 1200 {
			t.Fatalf("dispute %+v", d)
		}
		if in := getIntent(t, e, e.SK, pi); !in.Disputed {
			t.Fatalf("intent %+v", in)
		}
		if got := available(t, e, false, "USD"); got != before {
			t.Fatalf("available %d, want %d (credited, then withdrawn)", got, before)
		}
		want(t, post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": pi}), 409, "charge_disputed")
		// Another card does not dispute.
		plain := cardPayment(t, e, 100, "4242424242424242")
		time.Sleep(400 * time.Millisecond)
		if in := getIntent(t, e, e.SK, plain); in.Disputed {
			t.Fatalf("plain card payment disputed")
		}
		verifyLedger(t, e)
	})
}

// TestDisputeRefundRace: a dispute and a refund of the same intent racing
// never both pass, on either engine.
func TestDisputeRefundRace(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		for range 5 {
			pi := cardPayment(t, e, 900, "4242424242424242")
			var wg sync.WaitGroup
			var dr, rr *apptest.Response
			wg.Add(2)
			go func() {
				defer wg.Done()
				dr = post(e, e.SK, "/v1/sandbox/disputes", map[string]any{"payment_intent": pi})
			}()
			go func() { defer wg.Done(); rr = post(e, e.SK, "/v1/refunds", map[string]any{"payment_intent": pi}) }()
			wg.Wait()
			switch {
			case dr.Status == 201 && rr.Status == 409 && rr.ErrorCode() == "charge_disputed":
			case rr.Status == 201 && dr.Status == 409 && dr.ErrorCode() == "invalid_state":
			default:
				t.Fatalf("dispute %d %s, refund %d %s", dr.Status, dr.Body, rr.Status, rr.Body)
			}
			disputes := count(t, e, "SELECT COUNT(*) FROM disputes WHERE payment_intent = ?", pi)
			refunds := count(t, e, "SELECT COUNT(*) FROM refunds WHERE payment_intent = ?", pi)
			if disputes+refunds != 1 {
				t.Fatalf("%d disputes and %d refunds", disputes, refunds)
			}
		}
		verifyLedger(t, e)
	})
}
