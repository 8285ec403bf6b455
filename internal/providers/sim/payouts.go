package sim

import (
	"net/http"

	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
)

// payout is one payout at the provider.
type payout struct {
	protocol.Payout
	callbackURL string
}

// createPayout handles POST /{provider}/v1/payouts. The simulator pays at
// once: the answer is succeeded, or failed for a recipient ending in 0000.
func (s *Sim) createPayout(r *http.Request, a *account, body []byte) answer {
	var req protocol.PayoutRequest
	if ans, ok := decode(body, &req); !ok {
		return ans
	}
	if ans, ok := checkMovement(req.Reference, req.AmountMinor, req.CallbackURL); !ok {
		return ans
	}
	bad := func(code, msg, field string) answer { return errAnswer(http.StatusBadRequest, code, msg, field) }
	switch {
	case !railCurrency(a.provider, req.Currency):
		return bad("currency_not_supported", a.provider+" does not pay out "+req.Currency, "currency")
	case req.MSISDN == "" && req.Account == "":
		return bad("parameter_missing", "msisdn (wallets) or account (banks) names the recipient", "msisdn")
	case req.MSISDN != "" && !e164(req.MSISDN):
		return bad("invalid_msisdn", "msisdn must be E.164 (+ and 7 to 15 digits)", "msisdn")
	}
	recipient := req.MSISDN
	if recipient == "" {
		recipient = req.Account
	}
	now := s.cfg.Now().UTC()
	po := &payout{Payout: protocol.Payout{ID: newID("pout_"), Object: "payout", Reference: req.Reference, AmountMinor: req.AmountMinor,
		Currency: req.Currency, CreatedAt: now, UpdatedAt: now}, callbackURL: req.CallbackURL}
	a.mu.Lock()
	if old := a.poutRefs[req.Reference]; old != nil {
		a.mu.Unlock()
		return errAnswer(http.StatusConflict, "duplicate_reference", "a payout with this reference exists ("+old.ID+"); retry under its Idempotency-Key or ask its status", "reference")
	}
	a.payouts[po.ID], a.poutRefs[po.Reference] = po, po
	var ev *outgoing
	if refused(recipient) {
		msg := "The recipient's wallet does not exist."
		if a.provider == providers.BankA || a.provider == providers.BankB {
			msg = "The bank has no such account."
		}
		po.Status, po.Failure = protocol.PayoutFailed, &protocol.Failure{Code: "account_not_found", Message: msg}
		ev = s.event(protocol.EventPayoutFailed, nil, po, now)
	} else {
		po.Status, po.SettledAt = protocol.PayoutSucceeded, &now
		ev = s.event(protocol.EventPayoutSucceeded, nil, po, now)
	}
	view := po.Payout
	a.mu.Unlock()
	s.send(a, ev)
	return answer{status: http.StatusCreated, body: view, hang: s.hangNow()}
}

// payoutByID handles GET /{provider}/v1/payouts/{id} (the provider's id or
// the merchant's reference).
func (s *Sim) payoutByID(r *http.Request, a *account, _ []byte) answer {
	return movementView(a, a.payouts, a.poutRefs, r.PathValue("id"), true, payoutView, "payout")
}

// payoutByReference handles GET /{provider}/v1/payouts?reference=...
func (s *Sim) payoutByReference(r *http.Request, a *account, _ []byte) answer {
	ref, ans, ok := referenceParam(r)
	if !ok {
		return ans
	}
	return movementView(a, a.payouts, a.poutRefs, ref, false, payoutView, "payout")
}

func payoutView(po *payout) protocol.Payout { return po.Payout }
