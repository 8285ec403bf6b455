package sim

import (
	"crypto/hmac"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
)

// payment is one payment at the provider.
type payment struct {
	protocol.Payment
	provider    string
	callbackURL string
	returnURL   string
	description string
	msisdn      string // where the SMS code went
	method      string // wallet_d direct method
	otp         string
	otpSentAt   time.Time
	pageToken   string
	pageStep    string // hpp, card, three_ds, method_picker; "" once done
	expiresAt   time.Time
	refunding   int64 // refunds not failed: what is no longer refundable
	hold        bool  // capture false: an approved card is held (authorized)
}

// Page steps of the provider's own pages.
const (
	stepHPP     = "hpp"
	stepCard    = "card"
	stepThreeDS = "three_ds"
	stepPicker  = "method_picker"
)

// walletDMethods are wallet_d's payment methods; the first four approve by
// push, the last two by SMS code.
var walletDMethods = []string{"telebirr", "mpesa", "cbebirr", "ebirr", "amole", "awashbirr"}

func walletDPush(m string) bool {
	return m == "telebirr" || m == "mpesa" || m == "cbebirr" || m == "ebirr"
}

// otpLength is the length of the codes the simulator sends.
const otpLength = 6

// railCurrencies are the currencies each rail takes.
func railCurrency(provider, currency string) bool {
	if provider == providers.WalletD {
		return currency == "ETB"
	}
	return currency == "DJF" || currency == "USD"
}

// initiate handles POST /{provider}/v1/payments.
func (s *Sim) initiate(r *http.Request, a *account, body []byte) answer {
	var req protocol.PaymentRequest
	if ans, ok := decode(body, &req); !ok {
		return ans
	}
	if a.provider == providers.WalletB {
		return errAnswer(http.StatusNotFound, "not_supported", "wallet_b takes payouts only", "")
	}
	if ans, ok := s.checkPayment(a.provider, &req); !ok {
		return ans
	}
	now := s.cfg.Now().UTC()
	p := &payment{Payment: protocol.Payment{ID: newID("pay_"), Object: "payment", Reference: req.Reference, Status: protocol.StatusPending,
		AmountMinor: req.AmountMinor, Currency: req.Currency, Mode: req.Mode, CreatedAt: now, UpdatedAt: now},
		provider: a.provider, callbackURL: req.CallbackURL, returnURL: req.ReturnURL, description: req.Description,
		method: req.Method, expiresAt: now.Add(s.cfg.PaymentTTL), hold: req.Capture != nil && !*req.Capture}
	customer := req.MSISDN
	if a.provider == providers.BankB && customer == "" {
		customer = req.Account
	}
	a.mu.Lock()
	if old := a.payRefs[req.Reference]; old != nil {
		a.mu.Unlock()
		return errAnswer(http.StatusConflict, "duplicate_reference", "a payment with this reference exists ("+old.ID+"); retry under its Idempotency-Key or ask its status", "reference")
	}
	a.payments[p.ID], a.payRefs[p.Reference] = p, p
	var ev *outgoing
	switch {
	case refused(customer):
		code, msg := "insufficient_funds", "The customer's wallet has insufficient funds."
		if a.provider == providers.BankA || a.provider == providers.BankB {
			code, msg = "account_not_found", "The bank has no account for this customer."
		}
		ev = s.fail(a, p, now, &protocol.Failure{Code: code, Message: msg})
	case p.Mode == protocol.ModeOTP || p.Mode == protocol.ModeDirect && !walletDPush(p.method):
		p.msisdn = customer
		p.otp, p.otpSentAt = s.sendSMS(customer, now)
		p.Action = &protocol.Action{Type: protocol.ActionOTP, OTPLength: otpLength}
	case p.Mode == protocol.ModePush || p.Mode == protocol.ModeDirect:
		p.Action = &protocol.Action{Type: protocol.ActionPush}
		s.schedulePush(a, p.ID)
	default: // hpp, card, redirect: the provider's own page
		p.pageToken = newID("")
		p.pageStep = map[string]string{protocol.ModeHPP: stepHPP, protocol.ModeCard: stepCard, protocol.ModeRedirect: stepPicker}[p.Mode]
		p.Action = &protocol.Action{Type: protocol.ActionRedirect,
			URL: s.base() + "/" + a.provider + "/pay/" + p.ID + "?t=" + url.QueryEscape(p.pageToken)}
		s.mu.Lock()
		s.pages[p.ID] = a
		s.mu.Unlock()
	}
	view := p.Payment
	a.mu.Unlock()
	s.send(a, ev)
	return answer{status: http.StatusCreated, body: view, hang: s.hangNow()}
}

// refused reports whether a customer number is one the simulator refuses:
// any number ending in 0000 (docs/providers.md, test values).
func refused(number string) bool { return strings.HasSuffix(number, "0000") }

// checkPayment validates a payment request against the rail's rules.
func (s *Sim) checkPayment(provider string, req *protocol.PaymentRequest) (answer, bool) {
	bad := func(code, msg, field string) (answer, bool) {
		return errAnswer(http.StatusBadRequest, code, msg, field), false
	}
	switch {
	case req.Reference == "" || len(req.Reference) > 255:
		return bad("parameter_invalid", "reference is required (at most 255 characters)", "reference")
	case req.AmountMinor <= 0:
		return bad("parameter_invalid", "amount_minor must be a positive integer", "amount_minor")
	case !railCurrency(provider, req.Currency):
		return bad("currency_not_supported", provider+" does not take "+req.Currency, "currency")
	case !httpURL(req.CallbackURL):
		return bad("parameter_invalid", "callback_url must be an http(s) URL", "callback_url")
	}
	modes := map[string][]string{
		providers.BankA:   {protocol.ModeOTP},
		providers.BankB:   {protocol.ModeOTP},
		providers.WalletA: {protocol.ModeHPP, protocol.ModeCard, protocol.ModePush},
		providers.WalletC: {protocol.ModePush, protocol.ModeOTP},
		providers.WalletD: {protocol.ModeRedirect, protocol.ModeDirect},
	}[provider]
	ok := false
	for _, m := range modes {
		ok = ok || m == req.Mode
	}
	if !ok {
		return bad("mode_not_supported", fmt.Sprintf("%s takes mode %s", provider, strings.Join(modes, " or ")), "mode")
	}
	if req.Capture != nil && req.Mode != protocol.ModeCard {
		return bad("parameter_invalid", "capture is for mode card only", "capture")
	}
	switch req.Mode {
	case protocol.ModeHPP, protocol.ModeCard, protocol.ModeRedirect:
		if !httpURL(req.ReturnURL) {
			return bad("parameter_invalid", "return_url must be an http(s) URL for a page payment", "return_url")
		}
	}
	switch {
	case provider == providers.BankA:
		// bank_a wants the bare local number: no country prefix.
		if !digitsOnly(req.MSISDN) || len(req.MSISDN) < 6 || len(req.MSISDN) > 12 {
			return bad("invalid_msisdn", "msisdn must be the bare local number (6 to 12 digits, no country prefix)", "msisdn")
		}
	case provider == providers.BankB:
		if req.Account == "" || len(req.Account) > 64 {
			return bad("parameter_invalid", "account (the customer's wallet or account identifier) is required", "account")
		}
		if req.MSISDN != "" && !e164(req.MSISDN) {
			return bad("invalid_msisdn", "msisdn must be E.164 (+ and 7 to 15 digits)", "msisdn")
		}
	case req.Mode == protocol.ModePush || req.Mode == protocol.ModeOTP || req.Mode == protocol.ModeDirect:
		if !e164(req.MSISDN) {
			return bad("invalid_msisdn", "msisdn must be E.164 (+ and 7 to 15 digits)", "msisdn")
		}
	}
	if req.Mode == protocol.ModeDirect {
		known := false
		for _, m := range walletDMethods {
			known = known || m == req.Method
		}
		if !known {
			return bad("parameter_invalid", "method must be one of "+strings.Join(walletDMethods, ", "), "method")
		}
	}
	return answer{}, true
}

// schedulePush approves a push payment after PushDelay, as a customer
// tapping "approve" in the wallet app.
func (s *Sim) schedulePush(a *account, id string) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTimer(s.cfg.PushDelay)
		defer t.Stop()
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		a.mu.Lock()
		p := a.payments[id]
		var ev *outgoing
		if p != nil && p.Status == protocol.StatusPending {
			ev = s.succeed(a, p, s.cfg.Now().UTC(), &protocol.MethodDetails{Type: "wallet", Method: p.method})
		}
		a.mu.Unlock()
		s.send(a, ev)
	}()
}

// succeed captures p (a.mu held) and returns its callback; a payment
// initiated with capture false is held instead (authorized).
func (s *Sim) succeed(a *account, p *payment, now time.Time, details *protocol.MethodDetails) *outgoing {
	p.MethodDetails, p.pageStep, p.otp, p.Action, p.UpdatedAt = details, "", "", nil, now
	if p.hold {
		p.Status = protocol.StatusAuthorized
		return s.event(protocol.EventPaymentAuthorized, p, nil, now)
	}
	p.Status, p.CapturedMinor, p.SettledAt = protocol.StatusSucceeded, p.AmountMinor, &now
	return s.event(protocol.EventPaymentSucceeded, p, nil, now)
}

// capturePayment handles POST /{provider}/v1/payments/{id}/capture: an
// authorized payment is captured for the amount asked (at most the
// authorised amount) and succeeds; the rest is released.
func (s *Sim) capturePayment(r *http.Request, a *account, body []byte) answer {
	var req protocol.PaymentCaptureRequest
	if ans, ok := decode(body, &req); !ok {
		return ans
	}
	now := s.cfg.Now().UTC()
	a.mu.Lock()
	p, ans, ok := a.heldPayment(r.PathValue("id"), "captured")
	switch {
	case !ok:
		a.mu.Unlock()
		return ans
	case req.AmountMinor <= 0 || req.AmountMinor > p.AmountMinor:
		a.mu.Unlock()
		return errAnswer(http.StatusBadRequest, "amount_too_large", "amount_minor must be positive and at most the authorised amount", "amount_minor")
	}
	p.Status, p.CapturedMinor, p.UpdatedAt, p.SettledAt = protocol.StatusSucceeded, req.AmountMinor, now, &now
	ev := s.event(protocol.EventPaymentSucceeded, p, nil, now)
	view := p.Payment
	a.mu.Unlock()
	s.send(a, ev)
	return answer{status: http.StatusOK, body: view, hang: s.hangNow()}
}

// voidPayment handles POST /{provider}/v1/payments/{id}/void: an authorized
// payment is released and fails with authorization_voided.
func (s *Sim) voidPayment(r *http.Request, a *account, body []byte) answer {
	var req protocol.PaymentVoidRequest
	if ans, ok := decode(body, &req); !ok {
		return ans
	}
	now := s.cfg.Now().UTC()
	a.mu.Lock()
	p, ans, ok := a.heldPayment(r.PathValue("id"), "voided")
	if !ok {
		a.mu.Unlock()
		return ans
	}
	ev := s.fail(a, p, now, &protocol.Failure{Code: protocol.FailureVoided, Message: "The authorisation was released."})
	view := p.Payment
	a.mu.Unlock()
	s.send(a, ev)
	return answer{status: http.StatusOK, body: view, hang: s.hangNow()}
}

// heldPayment is the authorized payment id (a.mu held) that a capture or a
// void (done: "captured", "voided") changes, or the answer refusing it.
func (a *account) heldPayment(id, done string) (*payment, answer, bool) {
	p := a.lookupPayment(id)
	switch {
	case p == nil:
		return nil, errAnswer(http.StatusNotFound, "payment_not_found", "no such payment", ""), false
	case p.Status != protocol.StatusAuthorized:
		return nil, errAnswer(http.StatusConflict, "invalid_state", "only an authorized payment can be "+done+"; this one is "+p.Status, ""), false
	}
	return p, answer{}, true
}

// fail refuses p (a.mu held) and returns its callback.
func (s *Sim) fail(a *account, p *payment, now time.Time, f *protocol.Failure) *outgoing {
	p.Status, p.Failure, p.Action, p.UpdatedAt, p.pageStep, p.otp = protocol.StatusFailed, f, nil, now, "", ""
	return s.event(protocol.EventPaymentFailed, p, nil, now)
}

// expire fails a payment its customer left waiting past PaymentTTL (a.mu held).
func (s *Sim) expire(a *account, p *payment, now time.Time) *outgoing {
	if p.Status != protocol.StatusPending || now.Before(p.expiresAt) {
		return nil
	}
	return s.fail(a, p, now, &protocol.Failure{Code: "expired", Message: "The customer did not complete the payment in time."})
}

// confirmOTP handles POST /{provider}/v1/payments/{id}/otp: one attempt.
func (s *Sim) confirmOTP(r *http.Request, a *account, body []byte) answer {
	var req protocol.OTPRequest
	if ans, ok := decode(body, &req); !ok {
		return ans
	}
	if req.OTP == "" || len(req.OTP) > 32 {
		return errAnswer(http.StatusBadRequest, "parameter_invalid", "otp is required (at most 32 characters)", "otp")
	}
	now := s.cfg.Now().UTC()
	a.mu.Lock()
	p := a.lookupPayment(r.PathValue("id"))
	if p == nil {
		a.mu.Unlock()
		return errAnswer(http.StatusNotFound, "payment_not_found", "no such payment", "")
	}
	ev := s.expire(a, p, now)
	if ev == nil {
		if p.Status != protocol.StatusPending || p.Action == nil || p.Action.Type != protocol.ActionOTP {
			view := p.Payment
			a.mu.Unlock()
			return errAnswer(http.StatusConflict, "invalid_state", "payment "+view.ID+" is "+view.Status+" and does not wait for a code", "")
		}
		switch {
		case now.Sub(p.otpSentAt) > s.cfg.OTPTTL:
			ev = s.fail(a, p, now, &protocol.Failure{Code: "otp_expired", Message: "The code has expired."})
		case hmac.Equal([]byte(req.OTP), []byte(p.otp)):
			ev = s.succeed(a, p, now, &protocol.MethodDetails{Type: "wallet", Method: p.method})
		default:
			// One attempt: a wrong code ends the payment.
			ev = s.fail(a, p, now, &protocol.Failure{Code: "otp_invalid", Message: "otp invalid"})
		}
	}
	view := p.Payment
	a.mu.Unlock()
	s.send(a, ev)
	return answer{status: http.StatusOK, body: view}
}

func (a *account) lookupPayment(id string) *payment {
	if p := a.payments[id]; p != nil {
		return p
	}
	return a.payRefs[id]
}

// paymentByID handles GET /{provider}/v1/payments/{id} (the provider's id or
// the merchant's reference).
func (s *Sim) paymentByID(r *http.Request, a *account, _ []byte) answer {
	return s.paymentStatus(a, r.PathValue("id"))
}

// paymentByReference handles GET /{provider}/v1/payments?reference=...
func (s *Sim) paymentByReference(r *http.Request, a *account, _ []byte) answer {
	ref := r.URL.Query().Get("reference")
	if ref == "" {
		return errAnswer(http.StatusBadRequest, "parameter_missing", "reference is required", "reference")
	}
	a.mu.Lock()
	p := a.payRefs[ref]
	a.mu.Unlock()
	if p == nil {
		return errAnswer(http.StatusNotFound, "payment_not_found", "no payment with this reference", "")
	}
	return s.paymentStatus(a, p.ID)
}

func (s *Sim) paymentStatus(a *account, id string) answer {
	a.mu.Lock()
	p := a.lookupPayment(id)
	if p == nil {
		a.mu.Unlock()
		return errAnswer(http.StatusNotFound, "payment_not_found", "no such payment", "")
	}
	ev := s.expire(a, p, s.cfg.Now().UTC())
	view := p.Payment
	a.mu.Unlock()
	s.send(a, ev)
	return answer{status: http.StatusOK, body: view}
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func e164(s string) bool {
	d, ok := strings.CutPrefix(s, "+")
	return ok && digitsOnly(d) && len(d) >= 7 && len(d) <= 15
}
