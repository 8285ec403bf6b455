package payments_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
)

// lifecycle is the part of a PaymentIntent the lifecycle tests read.
type lifecycle struct {
	ID                    string  `json:"id"`
	Status                string  `json:"status"`
	AmountCapturedMinor   int64   `json:"amount_captured_minor"`
	AmountCapturableMinor int64   `json:"amount_capturable_minor"`
	CaptureMethod         string  `json:"capture_method"`
	CancellationReason    *string `json:"cancellation_reason"`
	CanceledAt            *string `json:"canceled_at"`
	SucceededAt           *string `json:"succeeded_at"`
	NextAction            *struct {
		RedirectURL string `json:"redirect_url"`
	} `json:"next_action"`
}

func decodeLC(t testing.TB, r *apptest.Response) lifecycle {
	t.Helper()
	var v lifecycle
	r.JSON(t, &v)
	return v
}

func getLC(t testing.TB, e *apptest.Env, id string) lifecycle {
	t.Helper()
	r := e.Get("/v1/payment_intents/" + id)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", id, r.Status, r.Body)
	}
	return decodeLC(t, r)
}

func cancelIntent(e *apptest.Env, id string, body any) *apptest.Response {
	e.T.Helper()
	return e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents/" + id + "/cancel", Key: e.SK, Body: body})
}

func captureIntent(e *apptest.Env, id string, body any) *apptest.Response {
	e.T.Helper()
	return e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents/" + id + "/capture", Key: e.SK, Body: body})
}

// manualCard creates a manual-capture card intent of amount (USD minor
// units) and pays it on its hosted page with the test card that succeeds:
// it is then requires_capture.
func manualCard(t *testing.T, e *apptest.Env, amount int64) lifecycle {
	t.Helper()
	in := decodeLC(t, mustStatus(t, create(e, map[string]any{"amount_minor": amount, "currency": "USD", "provider": "wallet_a",
		"capture_method": "manual", "return_url": "http://merchant.example/return?order=42",
		"metadata": map[string]string{"wallet_a_mode": "card"}}, ""), 201))
	if in.CaptureMethod != "manual" || in.Status != "requires_action" {
		t.Fatalf("created %+v", in)
	}
	status, loc, _ := submitPage(t, in.NextAction.RedirectURL, url.Values{"card_number": {"4242424242424242"},
		"exp_month": {"12"}, "exp_year": {"2040"}, "cvc": {"123"}})
	wantReturn(t, status, loc, in.ID)
	got := getLC(t, e, in.ID)
	if got.Status != "requires_capture" || got.AmountCapturableMinor != amount || got.AmountCapturedMinor != 0 || got.SucceededAt != nil {
		t.Fatalf("after authorisation: %+v", got)
	}
	return got
}

// TestLifecycle: cancel, manual capture and expiry through the API, on
// both engines, each scenario ending with ledger.Verify.
func TestLifecycle(t *testing.T) {
	suites := []struct {
		name string
		run  func(*testing.T, *apptest.Env)
	}{
		{"Cancel", testCancel},
		{"CancelRefusals", testCancelRefusals},
		{"ManualCapture", testManualCapture},
		{"CaptureRefusals", testCaptureRefusals},
		{"CancelAuthorisation", testCancelAuthorisation},
		{"CancelRacesConfirm", testCancelRacesConfirm},
		{"CancelRacesPageSubmit", testCancelRacesPageSubmit},
		{"CaptureRacesExpiry", testCaptureRacesExpiry},
		{"ExpiryJob", testExpiryJob},
	}
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		for _, s := range suites {
			t.Run(s.name, func(t *testing.T) {
				s.run(t, e)
				verifyLedger(t, e)
			})
		}
	}, fastSandbox)
}

func testCancel(t *testing.T, e *apptest.Env) {
	in := decodeLC(t, mustStatus(t, create(e, bankA(100), ""), 201))
	if in.CancellationReason != nil || in.CanceledAt != nil || in.CaptureMethod != "automatic" || in.AmountCapturableMinor != 0 {
		t.Fatalf("a new intent: %+v", in)
	}
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents/" + in.ID + "/cancel", Key: e.SK,
		Body: map[string]string{"cancellation_reason": "requested_by_customer"}, Headers: map[string]string{"Idempotency-Key": "cancel-" + in.ID}})
	got := decodeLC(t, mustStatus(t, r, 200))
	if got.Status != "canceled" || got.CanceledAt == nil || got.CancellationReason == nil || *got.CancellationReason != "requested_by_customer" {
		t.Fatalf("canceled: %+v", got)
	}
	// The same key replays the answer; it does not cancel again.
	replay := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents/" + in.ID + "/cancel", Key: e.SK,
		Body: map[string]string{"cancellation_reason": "requested_by_customer"}, Headers: map[string]string{"Idempotency-Key": "cancel-" + in.ID}})
	if replay.Status != 200 || string(replay.Body) != string(r.Body) {
		t.Fatalf("replay: %d %s", replay.Status, replay.Body)
	}
	if r := cancelIntent(e, in.ID, nil); r.Status != 409 || r.ErrorCode() != "invalid_state" || !strings.Contains(string(r.Body), "canceled") {
		t.Fatalf("second cancel: %d %s", r.Status, r.Body)
	}
	if r := confirm(e, in.ID, "123456"); r.Status != 409 {
		t.Fatalf("confirm after cancel: %d %s", r.Status, r.Body)
	}
	if got := eventTypes(t, e, in.ID); joined(got) != "payment_intent.created,payment_intent.canceled" {
		t.Fatalf("events %v", got)
	}
	if n := creditedTo(t, e, in.ID); n != 0 {
		t.Fatalf("credited %d", n)
	}

	// No body at all: canceled without a reason.
	bare := decodeLC(t, mustStatus(t, create(e, bankA(5), ""), 201))
	if got := decodeLC(t, mustStatus(t, cancelIntent(e, bare.ID, nil), 200)); got.Status != "canceled" || got.CancellationReason != nil {
		t.Fatalf("bare cancel: %+v", got)
	}

	// A cancelled intent's hosted page says so.
	card := cardIntent(t, e)
	mustStatus(t, cancelIntent(e, card.ID, map[string]string{"cancellation_reason": "duplicate"}), 200)
	code, body := getPage(t, card.NextAction.RedirectURL)
	if code != 200 || !strings.Contains(body, "This payment was canceled by the merchant") {
		t.Fatalf("page of a canceled intent: %d %s", code, body)
	}
	status, loc, _ := submitPage(t, card.NextAction.RedirectURL, url.Values{"card_number": {"4242424242424242"},
		"exp_month": {"12"}, "exp_year": {"2040"}, "cvc": {"123"}})
	wantReturn(t, status, loc, card.ID)
	if got := getLC(t, e, card.ID); got.Status != "canceled" || creditedTo(t, e, card.ID) != 0 {
		t.Fatalf("a page submitted after the cancel moved the intent: %+v", got)
	}
}

func testCancelRefusals(t *testing.T, e *apptest.Env) {
	t.Run("succeeded", func(t *testing.T) {
		in := decodeLC(t, mustStatus(t, create(e, bankA(300), ""), 201))
		mustStatus(t, confirm(e, in.ID, "123456"), 200)
		before := available(t, e, "DJF")
		r := cancelIntent(e, in.ID, map[string]string{"cancellation_reason": "fraudulent"})
		if r.Status != 409 || r.ErrorCode() != "invalid_state" || !strings.Contains(string(r.Body), "succeeded") {
			t.Fatalf("cancel of a succeeded intent: %d %s", r.Status, r.Body)
		}
		got := getLC(t, e, in.ID)
		if got.Status != "succeeded" || got.CancellationReason != nil || got.CanceledAt != nil || available(t, e, "DJF") != before {
			t.Fatalf("after a refused cancel: %+v", got)
		}
		if got := eventTypes(t, e, in.ID); joined(got) != "payment_intent.created,payment_intent.succeeded" {
			t.Fatalf("events %v", got)
		}
	})
	t.Run("bad reason", func(t *testing.T) {
		in := decodeLC(t, mustStatus(t, create(e, bankA(300), ""), 201))
		for _, body := range []any{map[string]any{"cancellation_reason": "bored"}, map[string]any{"cancellation_reason": ""},
			map[string]any{"cancellation_reason": 7}} {
			r := cancelIntent(e, in.ID, body)
			if r.Status != 400 || errorParam(r) != "cancellation_reason" {
				t.Fatalf("cancel with %v: %d %s", body, r.Status, r.Body)
			}
		}
		if r := cancelIntent(e, in.ID, map[string]any{"reason": "duplicate"}); r.Status != 400 {
			t.Fatalf("unknown field: %d %s", r.Status, r.Body)
		}
		if got := getLC(t, e, in.ID); got.Status != "requires_action" || len(eventTypes(t, e, in.ID)) != 1 {
			t.Fatalf("a refused cancel changed the intent: %+v", got)
		}
	})
	t.Run("isolation", func(t *testing.T) {
		in := decodeLC(t, mustStatus(t, create(e, bankA(300), ""), 201))
		other, err := e.Main.Merchants.Create(context.Background(), merchantParams("Other"))
		if err != nil {
			t.Fatal(err)
		}
		r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents/" + in.ID + "/cancel", Key: other.SecretKeys[0]})
		if r.Status != 404 {
			t.Fatalf("another merchant's cancel: %d %s", r.Status, r.Body)
		}
		r = e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents/" + in.ID + "/capture", Key: other.SecretKeys[0]})
		if r.Status != 404 {
			t.Fatalf("another merchant's capture: %d %s", r.Status, r.Body)
		}
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents/" + in.ID + "/cancel", Key: e.PK}); r.Status != 403 {
			t.Fatalf("publishable key cancel: %d %s", r.Status, r.Body)
		}
		if getLC(t, e, in.ID).Status != "requires_action" {
			t.Fatal("moved by another merchant")
		}
	})
	t.Run("capture_method", func(t *testing.T) {
		before := count(t, e, "payment_intents")
		for _, c := range []struct {
			body map[string]any
		}{
			{map[string]any{"amount": 5, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456", "capture_method": "manual"}},
			{map[string]any{"amount": 5, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377000009", "capture_method": "manual"}},
			{map[string]any{"amount": 5, "currency": "USD", "provider": "wallet_a", "return_url": "http://m.example/r",
				"metadata": map[string]string{"wallet_a_mode": "hpp"}, "capture_method": "manual"}},
			{map[string]any{"amount": 5, "currency": "USD", "provider": "wallet_a", "return_url": "http://m.example/r",
				"metadata": map[string]string{"wallet_a_mode": "card"}, "capture_method": "later"}},
			{map[string]any{"amount": 5, "currency": "USD", "provider": "wallet_a", "return_url": "http://m.example/r",
				"metadata": map[string]string{"wallet_a_mode": "card"}, "capture_method": ""}},
		} {
			r := create(e, c.body, "")
			if r.Status != 400 || errorParam(r) != "capture_method" || r.ErrorCode() != "parameter_invalid" {
				t.Fatalf("%v: %d %s", c.body, r.Status, r.Body)
			}
		}
		if after := count(t, e, "payment_intents"); after != before {
			t.Fatalf("%d intents written by refused creates", after-before)
		}
	})
}

func testManualCapture(t *testing.T, e *apptest.Env) {
	before := available(t, e, "USD")
	in := manualCard(t, e, 1000)
	if got := eventTypes(t, e, in.ID); joined(got) != "payment_intent.created,payment_intent.amount_capturable_updated" {
		t.Fatalf("events %v", got)
	}
	if creditedTo(t, e, in.ID) != 0 || available(t, e, "USD") != before {
		t.Fatal("an authorisation was credited before its capture")
	}
	// A refund of an authorisation is refused: nothing was captured.
	if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/refunds", Key: e.SK, Body: map[string]any{"payment_intent": in.ID},
		Headers: map[string]string{"Idempotency-Key": "re-auth-" + in.ID}}); r.Status != 409 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("refund of requires_capture: %d %s", r.Status, r.Body)
	}
	got := decodeLC(t, mustStatus(t, captureIntent(e, in.ID, map[string]int64{"amount_to_capture_minor": 600}), 200))
	if got.Status != "succeeded" || got.AmountCapturedMinor != 600 || got.AmountCapturableMinor != 0 || got.SucceededAt == nil {
		t.Fatalf("captured: %+v", got)
	}
	if n := creditedTo(t, e, in.ID); n != 600 || available(t, e, "USD") != before+600 {
		t.Fatalf("credited %d, available moved %d", n, available(t, e, "USD")-before)
	}
	if got := eventTypes(t, e, in.ID); joined(got) != "payment_intent.created,payment_intent.amount_capturable_updated,payment_intent.succeeded" {
		t.Fatalf("events %v", got)
	}
	if r := captureIntent(e, in.ID, nil); r.Status != 409 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("second capture: %d %s", r.Status, r.Body)
	}
	// Refunds are bounded by the captured 600, not the authorised 1000.
	refunds := count(t, e, "refunds")
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/refunds", Key: e.SK, Body: map[string]any{"payment_intent": in.ID, "amount_minor": 700},
		Headers: map[string]string{"Idempotency-Key": "re-700-" + in.ID}})
	if r.Status != 400 || r.ErrorCode() != "amount_exceeds_refundable" || errorParam(r) != "amount_minor" {
		t.Fatalf("refund of 700 after a capture of 600: %d %s", r.Status, r.Body)
	}
	if count(t, e, "refunds") != refunds || available(t, e, "USD") != before+600 {
		t.Fatal("a refused refund changed something")
	}
	r = e.Do(apptest.Request{Method: "POST", Path: "/v1/refunds", Key: e.SK, Body: map[string]any{"payment_intent": in.ID},
		Headers: map[string]string{"Idempotency-Key": "re-all-" + in.ID}})
	var re struct {
		AmountMinor int64  `json:"amount_minor"`
		Status      string `json:"status"`
	}
	mustStatus(t, r, 201).JSON(t, &re)
	if re.AmountMinor != 600 || re.Status != "succeeded" || available(t, e, "USD") != before {
		t.Fatalf("default refund: %+v, available %d", re, available(t, e, "USD")-before)
	}

	// Capture of the whole authorisation by default.
	all := manualCard(t, e, 250)
	if got := decodeLC(t, mustStatus(t, captureIntent(e, all.ID, nil), 200)); got.AmountCapturedMinor != 250 || creditedTo(t, e, all.ID) != 250 {
		t.Fatalf("full capture: %+v", got)
	}
	// An automatic success captures its amount.
	auto := decodeLC(t, mustStatus(t, create(e, bankA(40), ""), 201))
	if got := decodeLC(t, mustStatus(t, confirm(e, auto.ID, "123456"), 200)); got.AmountCapturedMinor != 40 || got.CaptureMethod != "automatic" {
		t.Fatalf("automatic: %+v", got)
	}
}

func testCaptureRefusals(t *testing.T, e *apptest.Env) {
	in := manualCard(t, e, 1000)
	for _, c := range []struct {
		body  any
		code  string
		param string
	}{
		{map[string]int64{"amount_to_capture_minor": 1001}, "amount_exceeds_capturable", "amount_to_capture_minor"},
		{map[string]int64{"amount_to_capture_minor": 0}, "amount_invalid", "amount_to_capture_minor"},
		{map[string]int64{"amount_to_capture_minor": -5}, "amount_invalid", "amount_to_capture_minor"},
		{map[string]string{"amount_to_capture_minor": "600"}, "", ""},
	} {
		r := captureIntent(e, in.ID, c.body)
		if r.Status != 400 || (c.code != "" && (r.ErrorCode() != c.code || errorParam(r) != c.param)) {
			t.Fatalf("capture %v: %d %s", c.body, r.Status, r.Body)
		}
	}
	if got := getLC(t, e, in.ID); got.Status != "requires_capture" || got.AmountCapturableMinor != 1000 || creditedTo(t, e, in.ID) != 0 {
		t.Fatalf("refused captures changed the intent: %+v", got)
	}
	// Not requires_capture: 409, whatever the rail.
	waiting := decodeLC(t, mustStatus(t, create(e, bankA(10), ""), 201))
	if r := captureIntent(e, waiting.ID, nil); r.Status != 409 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("capture of requires_action: %d %s", r.Status, r.Body)
	}
	mustStatus(t, confirm(e, waiting.ID, "123456"), 200)
	if r := captureIntent(e, waiting.ID, map[string]int64{"amount_to_capture_minor": 5}); r.Status != 409 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("capture of a non-card succeeded intent: %d %s", r.Status, r.Body)
	}
	if creditedTo(t, e, waiting.ID) != 10 {
		t.Fatal("a refused capture credited again")
	}
}

func testCancelAuthorisation(t *testing.T, e *apptest.Env) {
	before := available(t, e, "USD")
	in := manualCard(t, e, 800)
	got := decodeLC(t, mustStatus(t, cancelIntent(e, in.ID, map[string]string{"cancellation_reason": "fraudulent"}), 200))
	if got.Status != "canceled" || got.AmountCapturableMinor != 0 || got.AmountCapturedMinor != 0 || *got.CancellationReason != "fraudulent" {
		t.Fatalf("canceled authorisation: %+v", got)
	}
	if r := captureIntent(e, in.ID, nil); r.Status != 409 {
		t.Fatalf("capture after cancel: %d %s", r.Status, r.Body)
	}
	if creditedTo(t, e, in.ID) != 0 || available(t, e, "USD") != before {
		t.Fatal("a released authorisation moved money")
	}
	if got := eventTypes(t, e, in.ID); joined(got) != "payment_intent.created,payment_intent.amount_capturable_updated,payment_intent.canceled" {
		t.Fatalf("events %v", got)
	}
}

// testCancelRacesConfirm: 50 goroutines, half cancelling and half
// confirming one intent: exactly one request wins, one event follows
// created, and the ledger holds the winner's outcome only.
func testCancelRacesConfirm(t *testing.T, e *apptest.Env) {
	for round := range 3 {
		in := decodeLC(t, mustStatus(t, create(e, bankA(321), ""), 201))
		const n = 50
		codes := make([]int, n)
		bodies := make([]string, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				var r *apptest.Response
				if (i+round)%2 == 0 {
					r = cancelIntent(e, in.ID, map[string]string{"cancellation_reason": "duplicate"})
				} else {
					r = confirm(e, in.ID, "123456")
				}
				codes[i], bodies[i] = r.Status, string(r.Body)
			}()
		}
		close(start)
		wg.Wait()
		winners := 0
		for i, c := range codes {
			switch c {
			case 200:
				winners++
			case 409:
				if !strings.Contains(bodies[i], "invalid_state") {
					t.Errorf("loser %d: %s", i, bodies[i])
				}
			default:
				t.Errorf("request %d: %d %s", i, c, bodies[i])
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d winners", round, winners)
		}
		got := getLC(t, e, in.ID)
		evs := joined(eventTypes(t, e, in.ID))
		switch got.Status {
		case "succeeded":
			if evs != "payment_intent.created,payment_intent.succeeded" || creditedTo(t, e, in.ID) != 321 {
				t.Fatalf("confirm won: events %s, credited %d", evs, creditedTo(t, e, in.ID))
			}
		case "canceled":
			if evs != "payment_intent.created,payment_intent.canceled" || creditedTo(t, e, in.ID) != 0 {
				t.Fatalf("cancel won: events %s, credited %d", evs, creditedTo(t, e, in.ID))
			}
		default:
			t.Fatalf("after the race: %+v", got)
		}
		t.Logf("round %d: %s won", round, got.Status)
	}
}

// testCancelRacesPageSubmit: cancels racing the customer's card (the
// provider's success, an authorisation for a manual intent) on the hosted
// page: exactly one cancel wins unless the card won first, and no credit
// follows a cancel.
func testCancelRacesPageSubmit(t *testing.T, e *apptest.Env) {
	for _, method := range []string{"automatic", "manual"} {
		in := decodeLC(t, mustStatus(t, create(e, map[string]any{"amount_minor": 500, "currency": "USD", "provider": "wallet_a",
			"capture_method": method, "return_url": "http://merchant.example/return?order=42", "metadata": map[string]string{"wallet_a_mode": "card"}}, ""), 201))
		var wg sync.WaitGroup
		start := make(chan struct{})
		cancels := make([]int, 25)
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if i%2 == 0 {
					cancels[i/2] = cancelIntent(e, in.ID, nil).Status
					return
				}
				submitPage(t, in.NextAction.RedirectURL, url.Values{"card_number": {"4242424242424242"}, "exp_month": {"12"}, "exp_year": {"2040"}, "cvc": {"123"}})
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for _, c := range cancels {
			if c == 200 {
				won++
			} else if c != 409 {
				t.Fatalf("cancel answered %d", c)
			}
		}
		got := getLC(t, e, in.ID)
		evs := eventTypes(t, e, in.ID)
		switch {
		case got.Status == "canceled":
			// A manual intent may have been authorised first: a cancel
			// then releases the authorisation (allowed from
			// requires_capture).
			want := "payment_intent.created,payment_intent.canceled"
			if method == "manual" && len(evs) == 3 {
				want = "payment_intent.created,payment_intent.amount_capturable_updated,payment_intent.canceled"
			}
			if won != 1 || joined(evs) != want || creditedTo(t, e, in.ID) != 0 {
				t.Fatalf("%s: canceled with %d cancel winners, events %v", method, won, evs)
			}
		case method == "automatic" && got.Status == "succeeded", method == "manual" && got.Status == "requires_capture":
			if won != 0 || len(evs) != 2 {
				t.Fatalf("%s: %s with %d cancel winners, events %v", method, got.Status, won, evs)
			}
			if got.Status == "requires_capture" {
				// The authorisation can still be canceled once.
				mustStatus(t, cancelIntent(e, in.ID, nil), 200)
			}
		default:
			t.Fatalf("%s: after the race %+v", method, got)
		}
	}
}

// age moves an intent's clock back: created_at (what expiry reads for
// requires_action) and updated_at (the authorisation time of
// requires_capture) by d.
func age(t testing.TB, e *apptest.Env, id string, d time.Duration) {
	t.Helper()
	if _, err := e.Main.DB.Exec(context.Background(), "UPDATE payment_intents SET created_at = created_at - ?, updated_at = updated_at - ? WHERE id = ?",
		d.Microseconds(), d.Microseconds(), id); err != nil {
		t.Fatal(err)
	}
}

// testCaptureRacesExpiry: captures racing the expiry job on authorisations
// past their capture window: each ends captured or released, never both.
func testCaptureRacesExpiry(t *testing.T, e *apptest.Env) {
	svc := e.Main.PaymentIntents()
	var auths []lifecycle
	for range 6 {
		a := manualCard(t, e, 700)
		age(t, e, a.ID, 169*time.Hour) // past the default 168h window
		auths = append(auths, a)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	codes := make([][]int, len(auths))
	for i, a := range auths {
		codes[i] = make([]int, 5)
		for j := range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				codes[i][j] = captureIntent(e, a.ID, nil).Status
			}()
		}
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if _, err := svc.Expire(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	for i, a := range auths {
		got := getLC(t, e, a.ID)
		captured := 0
		for _, c := range codes[i] {
			if c == 200 {
				captured++
			} else if c != 409 {
				t.Fatalf("capture answered %d", c)
			}
		}
		evs := joined(eventTypes(t, e, a.ID))
		switch got.Status {
		case "succeeded":
			if captured != 1 || creditedTo(t, e, a.ID) != 700 || evs != "payment_intent.created,payment_intent.amount_capturable_updated,payment_intent.succeeded" {
				t.Fatalf("%s captured: %d winners, events %s", a.ID, captured, evs)
			}
		case "canceled":
			if captured != 0 || creditedTo(t, e, a.ID) != 0 || *got.CancellationReason != "abandoned" ||
				evs != "payment_intent.created,payment_intent.amount_capturable_updated,payment_intent.canceled" {
				t.Fatalf("%s released: %d capture winners, events %s", a.ID, captured, evs)
			}
		default:
			t.Fatalf("%s after the race: %+v", a.ID, got)
		}
	}
}

// testExpiryJob: the job cancels exactly the intents past their time
// (abandoned), once, and leaves the others.
func testExpiryJob(t *testing.T, e *apptest.Env) {
	svc := e.Main.PaymentIntents()
	// Whatever earlier suites left waiting is not this test's business.
	svc.Expire(context.Background())
	old := decodeLC(t, mustStatus(t, create(e, bankA(1), ""), 201))
	age(t, e, old.ID, 25*time.Hour)
	young := decodeLC(t, mustStatus(t, create(e, bankA(1), ""), 201))
	age(t, e, young.ID, 23*time.Hour)
	paid := decodeLC(t, mustStatus(t, create(e, bankA(1), ""), 201))
	mustStatus(t, confirm(e, paid.ID, "123456"), 200)
	age(t, e, paid.ID, 48*time.Hour)
	oldAuth := manualCard(t, e, 90)
	age(t, e, oldAuth.ID, 169*time.Hour)
	youngAuth := manualCard(t, e, 90)
	age(t, e, youngAuth.ID, 167*time.Hour)
	page := cardIntent(t, e)
	age(t, e, page.ID, 30*time.Hour)

	// The server's own expiry job (every minute) may run meanwhile; what
	// it and this run do together is checked below, intent by intent.
	n, err := svc.Expire(context.Background())
	if err != nil || n > 3 {
		t.Fatalf("expired %d (%v), want 3", n, err)
	}
	for _, c := range []struct {
		id, status string
	}{{old.ID, "canceled"}, {young.ID, "requires_action"}, {paid.ID, "succeeded"}, {oldAuth.ID, "canceled"},
		{youngAuth.ID, "requires_capture"}, {page.ID, "canceled"}} {
		got := getLC(t, e, c.id)
		if got.Status != c.status {
			t.Errorf("%s: %s, want %s", c.id, got.Status, c.status)
		}
		if c.status == "canceled" && (got.CancellationReason == nil || *got.CancellationReason != "abandoned" || got.CanceledAt == nil) {
			t.Errorf("%s: %+v", c.id, got)
		}
	}
	if n, err := svc.Expire(context.Background()); err != nil || n != 0 {
		t.Fatalf("a second run expired %d (%v)", n, err)
	}
	if got := eventTypes(t, e, old.ID); joined(got) != "payment_intent.created,payment_intent.canceled" {
		t.Fatalf("events %v", got)
	}
	code, body := getPage(t, page.NextAction.RedirectURL)
	if code != 200 || !strings.Contains(body, "not completed in time") {
		t.Fatalf("page of an expired intent: %d %s", code, body)
	}
}
