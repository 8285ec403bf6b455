package payments

import (
	"context"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// maxOTP bounds the code a client may send; longer is malformed, not wrong.
const maxOTP = 32

// Confirm passes the customer's SMS code to the provider of an intent
// waiting with collect_otp. The code is never stored or logged. A right code
// succeeds (ledger credit and payment_intent.succeeded); a wrong one cancels
// the intent (single attempt) with 400 otp_invalid; under the sandbox's
// otp_expired every code fails with 400 otp_expired. Any intent not waiting
// for a code is 409 invalid_state, and of many racing confirms exactly one is
// processed.
func (s *Service) Confirm(ctx context.Context, cl store.Claim, p auth.Principal, id, otp string) (Intent, error) {
	work := s.db.Within(cl)
	if otp == "" {
		return Intent{}, errs.Missing("otp")
	}
	if len(otp) > maxOTP {
		return Intent{}, errs.Invalid("otp", "parameter_invalid", "otp is at most %d characters", maxOTP)
	}
	ctx = context.WithoutCancel(ctx)
	r, res, err := s.step(ctx, cl,
		func() (*record, error) { return load(ctx, work, p.MerchantID, p.Livemode, id) },
		func(r *record) error {
			if r.Status != RequiresAction || r.NextAction == nil || r.NextAction.Type != providers.ActionCollectOTP {
				return errs.InvalidState("payment intent %s is %s and does not wait for a code; only an intent whose next_action is collect_otp can be confirmed", r.ID, r.Status)
			}
			return nil
		},
		func(a providers.PaymentAdapter, pay providers.Payment) (providers.Result, error) {
			return a.ConfirmOTP(ctx, pay, otp)
		})
	if err != nil {
		return Intent{}, err
	}
	return answer(r, res)
}
