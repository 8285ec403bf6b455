package payments_test

import (
	"net/url"
	"sync"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

func bankA(amount int) map[string]any {
	return map[string]any{"amount": amount, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"}
}

func testConfirm(t *testing.T, e *apptest.Env) {
	t.Run("wrong code consumes the intent", func(t *testing.T) {
		in := decode(t, mustStatus(t, create(e, bankA(100), ""), 201))
		r := confirm(e, in.ID, "000000")
		if r.Status != 400 || r.ErrorCode() != "otp_invalid" || errorField(t, r, "message") != "otp invalid" ||
			errorField(t, r, "payment_intent") != in.ID {
			t.Fatalf("wrong code: %d %s", r.Status, r.Body)
		}
		got := get(t, e, in.ID)
		if got.Status != "canceled" || got.LastError == nil || got.LastError.Code != "otp_invalid" || got.LastError.Provider != "bank_a" || got.CanceledAt == nil {
			t.Fatalf("after a wrong code: %+v", got)
		}
		if r := confirm(e, in.ID, "123456"); r.Status != 409 || r.ErrorCode() != "invalid_state" {
			t.Fatalf("second confirm: %d %s", r.Status, r.Body)
		}
		if got := eventTypes(t, e, in.ID); joined(got) != "payment_intent.created,payment_intent.canceled" {
			t.Fatalf("events %v", got)
		}
	})
	t.Run("publishable key confirms, cannot read", func(t *testing.T) {
		in := decode(t, mustStatus(t, create(e, bankA(100), ""), 201))
		r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents/" + in.ID + "/confirm", Key: e.PK, Body: map[string]string{"otp": "123456"}})
		if r.Status != 200 || decode(t, r).Status != "succeeded" {
			t.Fatalf("pk confirm: %d %s", r.Status, r.Body)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/payment_intents/" + in.ID, Key: e.PK}); r.Status != 403 {
			t.Fatalf("pk get: %d", r.Status)
		}
	})
	t.Run("not waiting for a code", func(t *testing.T) {
		push := decode(t, mustStatus(t, create(e, map[string]any{"amount": 5, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377000009"}, ""), 201))
		if r := confirm(e, push.ID, "123456"); r.Status != 409 || r.ErrorCode() != "invalid_state" {
			t.Fatalf("confirm of a push intent: %d %s", r.Status, r.Body)
		}
		if r := confirm(e, "pi_nope", "123456"); r.Status != 404 || r.ErrorCode() != "resource_missing" {
			t.Fatalf("unknown intent: %d %s", r.Status, r.Body)
		}
	})
	t.Run("missing otp changes nothing", func(t *testing.T) {
		in := decode(t, mustStatus(t, create(e, bankA(100), ""), 201))
		r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents/" + in.ID + "/confirm", Key: e.SK, Body: map[string]string{}})
		if r.Status != 400 || errorParam(r) != "otp" {
			t.Fatalf("missing otp: %d %s", r.Status, r.Body)
		}
		if get(t, e, in.ID).Status != "requires_action" {
			t.Fatal("a malformed confirm moved the intent")
		}
	})
	e.RequireSecretsAbsent("123456\"", "000000")
}

// TestConcurrentConfirms: 100 confirms of one intent with the right code at
// once: exactly one succeeds, one ledger credit, one succeeded event.
func testConcurrentConfirms(t *testing.T, e *apptest.Env) {
	in := decode(t, mustStatus(t, create(e, bankA(777), ""), 201))
	const n = 100
	codes := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i] = confirm(e, in.ID, "123456").Status
		}()
	}
	close(start)
	wg.Wait()
	ok, conflict := 0, 0
	for _, c := range codes {
		switch c {
		case 200:
			ok++
		case 409:
			conflict++
		default:
			t.Errorf("unexpected status %d", c)
		}
	}
	if ok != 1 || conflict != n-1 {
		t.Fatalf("%d succeeded, %d conflicts", ok, conflict)
	}
	if got := creditedTo(t, e, in.ID); got != 777 {
		t.Fatalf("available credited %d, want one credit of 777", got)
	}
	var credits int
	e.Main.DB.QueryRow(t.Context(), "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ?", in.ID).Scan(&credits)
	if credits != 1 {
		t.Fatalf("%d ledger transactions", credits)
	}
	if got := eventTypes(t, e, in.ID); joined(got) != "payment_intent.created,payment_intent.succeeded" {
		t.Fatalf("events %v", got)
	}
	verifyLedger(t, e)
}

// TestConcurrentPageSubmits: racing submits of one hosted page settle it once.
func testConcurrentPageSubmits(t *testing.T, e *apptest.Env) {
	in := decode(t, mustStatus(t, create(e, map[string]any{"amount": 9, "currency": "ETB", "provider": "wallet_d",
		"return_url": "http://merchant.example/return?order=42"}, ""), 201))
	var wg sync.WaitGroup
	const n = 20
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			method := "telebirr"
			if i%2 == 1 {
				method = "mpesa"
			}
			status, loc, _ := submitPage(t, in.NextAction.RedirectURL, url.Values{"method": {method}})
			if status != 303 || loc != "http://merchant.example/return?order=42&payment_intent="+in.ID {
				t.Errorf("submit %d: %d %s", i, status, loc)
			}
		}()
	}
	wg.Wait()
	if got := eventTypes(t, e, in.ID); joined(got) != "payment_intent.created,payment_intent.succeeded" {
		t.Fatalf("events %v", got)
	}
	if got := creditedTo(t, e, in.ID); got != 900 {
		t.Fatalf("available credited %d", got)
	}
	verifyLedger(t, e)
}
