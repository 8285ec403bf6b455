package payments

import (
	"context"
	"errors"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// DisputeTarget is what a dispute needs to know about its payment intent.
type DisputeTarget struct {
	IntentID    string
	MerchantID  string
	Livemode    bool
	Currency    string
	Provider    string
	ProviderRef string // the provider's reference of the payment
	Amount      int64  // DisputableAmount
	Card        bool   // a card payment (wallet_a card page, card-present)
	Succeeded   bool
	Disputed    bool
	// FullyRefunded: every captured minor unit is refunded or being refunded.
	FullyRefunded bool
}

// DisputableAmount is what a dispute of the intent takes back: the intent's
// amount. (With manual capture it becomes the captured amount; this is the
// one place to change.)
func DisputableAmount(in Intent) int64 { return in.AmountMinor }

// DisputeTargetOf reads an intent of the merchant in the mode for a dispute
// (404 naming payment_intent when it is not theirs).
func DisputeTargetOf(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string) (DisputeTarget, error) {
	r, refunding, err := loadWithRefunding(ctx, q, id)
	if r, err = store.Owned(r, err, merchantID, livemode); store.IsNotFound(err) {
		e := errs.NotFound("payment_intent", id)
		e.Param = "payment_intent"
		return DisputeTarget{}, e
	}
	if err != nil {
		return DisputeTarget{}, err
	}
	return disputeTarget(r, refunding), nil
}

// DisputeTargetByProviderRef finds the live intent a provider's dispute
// callback names: by payd's id (the payment's reference the provider was
// given), read by primary key; otherwise by the provider's own payment id
// among the merchant's intents on that provider (a rare path: providers
// echo payd's reference).
func DisputeTargetByProviderRef(ctx context.Context, q store.Querier, merchantID, provider, ref string) (DisputeTarget, error) {
	if t, err := DisputeTargetOf(ctx, q, merchantID, true, ref); err == nil {
		if t.Provider != provider {
			return DisputeTarget{}, errs.NotFound("payment_intent", ref)
		}
		return t, nil
	} else if e := errs.As(err); e == nil || e.Kind != errs.KindNotFound {
		return DisputeTarget{}, err
	}
	var id string
	err := q.QueryRow(ctx, `SELECT id FROM payment_intents WHERE merchant_id = ? AND livemode = ? AND provider = ? AND provider_ref = ?
		ORDER BY id LIMIT 1`, merchantID, true, provider, ref).Scan(&id)
	if store.IsNotFound(err) || ref == "" {
		return DisputeTarget{}, errs.NotFound("payment_intent", ref)
	}
	if err != nil {
		return DisputeTarget{}, err
	}
	return DisputeTargetOf(ctx, q, merchantID, true, id)
}

func loadWithRefunding(ctx context.Context, q store.Querier, id string) (*record, int64, error) {
	var refunding int64
	r, err := scan(withExtra{q.QueryRow(ctx, "SELECT "+columns+", amount_refunding_minor FROM payment_intents WHERE id = ?", id), &refunding})
	return r, refunding, err
}

func disputeTarget(r *record, refunding int64) DisputeTarget {
	return DisputeTarget{IntentID: r.ID, MerchantID: r.MerchantID, Livemode: r.Livemode, Currency: r.Currency, Provider: r.Provider,
		ProviderRef: r.providerRef, Amount: DisputableAmount(r.view()), Card: r.flow == providers.FlowCardPage || r.flow == flowCardPresent,
		Succeeded: r.Status == Succeeded, Disputed: r.Disputed,
		FullyRefunded: r.AmountCapturedMinor > 0 && refunding >= r.AmountCapturedMinor}
}

// ErrAlreadyDisputed is returned by MarkDisputed when the intent has a
// dispute already.
var ErrAlreadyDisputed = errors.New("payments: the payment intent is disputed already")

// MarkDisputed sets the intent's disputed flag inside the dispute's
// transaction, as a compare-and-set: the intent must be succeeded and not
// disputed yet and, when notFullyRefunded, must still have something not
// refunded (409 invalid_state otherwise). A refund's reserve checks the flag
// under the same row, so a refund and a dispute never both pass.
func MarkDisputed(ctx context.Context, tx *store.Tx, id string, notFullyRefunded bool) error {
	q := `UPDATE payment_intents SET disputed = TRUE WHERE id = ? AND status = 'succeeded' AND disputed = FALSE`
	if notFullyRefunded {
		q += ` AND amount_refunding_minor < amount_captured_minor`
	}
	res, err := tx.Exec(ctx, q, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	r, refunding, err := loadWithRefunding(ctx, tx, id)
	if err != nil {
		return err
	}
	switch {
	case r.Disputed:
		return ErrAlreadyDisputed
	case r.Status != Succeeded:
		return errs.InvalidState("payment intent %s is %s; only a succeeded payment can be disputed", id, r.Status)
	case refunding >= r.AmountCapturedMinor:
		return errs.InvalidState("payment intent %s is fully refunded; it cannot be disputed", id)
	}
	return errs.InvalidState("payment intent %s changed meanwhile", id)
}

// SandboxDisputeJob is the job kind that disputes a sandbox card payment
// made with the disputed test card (providers.Result.DisputeAfter); the
// disputes capability handles it.
const SandboxDisputeJob = "dispute.sandbox_card"

// SandboxDisputePayload is SandboxDisputeJob's payload.
type SandboxDisputePayload struct {
	PaymentIntent string `json:"payment_intent"`
}

// scheduleSandboxDispute queues the dispute of a sandbox payment in tx.
func (s *Service) scheduleSandboxDispute(ctx context.Context, tx *store.Tx, id string, after time.Duration) error {
	if err := jobs.Enqueue(ctx, tx, SandboxDisputeJob, SandboxDisputePayload{PaymentIntent: id}, tx.Now().Add(after), ""); err != nil {
		return err
	}
	tx.AfterCommit(s.wake)
	return nil
}

// DisputeTargetByID reads any intent by id for a dispute (background jobs).
func DisputeTargetByID(ctx context.Context, q store.Querier, id string) (DisputeTarget, error) {
	r, refunding, err := loadWithRefunding(ctx, q, id)
	if store.IsNotFound(err) {
		return DisputeTarget{}, errs.NotFound("payment_intent", id)
	}
	if err != nil {
		return DisputeTarget{}, err
	}
	return disputeTarget(r, refunding), nil
}
