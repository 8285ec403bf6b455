package sim_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sim"
)

const (
	simCardApproved = "4242424242424242"
	simCardDeclined = "4000000000000002"
	simCard3DS      = "4000000000003220"
)

func (r reply) authorization(t *testing.T) protocol.CardAuthorization {
	t.Helper()
	var a protocol.CardAuthorization
	if err := json.Unmarshal(r.body, &a); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return a
}

// authorize sends an authorisation of pan under "<ref>:authorize".
func (h *harness) authorize(rail, ref, pan string, capture bool, mutate ...func(*protocol.CardAuthorizationRequest)) reply {
	h.t.Helper()
	req := protocol.CardAuthorizationRequest{Reference: ref, AmountMinor: 500, Currency: "DJF", Capture: capture, EntryMode: "chip",
		TerminalID: "term_1", Card: protocol.Card{Number: pan, ExpMonth: 12, ExpYear: time.Now().Year() + 2, Cryptogram: "0123456789ABCDEF"}}
	for _, m := range mutate {
		m(&req)
	}
	return h.call("POST", "/"+rail+"/v1/card_authorizations", ref+":authorize", req)
}

// TestCardGateway: the test cards (approved, declined, expired, 3-D Secure
// approved at a terminal), idempotent authorisation, status by id and by
// reference, capture, void and refunds, and no card number in any answer or
// log line.
func TestCardGateway(t *testing.T) {
	h := start(t, sim.Config{})
	r := h.authorize("wallet_a", "tpay_ok", simCardApproved, true)
	a := r.authorization(t)
	if r.status != 201 || a.Status != protocol.AuthorizationCaptured || a.CapturedMinor != 500 || len(a.AuthCode) != 6 ||
		a.Card == nil || a.Card.Brand != "visa" || a.Card.Last4 != "4242" || a.Reference != "tpay_ok" || !strings.HasPrefix(a.ID, "cauth_") {
		t.Fatalf("approved: %d %s", r.status, r.body)
	}
	// The same key and request: the first answer, nothing authorised twice.
	again := h.authorize("wallet_a", "tpay_ok", simCardApproved, true)
	if again.status != 201 || again.header.Get(protocol.HeaderReplayed) != "true" || string(again.body) != string(r.body) {
		t.Fatalf("replay: %d %s", again.status, again.body)
	}
	if n := h.srv.CardAuthorizations(apiKey); n != 1 {
		t.Fatalf("%d authorisations", n)
	}
	// Another key with the same reference: 409 duplicate_reference.
	dup := h.call("POST", "/wallet_a/v1/card_authorizations", "other-key", protocol.CardAuthorizationRequest{Reference: "tpay_ok",
		AmountMinor: 500, Currency: "DJF", EntryMode: "chip", Card: protocol.Card{Number: simCardApproved, ExpMonth: 1, ExpYear: 2099, Cryptogram: "0123456789ABCDEF"}})
	if dup.status != 409 || dup.code() != "duplicate_reference" {
		t.Fatalf("duplicate reference: %d %s", dup.status, dup.body)
	}
	for _, path := range []string{"/wallet_a/v1/card_authorizations?reference=tpay_ok", "/wallet_a/v1/card_authorizations/" + a.ID, "/wallet_a/v1/card_authorizations/tpay_ok"} {
		if s := h.call("GET", path, "", nil); s.status != 200 || s.authorization(t).ID != a.ID {
			t.Fatalf("status %s: %d %s", path, s.status, s.body)
		}
	}
	if s := h.call("GET", "/wallet_a/v1/card_authorizations?reference=tpay_never", "", nil); s.status != 404 || s.code() != "authorization_not_found" {
		t.Fatalf("unknown reference: %d %s", s.status, s.body)
	}

	declined := h.authorize("wallet_a", "tpay_no", simCardDeclined, true).authorization(t)
	if declined.Status != protocol.AuthorizationDeclined || declined.Failure == nil || declined.Failure.DeclineCode != "generic_decline" || declined.AuthCode != "" {
		t.Fatalf("declined: %+v", declined)
	}
	expired := h.authorize("wallet_a", "tpay_exp", simCardApproved, true, func(r *protocol.CardAuthorizationRequest) {
		r.Card.ExpYear, r.Card.ExpMonth = 2020, 1
	}).authorization(t)
	if expired.Status != protocol.AuthorizationDeclined || expired.Failure.DeclineCode != "expired_card" {
		t.Fatalf("expired: %+v", expired)
	}
	if s := h.authorize("wallet_a", "tpay_3ds", simCard3DS, true).authorization(t); s.Status != protocol.AuthorizationCaptured {
		t.Fatalf("3-D Secure card at a terminal: %+v", s)
	}

	// Bad requests name the field, never its value; other rails have no gateway.
	for field, m := range map[string]func(*protocol.CardAuthorizationRequest){
		"card.number":     func(r *protocol.CardAuthorizationRequest) { r.Card.Number = "4242424242424241" },
		"card.cryptogram": func(r *protocol.CardAuthorizationRequest) { r.Card.Cryptogram = "abc" },
		"card.exp_month":  func(r *protocol.CardAuthorizationRequest) { r.Card.ExpMonth = 13 },
		"amount_minor":    func(r *protocol.CardAuthorizationRequest) { r.AmountMinor = 0 },
		"currency":        func(r *protocol.CardAuthorizationRequest) { r.Currency = "ETB" },
		"entry_mode":      func(r *protocol.CardAuthorizationRequest) { r.EntryMode = "swipe" },
	} {
		bad := h.authorize("wallet_a", "tpay_bad_"+strings.ReplaceAll(field, ".", "_"), simCardApproved, true, m)
		var e protocol.ErrorBody
		json.Unmarshal(bad.body, &e)
		if bad.status != 400 || e.Error.Field != field || strings.Contains(string(bad.body), "424242424242") {
			t.Fatalf("%s: %d %s", field, bad.status, bad.body)
		}
	}
	if r := h.authorize("bank_a", "tpay_bank", simCardApproved, true); r.status != 404 || r.code() != "not_supported" {
		t.Fatalf("card gateway on bank_a: %d %s", r.status, r.body)
	}

	t.Run("capture and void", func(t *testing.T) {
		held := h.authorize("wallet_a", "tpay_held", simCardApproved, false).authorization(t)
		if held.Status != protocol.AuthorizationAuthorized || held.CapturedMinor != 0 {
			t.Fatalf("held: %+v", held)
		}
		if r := h.call("POST", "/wallet_a/v1/card_authorizations/tpay_held/capture", "tpay_held:capture", protocol.CardCaptureRequest{AmountMinor: 600}); r.status != 400 {
			t.Fatalf("capture above the authorised amount: %d %s", r.status, r.body)
		}
		c := h.call("POST", "/wallet_a/v1/card_authorizations/tpay_held/capture", "tpay_held:capture2", protocol.CardCaptureRequest{AmountMinor: 300})
		if got := c.authorization(t); c.status != 200 || got.Status != protocol.AuthorizationCaptured || got.CapturedMinor != 300 {
			t.Fatalf("capture: %d %s", c.status, c.body)
		}
		if r := h.call("POST", "/wallet_a/v1/card_authorizations/tpay_held/void", "tpay_held:void", protocol.CardVoidRequest{}); r.status != 409 || r.code() != "invalid_state" {
			t.Fatalf("void after capture: %d %s", r.status, r.body)
		}
		h.authorize("wallet_a", "tpay_released", simCardApproved, false)
		v := h.call("POST", "/wallet_a/v1/card_authorizations/tpay_released/void", "tpay_released:void", protocol.CardVoidRequest{})
		if got := v.authorization(t); v.status != 200 || got.Status != protocol.AuthorizationVoided {
			t.Fatalf("void: %d %s", v.status, v.body)
		}
		if r := h.call("POST", "/wallet_a/v1/card_authorizations/tpay_released/capture", "tpay_released:capture", protocol.CardCaptureRequest{AmountMinor: 100}); r.status != 409 {
			t.Fatalf("capture after void: %d %s", r.status, r.body)
		}
	})

	t.Run("refunds", func(t *testing.T) {
		refund := func(auth, ref string, amount int64) reply {
			return h.call("POST", "/wallet_a/v1/card_authorizations/"+auth+"/refunds", ref, protocol.CardRefundRequest{Reference: ref,
				AmountMinor: amount, Currency: "DJF", CallbackURL: h.rc.URL + "/providers/wallet_a/callbacks"})
		}
		r := refund("tpay_ok", "re_card_1", 200)
		var rf protocol.Refund
		json.Unmarshal(r.body, &rf)
		if r.status != 201 || rf.Status != protocol.RefundSucceeded || rf.PaymentReference != "tpay_ok" {
			t.Fatalf("refund: %d %s", r.status, r.body)
		}
		if ev := h.rc.wait(t); ev.Type != protocol.EventRefundSucceeded || ev.Data.Refund.Reference != "re_card_1" {
			t.Fatalf("refund callback %+v", ev)
		}
		if s := h.call("GET", "/wallet_a/v1/refunds?reference=re_card_1", "", nil); s.status != 200 {
			t.Fatalf("refund status: %d %s", s.status, s.body)
		}
		if r := refund("tpay_ok", "re_card_2", 301); r.status != 400 || r.code() != "amount_too_large" {
			t.Fatalf("refund above what is left: %d %s", r.status, r.body)
		}
		if r := refund("tpay_no", "re_card_3", 100); r.status != 400 || r.code() != "payment_not_refundable" {
			t.Fatalf("refund of a decline: %d %s", r.status, r.body)
		}
		if r := refund("tpay_missing", "re_card_4", 100); r.status != 404 || r.code() != "payment_not_found" {
			t.Fatalf("refund of nothing: %d %s", r.status, r.body)
		}
	})

	if strings.Contains(h.logs.String(), "4242424242") || strings.Contains(h.logs.String(), "0123456789ABCDEF") {
		t.Fatal("card data in the simulator's log")
	}
}

// TestCardTimeoutAfterAuthorizing: with TimeoutRate 1 the gateway records
// the authorisation and its answer, then hangs; the status query answers,
// and the same key afterwards replays the answer.
func TestCardTimeoutAfterAuthorizing(t *testing.T) {
	h := start(t, sim.Config{TimeoutRate: 1, HangFor: 5 * time.Second})
	body, _ := json.Marshal(protocol.CardAuthorizationRequest{Reference: "tpay_hang", AmountMinor: 500, Currency: "DJF", Capture: true,
		EntryMode: "contactless", Card: protocol.Card{Number: simCardApproved, ExpMonth: 12, ExpYear: 2099, Cryptogram: "0123456789ABCDEF"}})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", h.srv.URL+"/wallet_a/v1/card_authorizations", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set(protocol.HeaderIdempotencyKey, "tpay_hang:authorize")
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the authorisation answered")
	}
	s := h.call("GET", "/wallet_a/v1/card_authorizations?reference=tpay_hang", "", nil)
	if s.status != 200 || s.authorization(t).Status != protocol.AuthorizationCaptured {
		t.Fatalf("status after the timeout: %d %s", s.status, s.body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var p protocol.CardAuthorizationRequest
		json.Unmarshal(body, &p)
		r := h.call("POST", "/wallet_a/v1/card_authorizations", "tpay_hang:authorize", p)
		if r.status == 201 && r.header.Get(protocol.HeaderReplayed) == "true" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("retry: %d %s", r.status, r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := h.srv.CardAuthorizations(apiKey); n != 1 {
		t.Fatalf("%d authorisations", n)
	}
}
