package disputes_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sim"
)

const liveSecret = "cbsec_bank_a_0123456789abcdef" // apptest.GoLive's callback secret for bank_a

// livePayment makes a succeeded live bank_a payment, the code read from the simulator.
func livePayment(t *testing.T, e *apptest.Env, s *apptest.Sim, key, msisdn string, amount int64) string {
	t.Helper()
	r := post(e, key, "/v1/payment_intents", map[string]any{"amount_minor": amount, "currency": "DJF", "provider": "bank_a",
		"customer_msisdn": msisdn})
	want(t, r, 201, "")
	in := decode[intent](t, r)
	want(t, post(e, key, "/v1/payment_intents/"+in.ID+"/confirm", map[string]string{"otp": s.OTP(msisdn)}), 200, "")
	if got := getIntent(t, e, key, in.ID); got.Status != "succeeded" {
		t.Fatalf("live payment %s is %s", in.ID, got.Status)
	}
	return in.ID
}

// simDispute asks the simulator to open a dispute (and close it later).
func simDispute(t *testing.T, s *apptest.Sim, body sim.DisputeRequest) string {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(s.URL+"/_sim/disputes", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ID string `json:"id"`
	}
	if resp.StatusCode != 201 || json.NewDecoder(resp.Body).Decode(&out) != nil {
		t.Fatalf("simulator answered %d", resp.StatusCode)
	}
	return out.ID
}

// callback posts a signed provider callback carrying d to payd.
func callback(t *testing.T, e *apptest.Env, eventID, typ string, d protocol.Dispute) int {
	t.Helper()
	ev := protocol.Event{ID: eventID, Object: "event", Type: typ, CreatedAt: time.Now().UTC(), Data: protocol.EventData{Dispute: &d}}
	body, _ := json.Marshal(ev)
	req, _ := http.NewRequest("POST", e.URL+"/providers/bank_a/callbacks?merchant="+e.Merchant.MerchantID, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(protocol.HeaderEventID, eventID)
	req.Header.Set(protocol.HeaderEventType, typ)
	req.Header.Set(protocol.HeaderSignature, protocol.Sign(liveSecret, time.Now(), eventID, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestLiveDisputes: a live provider's dispute callbacks, sent by the
// simulator twice each, make one dispute that withdraws once and, when won,
// reinstates once; a created arriving after its closed changes nothing.
func TestLiveDisputes(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		s := apptest.StartSim(t, sim.Config{DuplicateCallbacks: true})
		key := e.GoLive(s, apptest.LiveConnection{}, "bank_a")
		t.Run("duplicated callbacks, won", func(t *testing.T) {
			pi := livePayment(t, e, s, key, "+25377300001", 5000)
			before := available(t, e, true, "DJF")
			simDispute(t, s, sim.DisputeRequest{PaymentReference: pi, Reason: "product_not_received", Close: "won", CloseAfter: "500ms"})
			d := disputeOf(t, e, key, pi)
			if !d.Livemode || d.Reason != "product_not_received" || d.AmountMinor != 5000 {
				t.Fatalf("live dispute %+v", d)
			}
			won := waitStatus(t, e, key, d.ID, "needs_response")
			if won.Status != "won" {
				t.Fatalf("dispute %+v", won)
			}
			time.Sleep(300 * time.Millisecond) // the duplicates arrive
			if n := count(t, e, "SELECT COUNT(*) FROM disputes WHERE payment_intent = ?", pi); n != 1 {
				t.Fatalf("%d disputes", n)
			}
			if k := ledgerKinds(t, e, d.ID); !slices.Equal(k, []string{"dispute", "dispute_reversal"}) {
				t.Fatalf("ledger kinds %v", k)
			}
			if got := available(t, e, true, "DJF"); got != before {
				t.Fatalf("available %d, want %d", got, before)
			}
			if ev := eventTypes(t, e, d.ID); !slices.Equal(ev, []string{"dispute.created", "dispute.funds_withdrawn",
				"dispute.closed", "dispute.funds_reinstated"}) {
				t.Fatalf("events %v", ev)
			}
			verifyLedger(t, e)
		})
		t.Run("closed before created, and a late created", func(t *testing.T) {
			pi := livePayment(t, e, s, key, "+25377300002", 3000)
			before := available(t, e, true, "DJF")
			pd := protocol.Dispute{ID: "dsp_test_1", Object: "dispute", PaymentReference: pi, Status: protocol.DisputeLost,
				Reason: "fraudulent", AmountMinor: 3000, Currency: "DJF"}
			if st := callback(t, e, "pevt_closed_1", protocol.EventDisputeClosed, pd); st != 200 {
				t.Fatalf("closed callback answered %d", st)
			}
			d := disputeOf(t, e, key, pi)
			if d.Status != "lost" {
				t.Fatalf("dispute %+v", d)
			}
			pd.Status = protocol.DisputeOpen
			if st := callback(t, e, "pevt_created_late", protocol.EventDisputeCreated, pd); st != 200 {
				t.Fatalf("late created answered %d", st)
			}
			// A won after lost changes nothing either.
			pd.Status = protocol.DisputeWon
			if st := callback(t, e, "pevt_won_late", protocol.EventDisputeClosed, pd); st != 200 {
				t.Fatalf("late won answered %d", st)
			}
			if got := getDispute(t, e, key, d.ID); got.Status != "lost" {
				t.Fatalf("dispute after late callbacks %+v", got)
			}
			if n := count(t, e, "SELECT COUNT(*) FROM disputes WHERE payment_intent = ?", pi); n != 1 {
				t.Fatalf("%d disputes", n)
			}
			if got := available(t, e, true, "DJF"); got != before-3000 {
				t.Fatalf("available %d, want %d", got, before-3000)
			}
			// A report that does not match the payment is refused.
			pd.Currency, pd.Status = "USD", protocol.DisputeOpen
			if st := callback(t, e, "pevt_bad_currency", protocol.EventDisputeCreated, pd); st != 400 {
				t.Fatalf("mismatched dispute answered %d", st)
			}
			want(t, post(e, key, "/v1/refunds", map[string]any{"payment_intent": pi}), 409, "charge_disputed")
			// The live key may not use the sandbox route.
			want(t, post(e, key, "/v1/sandbox/disputes", map[string]any{"payment_intent": pi}), 403, "permission_denied")
			verifyLedger(t, e)
		})
	})
}
