package live

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
)

// paymentAdapter is one provider's live payment side.
type paymentAdapter struct {
	c        *Connections
	provider string
}

// PaymentFactory returns the registry's factory of the live payment
// adapter of provider (providers.Registry.RegisterLivePayments). It refuses
// at once — before the caller records anything — with 503
// provider_unavailable when the merchant has not connected the provider or
// its breaker is open.
func (c *Connections) PaymentFactory(provider string) providers.LivePaymentFactory {
	return func(ctx context.Context, rd providers.Reader, merchantID string) (providers.PaymentAdapter, error) {
		if _, err := c.ready(ctx, rd, merchantID, provider); err != nil {
			return nil, err
		}
		return &paymentAdapter{c: c, provider: provider}, nil
	}
}

// Remote: every call leaves the process, so payd records the intent (or
// claims it) before calling.
func (a *paymentAdapter) Remote() bool { return true }

// CheckPayment refuses, before anything is recorded, a payment this rail
// cannot take in live mode (wallet_d direct without the customer's number).
func (a *paymentAdapter) CheckPayment(p providers.Payment) error {
	if a.provider == providers.WalletD && p.Flow != providers.FlowMethodPicker && p.MSISDN == "" {
		return errs.Missing("customer_msisdn")
	}
	return nil
}

// mode is the protocol's mode of a payment's flow.
func (a *paymentAdapter) mode(p providers.Payment) string {
	switch p.Flow {
	case providers.FlowHostedPage:
		return protocol.ModeHPP
	case providers.FlowCardPage:
		return protocol.ModeCard
	case providers.FlowMethodPicker:
		return protocol.ModeRedirect
	case providers.FlowOTP:
		if a.provider == providers.WalletD {
			return protocol.ModeDirect
		}
		return protocol.ModeOTP
	}
	if a.provider == providers.WalletD {
		return protocol.ModeDirect
	}
	return protocol.ModePush
}

// Initiate starts the payment at the provider (POST /v1/payments).
func (a *paymentAdapter) Initiate(ctx context.Context, p providers.Payment) (providers.Result, error) {
	cl, err := a.c.client(ctx, p.MerchantID, a.provider)
	if err != nil {
		return providers.Result{}, err
	}
	req := protocol.PaymentRequest{Reference: p.ID, AmountMinor: p.AmountMinor, Currency: p.Currency, Mode: a.mode(p),
		Description: p.Description, CallbackURL: a.c.callbackURL(p.MerchantID, a.provider)}
	switch a.provider {
	case providers.BankB:
		req.Account = p.MSISDN // the wallet/account identifier is the customer's number
	case providers.WalletD:
		req.MSISDN = p.MSISDN
		if req.Mode == protocol.ModeDirect {
			req.Method = p.Method
		}
	default:
		req.MSISDN = p.MSISDN // bank_a: already the bare local number
	}
	switch req.Mode {
	case protocol.ModeHPP, protocol.ModeCard, protocol.ModeRedirect:
		req.MSISDN = ""
		req.ReturnURL = withIntent(p.ReturnURL, p.ID)
	}
	if req.Mode == protocol.ModeCard && p.ManualCapture {
		hold := false
		req.Capture = &hold // the approval is held until payd captures or voids it
	}
	resp, err := cl.do(ctx, request{op: "initiate", method: http.MethodPost, path: "/v1/payments", idemKey: p.ID + ":initiate", body: req})
	return a.result(resp, err)
}

// ConfirmOTP passes the customer's code (POST /v1/payments/{id}/otp). The
// key is the intent's own: a repeat after a lost answer replays the
// provider's first answer instead of spending the single attempt again.
func (a *paymentAdapter) ConfirmOTP(ctx context.Context, p providers.Payment, otp string) (providers.Result, error) {
	cl, err := a.c.client(ctx, p.MerchantID, a.provider)
	if err != nil {
		return providers.Result{}, err
	}
	resp, err := cl.do(ctx, request{op: "otp", method: http.MethodPost, path: "/v1/payments/" + url.PathEscape(a.ref(p)) + "/otp",
		idemKey: p.ID + ":otp", body: protocol.OTPRequest{OTP: otp}})
	if err == nil && resp.status == http.StatusConflict && resp.errorBody().Code == "invalid_state" {
		// The provider has settled it already (a callback is on its way):
		// ask where it stands.
		return a.Status(ctx, p)
	}
	return a.result(resp, err)
}

// CompletePage: live providers host their own pages.
func (a *paymentAdapter) CompletePage(context.Context, providers.Payment, providers.PageSubmission) (providers.Result, error) {
	return providers.Result{}, providers.ErrUnsupported
}

// Status asks where the payment stands (GET /v1/payments/{id}, or by
// reference when payd never got the provider's id). A payment the provider
// has no record of was never taken: it is refused with provider_error
// (reconciliation asks only after the initiate call's timeout has passed).
func (a *paymentAdapter) Status(ctx context.Context, p providers.Payment) (providers.Result, error) {
	cl, err := a.c.client(ctx, p.MerchantID, a.provider)
	if err != nil {
		return providers.Result{}, err
	}
	path := "/v1/payments?reference=" + url.QueryEscape(p.ID)
	if p.ProviderRef != "" {
		path = "/v1/payments/" + url.PathEscape(p.ProviderRef)
	}
	resp, err := cl.do(ctx, request{op: "status", method: http.MethodGet, path: path})
	if err == nil && resp.status == http.StatusNotFound {
		return providers.Result{Outcome: providers.Failed, NotFound: true, Failure: &providers.Failure{Code: "provider_error",
			Message: "The provider has no record of this payment: it was never taken."}}, nil
	}
	return a.result(resp, err)
}

func (a *paymentAdapter) ref(p providers.Payment) string {
	if p.ProviderRef != "" {
		return p.ProviderRef
	}
	return p.ID
}

// result maps a provider's answer to payd's.
func (a *paymentAdapter) result(resp response, err error) (providers.Result, error) {
	if errors.Is(err, errNoAnswer) {
		return providers.Result{}, providers.ErrNoAnswer
	}
	if err != nil {
		return providers.Result{}, err
	}
	if resp.status >= 400 {
		e := resp.errorBody()
		switch {
		case resp.status == http.StatusConflict:
			// In use (still, after the client's waits), a duplicate
			// reference, a state the provider moved on from: the outcome
			// is not known from this answer. The intent stays processing
			// until the provider's callback or reconciliation settles it,
			// as after a call that got no answer in time.
			return providers.Result{}, providers.ErrNoAnswer
		case e.Code == "":
			e.Code = "provider_declined"
		}
		msg := e.Message
		if msg == "" {
			msg = "The provider refused the payment."
		}
		return providers.Result{Outcome: providers.Failed, Failure: &providers.Failure{Code: clip(e.Code), Message: clip(msg)}}, nil
	}
	var pp protocol.Payment
	if err := resp.decode(&pp); err != nil {
		return providers.Result{}, providerError(a.provider, "the provider's answer could not be read", nil)
	}
	return PaymentResult(pp)
}

// PaymentResult maps a payment as the provider reports it (in an answer or
// a callback) to payd's Result. A pending payment without an action says
// nothing new and is an error (the caller leaves the intent as it is).
func PaymentResult(pp protocol.Payment) (providers.Result, error) {
	res := providers.Result{ProviderRef: pp.ID, MethodDetails: methodDetails(pp.MethodDetails)}
	switch pp.Status {
	case protocol.StatusSucceeded:
		res.Outcome, res.CapturedMinor = providers.Succeeded, pp.CapturedMinor
	case protocol.StatusAuthorized:
		// A held card payment (capture false, sent only for capture_method
		// manual): payd records the authorisation of the whole amount
		// (requires_capture) and captures it later.
		res.Outcome, res.CapturedMinor = providers.Succeeded, pp.AmountMinor
	case protocol.StatusFailed:
		res.Outcome = providers.Failed
		f := pp.Failure
		if f == nil {
			f = &protocol.Failure{Code: "provider_declined", Message: "The provider declined the payment."}
		}
		res.Failure = &providers.Failure{Code: clip(f.Code), Message: clip(f.Message), DeclineCode: clip(f.DeclineCode)}
	case protocol.StatusPending:
		if pp.Action == nil {
			return providers.Result{}, errPendingWithoutAction
		}
		res.Outcome = providers.Pending
		switch pp.Action.Type {
		case protocol.ActionOTP:
			n := pp.Action.OTPLength
			if n <= 0 {
				n = 6
			}
			res.NextAction = &providers.NextAction{Type: providers.ActionCollectOTP, OTPLength: n}
		case protocol.ActionRedirect:
			u, err := url.Parse(pp.Action.URL)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return providers.Result{}, errBadAction
			}
			res.NextAction = &providers.NextAction{Type: providers.ActionRedirect, RedirectURL: pp.Action.URL}
		case protocol.ActionPush:
			res.NextAction = &providers.NextAction{Type: providers.ActionPushApproval}
		default:
			return providers.Result{}, errBadAction
		}
	default:
		return providers.Result{}, errBadAction
	}
	return res, nil
}

var (
	errPendingWithoutAction = &errs.Error{Kind: errs.KindProvider, Code: "provider_error",
		Message: "the provider reports the payment pending with nothing for the customer to do yet"}
	errBadAction = &errs.Error{Kind: errs.KindProvider, Code: "provider_error",
		Message: "the provider's answer has a status or action payd does not know"}
)

// methodDetails is the payment_method_details payd records: a card's brand
// and last four digits, or wallet_d's method (the sandbox's shapes).
func methodDetails(d *protocol.MethodDetails) json.RawMessage {
	if d == nil {
		return nil
	}
	var v any
	switch {
	case d.Type == "card" && len(d.Last4) == 4:
		v = map[string]any{"type": "card", "card": map[string]string{"brand": clip(d.Brand), "last4": d.Last4}}
	case d.Method != "":
		v = map[string]any{"type": "wallet_d", "wallet_d": map[string]string{"method": clip(d.Method)}}
	default:
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// withIntent adds payment_intent=<id> to the merchant's return_url, so the
// provider's page sends the customer back to it as the sandbox does.
func withIntent(returnURL, id string) string {
	u, err := url.Parse(returnURL)
	if err != nil || returnURL == "" {
		return returnURL
	}
	q := u.Query()
	q.Set("payment_intent", id)
	u.RawQuery = q.Encode()
	return u.String()
}

// clip bounds what a provider says before payd stores or shows it.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	s = s[:max]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
