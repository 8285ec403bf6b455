package terminals_test

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/payments"
)

// fakeRecorder stands in for payments.Service.RecordCardPresent until the
// payments capability is merged: it builds the intent the way the contract
// says (succeeded with payment_method_details.card_present, or canceled with
// last_error), idempotent by IdempotencyKey, in memory.
type fakeRecorder struct {
	mu    sync.Mutex
	byKey map[string]payments.Intent
	calls []payments.CardPresent
}

func newFakeRecorder() *fakeRecorder { return &fakeRecorder{byKey: map[string]payments.Intent{}} }

func (f *fakeRecorder) RecordCardPresent(ctx context.Context, p auth.Principal, in payments.CardPresent) (payments.Intent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, in)
	key := p.MerchantID + "\x00" + in.IdempotencyKey
	if pi, ok := f.byKey[key]; ok {
		return pi, nil
	}
	now := time.Now().UTC().Truncate(time.Second)
	cp := map[string]any{"brand": in.Brand, "last4": in.Last4, "entry_mode": in.EntryMode, "terminal_id": in.TerminalID, "p2pe": true}
	if in.Approved {
		cp["auth_code"] = in.AuthCode
	}
	details, _ := json.Marshal(map[string]any{"type": "card_present", "card_present": cp})
	raw := json.RawMessage(details)
	pi := payments.Intent{ID: ids.New("pi_"), Object: "payment_intent", AmountMinor: in.AmountMinor, Currency: in.Currency,
		Provider: "card_present", Metadata: map[string]string{}, PaymentMethodDetails: &raw, Livemode: p.Livemode,
		CreatedAt: now, MerchantID: p.MerchantID}
	if in.Approved {
		pi.Status, pi.AmountCapturedMinor, pi.SucceededAt = payments.Succeeded, in.AmountMinor, &now
	} else {
		pi.Status, pi.CanceledAt = payments.Canceled, &now
		pi.LastError = &payments.LastError{Code: "card_declined", Message: "The card was declined.", Provider: "card_present", DeclineCode: in.DeclineCode}
	}
	f.byKey[key] = pi
	return pi, nil
}

// count returns how many intents were recorded.
func (f *fakeRecorder) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.byKey)
}
