package sim

import (
	"math"
	"net/http"

	"github.com/payd/payd/internal/providers/protocol"
)

// refund is one refund at the provider.
type refund struct {
	protocol.Refund
	callbackURL string
}

// refundFailNow reports whether this refund is refused (RefundFailureRate).
func (s *Sim) refundFailNow() bool { return roll(math.Float64frombits(s.refundFailureRate.Load())) }

// SetRefundFailureRate changes the fraction of refunds a running simulator refuses.
func (s *Sim) SetRefundFailureRate(f float64) { s.refundFailureRate.Store(math.Float64bits(f)) }

// createRefund handles POST /{provider}/v1/refunds. The simulator pays back
// at once: the answer is succeeded, or failed (refund_declined) for the
// fraction RefundFailureRate of refunds; a refund of a payment the account
// does not have, that has not succeeded, or of more than is left of it is
// refused with a 4xx and not recorded.
func (s *Sim) createRefund(r *http.Request, a *account, body []byte) answer {
	var req protocol.RefundRequest
	if ans, ok := decode(body, &req); !ok {
		return ans
	}
	if ans, ok := checkMovement(req.Reference, req.AmountMinor, req.CallbackURL); !ok {
		return ans
	}
	bad := func(code, msg, field string) answer { return errAnswer(http.StatusBadRequest, code, msg, field) }
	now := s.cfg.Now().UTC()
	a.mu.Lock()
	if old := a.rfdRefs[req.Reference]; old != nil {
		a.mu.Unlock()
		return errAnswer(http.StatusConflict, "duplicate_reference", "a refund with this reference exists ("+old.ID+"); retry under its Idempotency-Key or ask its status", "reference")
	}
	p := a.payRefs[req.PaymentReference]
	switch {
	case p == nil:
		a.mu.Unlock()
		return errAnswer(http.StatusNotFound, "payment_not_found", "no payment with this payment_reference", "payment_reference")
	case p.Status != protocol.StatusSucceeded:
		a.mu.Unlock()
		return bad("payment_not_refundable", "only a succeeded payment can be refunded", "payment_reference")
	case req.Currency != p.Currency:
		a.mu.Unlock()
		return bad("currency_mismatch", "the refund's currency is not the payment's", "currency")
	case req.AmountMinor > p.CapturedMinor-p.refunding:
		a.mu.Unlock()
		return bad("amount_too_large", "the amount is more than is left to refund on this payment", "amount_minor")
	}
	rf := &refund{Refund: protocol.Refund{ID: newID("rfd_"), Object: "refund", Reference: req.Reference, PaymentReference: req.PaymentReference,
		AmountMinor: req.AmountMinor, Currency: req.Currency, CreatedAt: now, UpdatedAt: now}, callbackURL: req.CallbackURL}
	a.refunds[rf.ID], a.rfdRefs[rf.Reference] = rf, rf
	var ev *outgoing
	if s.refundFailNow() {
		rf.Status, rf.Failure = protocol.RefundFailed, &protocol.Failure{Code: "refund_declined", Message: "The provider declined the refund."}
		ev = s.refundEvent(protocol.EventRefundFailed, rf, now)
	} else {
		p.refunding += req.AmountMinor
		rf.Status, rf.SettledAt = protocol.RefundSucceeded, &now
		ev = s.refundEvent(protocol.EventRefundSucceeded, rf, now)
	}
	view := rf.Refund
	a.mu.Unlock()
	s.send(a, ev)
	return answer{status: http.StatusCreated, body: view, hang: s.hangNow()}
}

// refundByID handles GET /{provider}/v1/refunds/{id} (the provider's id or
// the merchant's reference).
func (s *Sim) refundByID(r *http.Request, a *account, _ []byte) answer {
	return movementView(a, a.refunds, a.rfdRefs, r.PathValue("id"), true, refundView, "refund")
}

// refundByReference handles GET /{provider}/v1/refunds?reference=...
func (s *Sim) refundByReference(r *http.Request, a *account, _ []byte) answer {
	ref, ans, ok := referenceParam(r)
	if !ok {
		return ans
	}
	return movementView(a, a.refunds, a.rfdRefs, ref, false, refundView, "refund")
}

func refundView(rf *refund) protocol.Refund { return rf.Refund }
