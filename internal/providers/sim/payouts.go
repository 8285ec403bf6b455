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
	bad := func(code, msg, field string) answer { return errAnswer(http.StatusBadRequest, code, msg, field) }
	switch {
	case req.Reference == "" || len(req.Reference) > 255:
		return bad("parameter_invalid", "reference is required (at most 255 characters)", "reference")
	case req.AmountMinor <= 0:
		return bad("parameter_invalid", "amount_minor must be a positive integer", "amount_minor")
	case !railCurrency(a.provider, req.Currency):
		return bad("currency_not_supported", a.provider+" does not pay out "+req.Currency, "currency")
	case !httpURL(req.CallbackURL):
		return bad("parameter_invalid", "callback_url must be an http(s) URL", "callback_url")
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
	id := r.PathValue("id")
	a.mu.Lock()
	po := a.payouts[id]
	if po == nil {
		po = a.poutRefs[id]
	}
	var view protocol.Payout
	if po != nil {
		view = po.Payout
	}
	a.mu.Unlock()
	if po == nil {
		return errAnswer(http.StatusNotFound, "payout_not_found", "no such payout", "")
	}
	return answer{status: http.StatusOK, body: view}
}

// payoutByReference handles GET /{provider}/v1/payouts?reference=...
func (s *Sim) payoutByReference(r *http.Request, a *account, _ []byte) answer {
	ref := r.URL.Query().Get("reference")
	if ref == "" {
		return errAnswer(http.StatusBadRequest, "parameter_missing", "reference is required", "reference")
	}
	a.mu.Lock()
	po := a.poutRefs[ref]
	var view protocol.Payout
	if po != nil {
		view = po.Payout
	}
	a.mu.Unlock()
	if po == nil {
		return errAnswer(http.StatusNotFound, "payout_not_found", "no payout with this reference", "")
	}
	return answer{status: http.StatusOK, body: view}
}
