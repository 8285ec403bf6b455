package callbacks

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

const secret = "cb-secret-for-tests"

// settler records what it is asked to apply.
type settler struct {
	mu       sync.Mutex
	payments []protocol.Payment
	payouts  []protocol.Payout
	err      error
}

func (s *settler) ApplyProviderPayment(_ context.Context, _, _ string, p protocol.Payment) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.payments = append(s.payments, p)
	return s.err
}

func (s *settler) ApplyProviderPayout(_ context.Context, _, _ string, p protocol.Payout) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.payouts = append(s.payouts, p)
	return s.err
}

func newService(db *store.DB, st *settler) *Service {
	return New(Config{DB: db, Payments: st, Payouts: st, Logger: slog.New(slog.DiscardHandler),
		Secret: func(_ context.Context, merchantID, provider string) (string, error) {
			if merchantID != "mer_1" || provider != "wallet_b" && provider != "bank_a" {
				return "", errs.NotFound("provider connection", provider)
			}
			return secret, nil
		}})
}

func delivery(eventID string, body []byte, at time.Time) Delivery {
	return Delivery{Provider: "bank_a", MerchantID: "mer_1", EventID: eventID, Signature: protocol.Sign(secret, at, eventID, body), Body: body}
}

func TestReceive(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		st := &settler{}
		svc := newService(db, st)
		ctx := context.Background()
		ev := protocol.Event{ID: "pevt_1", Type: protocol.EventPaymentSucceeded,
			Data: protocol.EventData{Payment: &protocol.Payment{ID: "pay_1", Reference: "pi_1", Status: "succeeded", AmountMinor: 5, CapturedMinor: 5, Currency: "DJF"}}}
		body, _ := json.Marshal(ev)
		for i := 0; i < 3; i++ {
			r, err := svc.Receive(ctx, delivery("pevt_1", body, time.Now()))
			if err != nil || !r.Received || r.Duplicate != (i > 0) {
				t.Fatalf("delivery %d: %+v %v", i, r, err)
			}
		}
		if len(st.payments) != 1 || st.payments[0].Reference != "pi_1" {
			t.Fatalf("applied %d times", len(st.payments))
		}
		bad := []struct {
			name string
			d    Delivery
			code string
		}{
			{"wrong signature", func() Delivery { d := delivery("pevt_2", body, time.Now()); d.Signature += "0"; return d }(), "signature_invalid"},
			{"unknown merchant", func() Delivery { d := delivery("pevt_2", body, time.Now()); d.MerchantID = "mer_2"; return d }(), "signature_invalid"},
			{"id differs from the header", delivery("pevt_2", body, time.Now()), "parameter_invalid"},
			{"neither payment nor payout", delivery("pevt_3", []byte(`{"id":"pevt_3","type":"x","data":{}}`), time.Now()), "parameter_invalid"},
			{"unknown provider", func() Delivery { d := delivery("pevt_2", body, time.Now()); d.Provider = "bank_z"; return d }(), "resource_missing"},
		}
		for _, c := range bad {
			_, err := svc.Receive(ctx, c.d)
			if e := errs.As(err); e == nil || (e.Code != c.code && !(c.code == "resource_missing" && e.Kind == errs.KindNotFound)) {
				t.Errorf("%s: %v", c.name, err)
			}
		}
		// A settler's failure is not remembered: the redelivery applies again.
		st.err = errs.Internal(nil)
		ev2 := protocol.Event{ID: "pevt_4", Type: protocol.EventPayoutSucceeded, Data: protocol.EventData{Payout: &protocol.Payout{ID: "pout_1", Reference: "k1", Status: "succeeded"}}}
		body2, _ := json.Marshal(ev2)
		if _, err := svc.Receive(ctx, delivery("pevt_4", body2, time.Now())); err == nil {
			t.Fatal("a failing settler answered success")
		}
		st.err = nil
		if r, err := svc.Receive(ctx, delivery("pevt_4", body2, time.Now())); err != nil || r.Duplicate || len(st.payouts) != 2 {
			t.Fatalf("redelivery after a failure: %+v %v (%d)", r, err, len(st.payouts))
		}
		if n, err := svc.Prune(ctx, -time.Hour); err != nil || n != 2 {
			t.Fatalf("prune: %d %v", n, err)
		}
	})
}

// FuzzReceive: any signed body is answered without a panic, and only an
// event carrying exactly one object reaches a settler.
func FuzzReceive(f *testing.F) {
	db := storetest.Open(f, storetest.SQLite)
	st := &settler{}
	svc := newService(db, st)
	f.Add([]byte(`{"id":"pevt_f","type":"payment.succeeded","data":{"payment":{"reference":"pi_1","status":"succeeded"}}}`))
	f.Add([]byte(`{"id":"pevt_f","data":{"payment":{},"payout":{}}}`))
	f.Add([]byte(`{"id":"pevt_f","data":{"payout":{"reference":"k","amount_minor":-1}}}`))
	f.Add([]byte(`[1,2,3]`))
	f.Add([]byte(`{"id":"pevt_f","created_at":"not a time"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := svc.Prune(context.Background(), -time.Hour); err != nil { // forget earlier inputs' event
			t.Fatal(err)
		}
		before := len(st.payments) + len(st.payouts)
		_, err := svc.Receive(context.Background(), delivery("pevt_f", body, time.Now()))
		var ev protocol.Event
		if json.Unmarshal(body, &ev) != nil || ev.ID != "pevt_f" || (ev.Data.Payment == nil) == (ev.Data.Payout == nil) {
			if err == nil {
				t.Fatalf("accepted %q", body)
			}
			if len(st.payments)+len(st.payouts) != before {
				t.Fatalf("a bad body reached a settler: %q", body)
			}
		}
	})
}
