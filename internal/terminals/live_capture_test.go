package terminals_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/providers/sim"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/terminals/cardgateway"
)

// heldIntent is what the manual-capture tests read of an intent.
type heldIntent struct {
	ID                    string  `json:"id"`
	Status                string  `json:"status"`
	CaptureMethod         string  `json:"capture_method"`
	AmountCapturableMinor int64   `json:"amount_capturable_minor"`
	AmountCapturedMinor   int64   `json:"amount_captured_minor"`
	CancellationReason    *string `json:"cancellation_reason"`
}

// authorizeHeld takes a live card-present payment with capture_method
// manual and checks it is held: requires_capture, nothing credited, the
// gateway's authorisation authorized (not captured).
func (lc *liveCard) authorizeHeld(t *testing.T, s *apptest.Sim, amount int64) heldIntent {
	t.Helper()
	before := lc.available(t)
	body := lc.body(t, cardgateway.CardApproved, amount)
	body["capture_method"] = "manual"
	var in heldIntent
	r := lc.pay(t, body, newKey())
	if r.Status != 201 {
		t.Fatalf("manual card-present payment: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &in)
	if in.Status != "requires_capture" || in.AmountCapturableMinor != amount || in.CaptureMethod != "manual" {
		t.Fatalf("held: %+v", in)
	}
	if st, _ := lc.gatewayAuth(t, s, in.ID); st != "authorized" {
		t.Fatalf("the gateway's authorisation is %q, want authorized", st)
	}
	if a := lc.available(t); a != before {
		t.Fatalf("available %d while held, %d before", a, before)
	}
	return in
}

// gatewayAuth is the gateway's status and captured amount of an intent's
// authorisation.
func (lc *liveCard) gatewayAuth(t *testing.T, s *apptest.Sim, intentID string) (string, int64) {
	t.Helper()
	var ref string
	if err := lc.h.e.Main.DB.QueryRow(context.Background(), "SELECT id FROM terminal_payments WHERE payment_intent_id = ?", intentID).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	var au struct {
		Status        string `json:"status"`
		CapturedMinor int64  `json:"captured_minor"`
	}
	if code := getJSON(t, s.URL+"/wallet_a/v1/card_authorizations?reference="+ref, lc.apiKey, &au); code != 200 {
		t.Fatalf("gateway status of %s: %d", ref, code)
	}
	return au.Status, au.CapturedMinor
}

func (lc *liveCard) intent(t *testing.T, id string) heldIntent {
	t.Helper()
	var in heldIntent
	lc.h.do(t, apptest.Request{Method: "GET", Path: "/v1/payment_intents/" + id, Key: lc.key}).JSON(t, &in)
	return in
}

// settledOnce checks an intent's capture (credit and event) or cancel
// happened exactly once and no settlement is left in flight.
func (lc *liveCard) settledOnce(t *testing.T, id string, captured bool) {
	t.Helper()
	db := lc.h.e.Main.DB
	want := map[bool][2]int{true: {1, 0}, false: {0, 1}}[captured]
	for q, n := range map[string]int{
		"SELECT COUNT(*) FROM events WHERE type = 'payment_intent.succeeded' AND object_id = ?":                 want[0],
		"SELECT COUNT(*) FROM ledger_transactions WHERE reference = ?":                                          want[0],
		"SELECT COUNT(*) FROM events WHERE type = 'payment_intent.canceled' AND object_id = ?":                  want[1],
		"SELECT COUNT(*) FROM payment_intent_settlements WHERE payment_intent_id = ?":                           0,
		"SELECT COUNT(*) FROM events WHERE type = 'payment_intent.amount_capturable_updated' AND object_id = ?": 1,
	} {
		if got := storetest.Count(t, db, q, id); got != n {
			t.Fatalf("%s: %d, want %d", q, got, n)
		}
	}
}

// waitIntent waits until the intent's status is want.
func (lc *liveCard) waitIntent(t *testing.T, id, want string) heldIntent {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		in := lc.intent(t, id)
		if in.Status == want {
			return in
		}
		if time.Now().After(deadline) {
			t.Fatalf("intent %s is %s, want %s\n%s", id, in.Status, want, lc.h.e.Logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLiveManualCapture runs live manual capture of card-present payments
// against the simulator's card gateway, on both engines: authorised only
// (held at the gateway, nothing credited), a partial capture through the
// gateway, a cancel and the capture window's expiry releasing the hold, a
// capture and a void whose answers were lost settled by reconciliation
// exactly once, a void the gateway refused sent again until it is done, a
// capture racing a cancel with one winner, and an authorisation whose
// answer was lost reconciled as held (never credited).
func TestLiveManualCapture(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "p2pe.json")
	if err := os.WriteFile(keys, []byte(`{"countertop":"`+liveBDKTDES+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		h := newHarness(t, e)
		ctx := context.Background()

		t.Run("partial capture through the gateway", func(t *testing.T) {
			s := apptest.StartSim(t, sim.Config{DuplicateCallbacks: true})
			lc := goLiveCard(t, h, s, "wallet_a", "5s")
			in := lc.authorizeHeld(t, s, 1000)
			// More than capturable: refused by payd, nothing sent.
			requireError(t, lc.post(t, "/v1/payment_intents/"+in.ID+"/capture", map[string]int64{"amount_to_capture_minor": 1001}, newKey()),
				400, "amount_exceeds_capturable", "amount_to_capture_minor")
			key := newKey()
			r := lc.post(t, "/v1/payment_intents/"+in.ID+"/capture", map[string]int64{"amount_to_capture_minor": 600}, key)
			var got heldIntent
			r.JSON(t, &got)
			if r.Status != 200 || got.Status != "succeeded" || got.AmountCapturedMinor != 600 || got.AmountCapturableMinor != 0 {
				t.Fatalf("capture: %d %s", r.Status, r.Body)
			}
			if st, captured := lc.gatewayAuth(t, s, in.ID); st != "captured" || captured != 600 {
				t.Fatalf("gateway: %s %d, want captured 600", st, captured)
			}
			if a := lc.available(t); a != 600 {
				t.Fatalf("available %d, want 600", a)
			}
			// The same request again replays; another capture is 409.
			if again := lc.post(t, "/v1/payment_intents/"+in.ID+"/capture", map[string]int64{"amount_to_capture_minor": 600}, key); again.Status != 200 {
				t.Fatalf("replay: %d %s", again.Status, again.Body)
			}
			requireError(t, lc.post(t, "/v1/payment_intents/"+in.ID+"/capture", nil, newKey()), 409, "invalid_state", "")
			lc.settledOnce(t, in.ID, true)
			// Refunds apply to the captured amount only.
			requireError(t, lc.post(t, "/v1/refunds", map[string]any{"payment_intent": in.ID, "amount_minor": 700}, newKey()),
				400, "amount_exceeds_refundable", "amount_minor")
		})

		t.Run("cancel releases the hold", func(t *testing.T) {
			s := apptest.StartSim(t, sim.Config{})
			lc := goLiveCard(t, h, s, "wallet_a", "5s")
			in := lc.authorizeHeld(t, s, 800)
			r := lc.post(t, "/v1/payment_intents/"+in.ID+"/cancel", map[string]string{"cancellation_reason": "requested_by_customer"}, newKey())
			var got heldIntent
			r.JSON(t, &got)
			if r.Status != 200 || got.Status != "canceled" || got.CancellationReason == nil || *got.CancellationReason != "requested_by_customer" {
				t.Fatalf("cancel: %d %s", r.Status, r.Body)
			}
			if st, _ := lc.gatewayAuth(t, s, in.ID); st != "voided" {
				t.Fatalf("gateway: %s, want voided", st)
			}
			requireError(t, lc.post(t, "/v1/payment_intents/"+in.ID+"/capture", nil, newKey()), 409, "invalid_state", "")
			lc.settledOnce(t, in.ID, false)
		})

		t.Run("capture window releases the hold", func(t *testing.T) {
			s := apptest.StartSim(t, sim.Config{})
			lc := goLiveCard(t, h, s, "wallet_a", "5s")
			in := lc.authorizeHeld(t, s, 500)
			if _, err := e.Main.DB.Exec(ctx, "UPDATE payment_intents SET updated_at = ? WHERE id = ?",
				store.Micros(e.Main.DB.Now().Add(-200*time.Hour)), in.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Main.PaymentIntents().Expire(ctx); err != nil {
				t.Fatal(err)
			}
			got := lc.intent(t, in.ID)
			if got.Status != "canceled" || got.CancellationReason == nil || *got.CancellationReason != "abandoned" {
				t.Fatalf("expired: %+v", got)
			}
			if st, _ := lc.gatewayAuth(t, s, in.ID); st != "voided" {
				t.Fatalf("gateway: %s, want voided", st)
			}
			lc.settledOnce(t, in.ID, false)
		})

		t.Run("capture answer lost, settled by reconciliation", func(t *testing.T) {
			s := apptest.StartSim(t, sim.Config{HangFor: 5 * time.Second})
			lc := goLiveCard(t, h, s, "wallet_a", "300ms")
			in := lc.authorizeHeld(t, s, 900)
			s.SetFaults(0, 1) // the capture is done, its answer never comes
			r := lc.post(t, "/v1/payment_intents/"+in.ID+"/capture", map[string]int64{"amount_to_capture_minor": 700}, newKey())
			requireError(t, r, 504, "provider_timeout", "")
			if st := lc.intent(t, in.ID).Status; st != "requires_capture" {
				t.Fatalf("after the lost answer: %s", st)
			}
			if a := lc.available(t); a != 0 {
				t.Fatalf("available %d before the capture is confirmed", a)
			}
			s.SetFaults(0, 0)
			got := lc.waitIntent(t, in.ID, "succeeded")
			if got.AmountCapturedMinor != 700 {
				t.Fatalf("reconciled: %+v", got)
			}
			// Reconciling again, and a capture without the key, change nothing.
			if st, err := e.Main.PaymentIntents().ReconcileSettlement(ctx, in.ID); err != nil || st != "succeeded" {
				t.Fatalf("reconcile again: %s %v", st, err)
			}
			requireError(t, lc.post(t, "/v1/payment_intents/"+in.ID+"/capture", nil, newKey()), 409, "invalid_state", "")
			if st, captured := lc.gatewayAuth(t, s, in.ID); st != "captured" || captured != 700 {
				t.Fatalf("gateway: %s %d", st, captured)
			}
			if a := lc.available(t); a != 700 {
				t.Fatalf("available %d, want 700", a)
			}
			lc.settledOnce(t, in.ID, true)
		})

		t.Run("void refused, sent again until done", func(t *testing.T) {
			s := apptest.StartSim(t, sim.Config{})
			lc := goLiveCard(t, h, s, "wallet_a", "1s")
			in := lc.authorizeHeld(t, s, 300)
			s.SetFaults(1, 0) // every call answered 500
			r := lc.post(t, "/v1/payment_intents/"+in.ID+"/cancel", nil, newKey())
			requireError(t, r, 502, "provider_error", "")
			if st := lc.intent(t, in.ID).Status; st != "requires_capture" {
				t.Fatalf("after a refused void: %s", st)
			}
			// A capture now is refused: the release is decided.
			requireError(t, lc.post(t, "/v1/payment_intents/"+in.ID+"/capture", nil, newKey()), 409, "invalid_state", "")
			// A run that cannot even ask the gateway moves the row behind
			// the others, so rows that keep failing cannot fill every run.
			old := store.Micros(e.Main.DB.Now().Add(-time.Hour))
			if _, err := e.Main.DB.Exec(ctx, "UPDATE payment_intent_settlements SET updated_at = ? WHERE payment_intent_id = ?", old, in.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Main.PaymentIntents().ReconcileSettlement(ctx, in.ID); err == nil {
				t.Fatal("reconciled while the gateway answers 500")
			}
			var updated int64
			if err := e.Main.DB.QueryRow(ctx, "SELECT updated_at FROM payment_intent_settlements WHERE payment_intent_id = ?", in.ID).Scan(&updated); err != nil {
				t.Fatal(err)
			}
			if updated <= old {
				t.Fatalf("the release's row kept updated_at %d after a failed run", updated)
			}
			s.SetFaults(0, 0)
			got := lc.waitIntent(t, in.ID, "canceled")
			if got.CancellationReason != nil {
				t.Fatalf("reason %q, want none (none was given)", *got.CancellationReason)
			}
			if st, _ := lc.gatewayAuth(t, s, in.ID); st != "voided" {
				t.Fatalf("gateway: %s, want voided", st)
			}
			lc.settledOnce(t, in.ID, false)
		})

		t.Run("capture races cancel", func(t *testing.T) {
			s := apptest.StartSim(t, sim.Config{Latency: 20 * time.Millisecond})
			lc := goLiveCard(t, h, s, "wallet_a", "5s")
			for range 3 {
				in := lc.authorizeHeld(t, s, 400)
				var wg sync.WaitGroup
				var capture, cancel *apptest.Response
				wg.Add(2)
				go func() { defer wg.Done(); capture = lc.post(t, "/v1/payment_intents/"+in.ID+"/capture", nil, newKey()) }()
				go func() { defer wg.Done(); cancel = lc.post(t, "/v1/payment_intents/"+in.ID+"/cancel", nil, newKey()) }()
				wg.Wait()
				if (capture.Status == 200) == (cancel.Status == 200) {
					t.Fatalf("capture %d %s, cancel %d %s: want one winner", capture.Status, capture.Body, cancel.Status, cancel.Body)
				}
				st, _ := lc.gatewayAuth(t, s, in.ID)
				if won := capture.Status == 200; (won && st != "captured") || (!won && st != "voided") {
					t.Fatalf("gateway %s, capture answered %d", st, capture.Status)
				}
				lc.settledOnce(t, in.ID, capture.Status == 200)
			}
		})

		t.Run("capture and cancel commit their recovery point on the request's key", func(t *testing.T) {
			// While the gateway holds the call, the settlement and the
			// recovery point on this request's Idempotency-Key have
			// committed: a retry after a crash resumes from them. A
			// handler that handed the operation store.NoClaim would
			// commit nothing before the call.
			held, release := make(chan string, 1), make(chan struct{})
			var hold sync.Mutex
			holding := ""
			s := apptest.StartSim(t, sim.Config{Before: func(_, op string) {
				hold.Lock()
				blocked, wait := op == holding, release
				hold.Unlock()
				if blocked {
					held <- op
					<-wait
				}
			}})
			lc := goLiveCard(t, h, s, "wallet_a", "5s")
			for _, c := range []struct{ path, op, want string }{
				{"capture", "card_capture", "succeeded"},
				{"cancel", "card_void", "canceled"},
			} {
				in := lc.authorizeHeld(t, s, 700)
				key := newKey()
				hold.Lock()
				holding = c.op
				hold.Unlock()
				done := make(chan *apptest.Response, 1)
				go func() { done <- lc.post(t, "/v1/payment_intents/"+in.ID+"/"+c.path, nil, key) }()
				select {
				case <-held:
				case r := <-done:
					t.Fatalf("%s answered %d %s before reaching the gateway", c.path, r.Status, r.Body)
				}
				var point, ref, state string
				err := e.Main.DB.QueryRow(ctx, `SELECT COALESCE(recovery_point, ''), COALESCE(recovery_ref, ''), state
					FROM idempotency_keys WHERE idem_key = ?`, key).Scan(&point, &ref, &state)
				hold.Lock()
				holding = ""
				close(release)
				release = make(chan struct{})
				hold.Unlock()
				r := <-done
				if err != nil {
					t.Fatalf("%s: the request's key has no committed row while the gateway holds the call: %v", c.path, err)
				}
				if point != "payment_intent.settle" || ref != in.ID || state != "in_flight" {
					t.Fatalf("%s: key at %q %q (%s), want recovery point payment_intent.settle %q in flight", c.path, point, ref, state, in.ID)
				}
				if got := lc.intent(t, in.ID); r.Status != 200 || got.Status != c.want {
					t.Fatalf("%s: %d %s, intent %s", c.path, r.Status, r.Body, got.Status)
				}
				lc.settledOnce(t, in.ID, c.path == "capture")
			}
		})

		t.Run("reconciliation leaves a payment its request holds at the gateway call", func(t *testing.T) {
			// The request committed its recovery point and is sending the
			// card: the gateway has no record of it yet. Reconciliation
			// must not record "never received" (the wiring hands the
			// terminals service the key's lease check): the request's
			// approval then lands on a payment still authorizing.
			held, release := make(chan struct{}, 1), make(chan struct{})
			var once sync.Once
			s := apptest.StartSim(t, sim.Config{Before: func(_, op string) {
				if op == "card_authorize" {
					once.Do(func() { held <- struct{}{}; <-release })
				}
			}})
			lc := goLiveCard(t, h, s, "wallet_a", "5s")
			body := lc.body(t, cardgateway.CardApproved, 450)
			done := make(chan *apptest.Response, 1)
			go func() { done <- lc.pay(t, body, newKey()) }()
			select {
			case <-held:
			case r := <-done:
				t.Fatalf("payment answered %d %s before reaching the gateway", r.Status, r.Body)
			}
			var payID string
			err := e.Main.DB.QueryRow(ctx, "SELECT id FROM terminal_payments WHERE terminal_id = ?", lc.termID).Scan(&payID)
			var st string
			if err == nil {
				st, err = h.svc.ReconcileAuthorization(ctx, payID)
			}
			close(release)
			r := <-done
			if err != nil || st != "authorizing" {
				t.Fatalf("reconciling while the request sends the card: %q %v, want it left authorizing", st, err)
			}
			if in := decodeIntent(t, r, 201); in.Status != "succeeded" {
				t.Fatalf("payment: %+v", in)
			}
		})

		t.Run("authorisation answer lost, reconciled as held", func(t *testing.T) {
			s := apptest.StartSim(t, sim.Config{TimeoutRate: 1, HangFor: 5 * time.Second})
			lc := goLiveCard(t, h, s, "wallet_a", "300ms")
			body := lc.body(t, cardgateway.CardApproved, 650)
			body["capture_method"] = "manual"
			requireError(t, lc.pay(t, body, newKey()), 504, "provider_timeout", "")
			waitSettled(t, h, lc.termID, "succeeded")
			var id string
			if err := e.Main.DB.QueryRow(ctx, "SELECT payment_intent_id FROM terminal_payments WHERE terminal_id = ?", lc.termID).Scan(&id); err != nil {
				t.Fatal(err)
			}
			if in := lc.intent(t, id); in.Status != "requires_capture" || in.AmountCapturableMinor != 650 {
				t.Fatalf("reconciled: %+v", in)
			}
			if a := lc.available(t); a != 0 {
				t.Fatalf("available %d: a held authorisation was credited", a)
			}
		})

		if err := ledger.Verify(ctx, e.Main.DB); err != nil {
			t.Fatal(err)
		}
	}, func(c *app.Config) {
		c.P2PEKeys = keys
		c.ReconcileInterval = 100 * time.Millisecond
	})
}
