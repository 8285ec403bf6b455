package sim

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
)

// cardAuth is one card-present authorisation at the card gateway. It keeps
// the card's brand and last four digits only: the number, expiry and
// cryptogram of the request are checked and dropped.
type cardAuth struct {
	protocol.CardAuthorization
	refunding int64 // refunds not failed: what is no longer refundable
}

// cardGatewayRail is the rail whose base URL serves the card gateway:
// wallet_a acquires the cards (Visa, Mastercard) of card-present payments.
const cardGatewayRail = providers.WalletA

// authorizeCard handles POST /{provider}/v1/card_authorizations. The test
// cards are the sandbox's: cardDeclined is declined (generic_decline), an
// expired card is declined (expired_card), every other valid card is
// approved, card3DS included (a chip read needs no 3-D Secure). Capture
// true captures at once.
func (s *Sim) authorizeCard(r *http.Request, a *account, body []byte) answer {
	if a.provider != cardGatewayRail {
		return errAnswer(http.StatusNotFound, "not_supported", "the card gateway is served on "+cardGatewayRail, "")
	}
	var req protocol.CardAuthorizationRequest
	if ans, ok := decode(body, &req); !ok {
		return ans
	}
	now := s.cfg.Now().UTC()
	if ans, ok := checkAuthorization(&req, now); !ok {
		return ans
	}
	number := req.Card.Number
	au := &cardAuth{CardAuthorization: protocol.CardAuthorization{ID: newID("cauth_"), Object: "card_authorization",
		Reference: req.Reference, AmountMinor: req.AmountMinor, Currency: req.Currency, CreatedAt: now, UpdatedAt: now,
		Card: &protocol.MethodDetails{Type: "card", Brand: string(card.BrandOf(number)), Last4: number[len(number)-4:]}}}
	switch {
	case card.Expiry{Year: req.Card.ExpYear, Month: time.Month(req.Card.ExpMonth)}.ExpiredAt(now):
		au.Status = protocol.AuthorizationDeclined
		au.Failure = &protocol.Failure{Code: "card_declined", Message: "The card has expired.", DeclineCode: "expired_card"}
	case number == cardDeclined:
		au.Status = protocol.AuthorizationDeclined
		au.Failure = &protocol.Failure{Code: "card_declined", Message: "The card was declined.", DeclineCode: "generic_decline"}
	case req.Capture:
		au.Status, au.CapturedMinor, au.AuthCode = protocol.AuthorizationCaptured, req.AmountMinor, newAuthCode()
	default:
		au.Status, au.AuthCode = protocol.AuthorizationAuthorized, newAuthCode()
	}
	a.mu.Lock()
	if old := a.authRefs[req.Reference]; old != nil {
		a.mu.Unlock()
		return errAnswer(http.StatusConflict, "duplicate_reference", "an authorisation with this reference exists ("+old.ID+"); retry under its Idempotency-Key or ask its status", "reference")
	}
	a.auths[au.ID], a.authRefs[au.Reference] = au, au
	view := au.CardAuthorization
	a.mu.Unlock()
	return answer{status: http.StatusCreated, body: view, hang: s.hangNow()}
}

// checkAuthorization checks an authorisation request's fields. Its errors
// name the field, never its value.
func checkAuthorization(req *protocol.CardAuthorizationRequest, now time.Time) (answer, bool) {
	bad := func(msg, field string) (answer, bool) {
		return errAnswer(http.StatusBadRequest, "parameter_invalid", msg, field), false
	}
	c := req.Card
	switch {
	case req.Reference == "" || len(req.Reference) > 255:
		return bad("reference is required (at most 255 characters)", "reference")
	case req.AmountMinor <= 0:
		return bad("amount_minor must be a positive integer", "amount_minor")
	case req.Currency != "DJF" && req.Currency != "USD":
		return errAnswer(http.StatusBadRequest, "currency_not_supported", "the card gateway takes DJF or USD", "currency"), false
	case req.EntryMode != "chip" && req.EntryMode != "contactless":
		return bad("entry_mode must be chip or contactless", "entry_mode")
	case len(c.Number) < 12 || len(c.Number) > 19 || !card.LuhnValid(c.Number):
		return bad("card.number is not a valid card number", "card.number")
	case c.ExpMonth < 1 || c.ExpMonth > 12:
		return bad("card.exp_month must be 1 to 12", "card.exp_month")
	case c.ExpYear < 2000 || c.ExpYear > 2099:
		return bad("card.exp_year must be four digits", "card.exp_year")
	}
	if raw, err := hex.DecodeString(c.Cryptogram); err != nil || len(raw) != 8 {
		return bad("card.cryptogram must be 16 hex digits", "card.cryptogram")
	}
	return answer{}, true
}

// newAuthCode is a six-character approval code, as printed on receipts.
func newAuthCode() string {
	var b [5]byte
	rand.Read(b[:])
	return base32.StdEncoding.EncodeToString(b[:])[:6]
}

// findAuth returns the authorisation named by the gateway's id or the
// merchant's reference; call with a.mu held.
func findAuth(a *account, key string) *cardAuth {
	if au := a.authRefs[key]; au != nil {
		return au
	}
	return a.auths[key]
}

// heldAuth is the authorized authorisation key (a.mu held) that a capture
// or a void (done: "captured", "voided") changes, or the answer refusing it.
func heldAuth(a *account, key, done string) (*cardAuth, answer, bool) {
	au := findAuth(a, key)
	switch {
	case au == nil:
		return nil, errAnswer(http.StatusNotFound, "authorization_not_found", "no such card authorisation", ""), false
	case au.Status != protocol.AuthorizationAuthorized:
		return nil, errAnswer(http.StatusConflict, "invalid_state", "only an authorized authorisation can be "+done+"; this one is "+au.Status, ""), false
	}
	return au, answer{}, true
}

// cardAuthByID handles GET /{provider}/v1/card_authorizations/{id} (the
// gateway's id or the merchant's reference).
func (s *Sim) cardAuthByID(r *http.Request, a *account, _ []byte) answer {
	return s.cardAuthView(a, r.PathValue("id"))
}

// cardAuthByReference handles GET /{provider}/v1/card_authorizations?reference=...
func (s *Sim) cardAuthByReference(r *http.Request, a *account, _ []byte) answer {
	ref, ans, ok := referenceParam(r)
	if !ok {
		return ans
	}
	return s.cardAuthView(a, ref)
}

func (s *Sim) cardAuthView(a *account, key string) answer {
	a.mu.Lock()
	au := findAuth(a, key)
	var v protocol.CardAuthorization
	if au != nil {
		v = au.CardAuthorization
	}
	a.mu.Unlock()
	if au == nil {
		return errAnswer(http.StatusNotFound, "authorization_not_found", "no such card authorisation", "")
	}
	return answer{status: http.StatusOK, body: v}
}

// captureCard handles POST /{provider}/v1/card_authorizations/{id}/capture:
// an authorized authorisation becomes captured for the amount asked (at most
// the authorised amount); the rest is released.
func (s *Sim) captureCard(r *http.Request, a *account, body []byte) answer {
	var req protocol.CardCaptureRequest
	if ans, ok := decode(body, &req); !ok {
		return ans
	}
	now := s.cfg.Now().UTC()
	a.mu.Lock()
	defer a.mu.Unlock()
	au, ans, ok := heldAuth(a, r.PathValue("id"), "captured")
	switch {
	case !ok:
		return ans
	case req.AmountMinor <= 0 || req.AmountMinor > au.AmountMinor:
		return errAnswer(http.StatusBadRequest, "amount_too_large", "amount_minor must be positive and at most the authorised amount", "amount_minor")
	}
	au.Status, au.CapturedMinor, au.UpdatedAt = protocol.AuthorizationCaptured, req.AmountMinor, now
	return answer{status: http.StatusOK, body: au.CardAuthorization, hang: s.hangNow()}
}

// voidCard handles POST /{provider}/v1/card_authorizations/{id}/void: an
// authorized authorisation is released without capture.
func (s *Sim) voidCard(r *http.Request, a *account, body []byte) answer {
	var req protocol.CardVoidRequest
	if ans, ok := decode(body, &req); !ok {
		return ans
	}
	now := s.cfg.Now().UTC()
	a.mu.Lock()
	defer a.mu.Unlock()
	au, ans, ok := heldAuth(a, r.PathValue("id"), "voided")
	if !ok {
		return ans
	}
	au.Status, au.UpdatedAt = protocol.AuthorizationVoided, now
	return answer{status: http.StatusOK, body: au.CardAuthorization, hang: s.hangNow()}
}

// refundCard handles POST /{provider}/v1/card_authorizations/{id}/refunds:
// a refund of a captured authorisation, paid back at once (or refused for
// the fraction RefundFailureRate), recorded with the account's other
// refunds (so GET /v1/refunds?reference= answers it) and reported by a
// refund callback.
func (s *Sim) refundCard(r *http.Request, a *account, body []byte) answer {
	var req protocol.CardRefundRequest
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
	au := findAuth(a, r.PathValue("id"))
	switch {
	case au == nil:
		a.mu.Unlock()
		return errAnswer(http.StatusNotFound, "payment_not_found", "no such card authorisation", "")
	case au.Status != protocol.AuthorizationCaptured:
		a.mu.Unlock()
		return bad("payment_not_refundable", "only a captured authorisation can be refunded", "")
	case req.Currency != au.Currency:
		a.mu.Unlock()
		return bad("currency_mismatch", "the refund's currency is not the authorisation's", "currency")
	case req.AmountMinor > au.CapturedMinor-au.refunding:
		a.mu.Unlock()
		return bad("amount_too_large", "the amount is more than is left to refund on this authorisation", "amount_minor")
	}
	rf := &refund{Refund: protocol.Refund{ID: newID("rfd_"), Object: "refund", Reference: req.Reference, PaymentReference: au.Reference,
		AmountMinor: req.AmountMinor, Currency: req.Currency, CreatedAt: now, UpdatedAt: now}, callbackURL: req.CallbackURL}
	a.refunds[rf.ID], a.rfdRefs[rf.Reference] = rf, rf
	var ev *outgoing
	if s.refundFailNow() {
		rf.Status, rf.Failure = protocol.RefundFailed, &protocol.Failure{Code: "refund_declined", Message: "The provider declined the refund."}
		ev = s.refundEvent(protocol.EventRefundFailed, rf, now)
	} else {
		au.refunding += req.AmountMinor
		rf.Status, rf.SettledAt = protocol.RefundSucceeded, &now
		ev = s.refundEvent(protocol.EventRefundSucceeded, rf, now)
	}
	view := rf.Refund
	a.mu.Unlock()
	s.send(a, ev)
	return answer{status: http.StatusCreated, body: view, hang: s.hangNow()}
}

// CardAuthorizations counts the authorisations the gateway holds for an
// account (tests: one per terminal payment, never two).
func (s *Sim) CardAuthorizations(apiKey string) int {
	a := s.account(cardGatewayRail, apiKey)
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.auths)
}
