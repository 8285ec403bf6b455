// Package callbacks receives live providers' callbacks
// (POST /providers/{provider}/callbacks, docs/providers.md): it verifies
// each one's signature with the merchant's callback secret, de-duplicates
// it by event id, and hands the reported payment or payout to the service
// that owns it, which records it as a compare-and-set. Callbacks may come
// twice, out of order, or before the answer of the call that caused them;
// whichever report comes first settles the object, once.
package callbacks

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/store"
)

// PaymentSettler records what a provider reports about a live payment
// intent (payments.Service, through the wiring). It returns a not-found
// error for an intent the merchant does not have in live mode, and an
// invalid error when the report does not match the intent.
type PaymentSettler interface {
	ApplyProviderPayment(ctx context.Context, merchantID, provider string, p protocol.Payment) error
}

// PayoutSettler records what a provider reports about a live payout.
type PayoutSettler interface {
	ApplyProviderPayout(ctx context.Context, merchantID, provider string, p protocol.Payout) error
}

// RefundSettler records what a provider reports about a live refund.
type RefundSettler interface {
	ApplyProviderRefund(ctx context.Context, merchantID, provider string, r protocol.Refund) error
}

// Config is what the service needs.
// DisputeSettler applies a provider's dispute callbacks (disputes.Service).
type DisputeSettler interface {
	ApplyProviderDispute(ctx context.Context, merchantID, provider string, d protocol.Dispute) error
}

type Config struct {
	DB *store.DB
	// Secret returns a merchant's callback secret for a provider; a
	// merchant without that connection is an error.
	Secret   func(ctx context.Context, merchantID, provider string) (string, error)
	Payments PaymentSettler
	Payouts  PayoutSettler
	Refunds  RefundSettler
	Disputes DisputeSettler
	Logger   *slog.Logger
	// Count counts callbacks by result (applied, duplicate, rejected, error).
	Count func(provider, result string)
	Now   func() time.Time
}

// Service receives callbacks.
type Service struct{ cfg Config }

// New makes the service.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Count == nil {
		cfg.Count = func(string, string) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{cfg: cfg}
}

// Delivery is one callback as it arrived.
type Delivery struct {
	Provider   string
	MerchantID string // from the callback URL's merchant parameter
	EventID    string // Provider-Event-Id
	Signature  string // Provider-Signature
	Body       []byte // the raw body, as signed
}

// Receipt is the answer to an accepted callback.
type Receipt struct {
	Received  bool   `json:"received"`
	EventID   string `json:"event_id"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// errSignature is the one answer to every callback that cannot be
// authenticated (a wrong signature, an unknown merchant or connection), so
// nothing can be probed.
func errSignature() *errs.Error {
	return &errs.Error{Kind: errs.KindInvalid, Code: "signature_invalid",
		Message: "the callback's Provider-Signature does not verify for this merchant and provider"}
}

// Receive authenticates a callback and applies it. Nothing about the
// object changes unless the signature verifies.
func (s *Service) Receive(ctx context.Context, d Delivery) (Receipt, error) {
	r, result, err := s.receive(ctx, d)
	if providers.Known(d.Provider, providers.All) {
		// Only known providers become metric labels: the set stays bounded.
		s.cfg.Count(d.Provider, result)
	}
	return r, err
}

func (s *Service) receive(ctx context.Context, d Delivery) (Receipt, string, error) {
	if !providers.Known(d.Provider, providers.All) {
		return Receipt{}, "rejected", errs.NotFound("provider", d.Provider)
	}
	if d.MerchantID == "" || d.EventID == "" {
		return Receipt{}, "rejected", errSignature()
	}
	secret, err := s.cfg.Secret(ctx, d.MerchantID, d.Provider)
	if err != nil {
		if e := errs.As(err); e != nil && e.Kind != errs.KindInternal {
			return Receipt{}, "rejected", errSignature()
		}
		return Receipt{}, "error", err
	}
	if err := protocol.Verify(d.Signature, secret, d.EventID, d.Body, s.cfg.Now()); err != nil {
		s.cfg.Logger.WarnContext(ctx, "provider callback refused", "provider", d.Provider, "merchant_id", d.MerchantID,
			"event_id", d.EventID, "reason", err.Error())
		return Receipt{}, "rejected", errSignature()
	}
	var ev protocol.Event
	if err := json.Unmarshal(d.Body, &ev); err != nil || ev.ID != d.EventID {
		return Receipt{}, "rejected", errs.Invalid("body", "parameter_invalid", "the callback body is not an event whose id is the Provider-Event-Id header")
	}
	receipt := Receipt{Received: true, EventID: ev.ID}
	seen, err := s.seen(ctx, d)
	if err != nil {
		return Receipt{}, "error", err
	}
	if seen {
		receipt.Duplicate = true
		return receipt, "duplicate", nil
	}
	var objectID string
	carried := 0
	for _, present := range []bool{ev.Data.Payment != nil, ev.Data.Payout != nil, ev.Data.Refund != nil, ev.Data.Dispute != nil} {
		if present {
			carried++
		}
	}
	switch {
	case carried != 1:
		return Receipt{}, "rejected", errs.Invalid("data", "parameter_invalid", "the event must carry exactly one payment, payout, refund or dispute")
	case ev.Data.Payment != nil && s.cfg.Payments != nil:
		objectID = ev.Data.Payment.Reference
		err = s.cfg.Payments.ApplyProviderPayment(ctx, d.MerchantID, d.Provider, *ev.Data.Payment)
	case ev.Data.Payout != nil && s.cfg.Payouts != nil:
		objectID = ev.Data.Payout.Reference
		err = s.cfg.Payouts.ApplyProviderPayout(ctx, d.MerchantID, d.Provider, *ev.Data.Payout)
	case ev.Data.Refund != nil && s.cfg.Refunds != nil:
		objectID = ev.Data.Refund.Reference
		err = s.cfg.Refunds.ApplyProviderRefund(ctx, d.MerchantID, d.Provider, *ev.Data.Refund)
	case ev.Data.Dispute != nil && s.cfg.Disputes != nil:
		objectID = ev.Data.Dispute.ID
		err = s.cfg.Disputes.ApplyProviderDispute(ctx, d.MerchantID, d.Provider, *ev.Data.Dispute)
	default:
		return Receipt{}, "rejected", errs.Invalid("data", "parameter_invalid", "payd does not take this kind of callback")
	}
	if err != nil {
		if e := errs.As(err); e != nil && (e.Kind == errs.KindNotFound || e.Kind == errs.KindInvalid) {
			s.cfg.Logger.WarnContext(ctx, "provider callback not applied", "provider", d.Provider, "merchant_id", d.MerchantID,
				"event_id", ev.ID, "type", ev.Type, "object_id", objectID, "code", e.Code)
			return Receipt{}, "rejected", err
		}
		return Receipt{}, "error", err
	}
	if err := s.remember(ctx, d, ev, objectID); err != nil {
		return Receipt{}, "error", err
	}
	s.cfg.Logger.InfoContext(ctx, "provider callback applied", "provider", d.Provider, "merchant_id", d.MerchantID,
		"event_id", ev.ID, "type", ev.Type, "object_id", objectID)
	return receipt, "applied", nil
}

// seen reports whether the event was applied before.
func (s *Service) seen(ctx context.Context, d Delivery) (bool, error) {
	var one int
	err := s.cfg.DB.QueryRow(ctx, "SELECT 1 FROM provider_callbacks WHERE merchant_id = ? AND provider = ? AND event_id = ?",
		d.MerchantID, d.Provider, d.EventID).Scan(&one)
	if store.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// remember records an applied event. It is written after the object's
// change (which is a compare-and-set of its own), so a failure between the
// two only means a redelivery is applied again, and finds nothing to do.
func (s *Service) remember(ctx context.Context, d Delivery, ev protocol.Event, objectID string) error {
	_, err := s.cfg.DB.Exec(ctx, `INSERT INTO provider_callbacks (merchant_id, provider, event_id, event_type, object_id, livemode, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (merchant_id, provider, event_id) DO NOTHING`,
		d.MerchantID, d.Provider, ev.ID, ev.Type, objectID, true, store.Micros(s.cfg.DB.Now()))
	return err
}

// Prune deletes remembered events older than keep.
func (s *Service) Prune(ctx context.Context, keep time.Duration) (int64, error) {
	res, err := s.cfg.DB.Exec(ctx, "DELETE FROM provider_callbacks WHERE created_at < ?", store.Micros(s.cfg.DB.Now().Add(-keep)))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
