package sandbox

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"net/url"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/providers"
)

// PagePath is where the hosted pages are served; the intent id follows.
const PagePath = "/sandbox/pay/"

// Initiate implements providers.PaymentAdapter: a scenario that decides the
// payment outright answers at once; otherwise the flow's next action.
func (s *Sandbox) Initiate(ctx context.Context, p providers.Payment) (providers.Result, error) {
	res, err := s.initiate(ctx, p)
	res.FailFirstWebhook = p.Scenario == providers.SandboxWebhookFail.Name
	return res, err
}

func (s *Sandbox) initiate(ctx context.Context, p providers.Payment) (providers.Result, error) {
	if res, ok, err := s.decisive(ctx, p); ok || err != nil {
		return res, err
	}
	switch p.Scenario {
	case providers.OTPExpired.Name:
		return collectOTP(), nil
	case providers.Card3DSRequired.Name:
		return s.hostedPage(p, providers.ActionRedirectToURL, providers.StepThreeDS), nil
	}
	switch p.Flow {
	case providers.FlowOTP:
		return collectOTP(), nil
	case providers.FlowHostedPage:
		return s.hostedPage(p, providers.ActionRedirect, providers.StepWalletAHPP), nil
	case providers.FlowCardPage:
		return s.hostedPage(p, providers.ActionRedirect, providers.StepCard), nil
	case providers.FlowMethodPicker:
		return s.hostedPage(p, providers.ActionRedirect, providers.StepMethodPicker), nil
	case providers.FlowPush:
		return providers.Result{Outcome: providers.Pending, NextAction: &providers.NextAction{Type: providers.ActionPushApproval},
			PollAfter: s.cfg.PushDelay}, nil
	}
	return providers.Result{}, providers.ErrUnsupported
}

// ConfirmOTP implements providers.PaymentAdapter: 123456 succeeds, anything
// else is otp_invalid; under otp_expired every code fails.
func (s *Sandbox) ConfirmOTP(ctx context.Context, p providers.Payment, otp string) (providers.Result, error) {
	res, err := s.confirmOTP(ctx, p, otp)
	res.FailFirstWebhook = p.Scenario == providers.SandboxWebhookFail.Name
	return res, err
}

func (s *Sandbox) confirmOTP(ctx context.Context, p providers.Payment, otp string) (providers.Result, error) {
	if res, ok, err := s.decisive(ctx, p); ok || err != nil {
		return res, err
	}
	if p.Scenario == providers.OTPExpired.Name {
		return failed("otp_expired", "The code has expired; create a new payment intent."), nil
	}
	if subtle.ConstantTimeCompare([]byte(otp), []byte(OTP)) != 1 {
		return failed("otp_invalid", "otp invalid"), nil
	}
	return s.captured(p), nil
}

// CompletePage implements providers.PaymentAdapter for the sandbox's own
// hosted pages. The page has already checked the form's shape.
func (s *Sandbox) CompletePage(ctx context.Context, p providers.Payment, sub providers.PageSubmission) (providers.Result, error) {
	res, err := s.completePage(ctx, p, sub)
	res.FailFirstWebhook = p.Scenario == providers.SandboxWebhookFail.Name
	return res, err
}

func (s *Sandbox) completePage(ctx context.Context, p providers.Payment, sub providers.PageSubmission) (providers.Result, error) {
	var details json.RawMessage
	if sub.Step == providers.StepCard {
		details = cardDetails(sub.Card.Number)
	}
	if res, ok, err := s.decisive(ctx, p); ok || err != nil {
		if res.MethodDetails == nil {
			res.MethodDetails = details
		}
		return res, err
	}
	if p.Scenario == providers.OTPExpired.Name {
		res := failed("otp_expired", "The payment request expired before the customer completed it.")
		res.MethodDetails = details
		return res, nil
	}
	switch sub.Step {
	case providers.StepWalletAHPP:
		return s.captured(p), nil
	case providers.StepCard:
		switch {
		case sub.Card.Number == CardDeclined:
			res := declined()
			res.MethodDetails = details
			return res, nil
		case sub.Card.Number == Card3DS || p.Scenario == providers.Card3DSRequired.Name:
			return providers.Result{Outcome: providers.Pending, PageStep: providers.StepThreeDS, MethodDetails: details}, nil
		}
		res := s.captured(p)
		res.MethodDetails = details
		if sub.Card.Number == CardDisputed {
			res.DisputeAfter = max(s.cfg.PushDelay, time.Millisecond)
		}
		return res, nil
	case providers.StepThreeDS:
		if sub.Outcome != "complete" {
			return failed("authentication_failed", "3-D Secure authentication failed."), nil
		}
		return s.captured(p), nil
	case providers.StepMethodPicker:
		res := s.captured(p)
		res.MethodDetails, _ = json.Marshal(map[string]any{"type": "wallet_d", "wallet_d": map[string]string{"method": sub.Method}})
		return res, nil
	}
	return providers.Result{}, providers.ErrUnsupported
}

// Status implements providers.PaymentAdapter: a push approval arrives
// PushDelay after creation, unless the scenario in force decides it first.
func (s *Sandbox) Status(ctx context.Context, p providers.Payment) (providers.Result, error) {
	res, err := s.status(ctx, p)
	res.FailFirstWebhook = p.Scenario == providers.SandboxWebhookFail.Name
	return res, err
}

func (s *Sandbox) status(ctx context.Context, p providers.Payment) (providers.Result, error) {
	if p.Flow != providers.FlowPush {
		return providers.Result{Outcome: providers.Pending}, nil
	}
	// A scenario that decides the approval (set by an override: at create
	// it would have decided the create) answers at once; the customer's
	// approval itself arrives PushDelay after creation.
	if res, ok, err := s.decisive(ctx, p); ok || err != nil {
		return res, err
	}
	if p.Scenario == providers.OTPExpired.Name {
		return failed("otp_expired", "The approval request expired before the customer answered."), nil
	}
	if left := p.CreatedAt.Add(s.cfg.PushDelay).Sub(s.cfg.Now()); left > 0 {
		return providers.Result{Outcome: providers.Pending, PollAfter: left}, nil
	}
	return s.captured(p), nil
}

// decisive answers for the scenarios that decide a step by themselves,
// whatever the customer does: success, the refusals, network_timeout and
// kyc_blocked.
func (s *Sandbox) decisive(ctx context.Context, p providers.Payment) (providers.Result, bool, error) {
	switch p.Scenario {
	case providers.Success.Name:
		return providers.Result{Outcome: providers.Succeeded, CapturedMinor: p.AmountMinor}, true, nil
	case providers.InsufficientFunds.Name:
		return failed("insufficient_funds", "The customer's wallet balance is too low for this payment."), true, nil
	case providers.DuplicateMSISDN.Name:
		return failed("wallet_locked", "The customer's wallet is locked: the number is registered to more than one wallet."), true, nil
	case providers.AccountClosed.Name:
		return failed("account_not_found", "The bank has no open account for this customer."), true, nil
	case providers.VelocityLimit.Name:
		return failed("velocity_limit_exceeded", "The customer's daily limit is exceeded."), true, nil
	case providers.CardDeclined.Name:
		return declined(), true, nil
	case providers.KYCBlocked.Name:
		return providers.Result{Outcome: providers.Review}, true, nil
	case providers.NetworkTimeout.Name:
		if err := wait(ctx, p, s.cfg.TimeoutDelay); err != nil {
			return providers.Result{}, true, err
		}
		return failed("provider_timeout", "The provider did not answer in time."), true, nil
	}
	return providers.Result{}, false, nil
}

// captured is a success capturing the whole amount, or 80% of it (rounded
// down) under partial_capture.
func (s *Sandbox) captured(p providers.Payment) providers.Result {
	amt := p.AmountMinor
	if p.Scenario == providers.PartialCapture.Name {
		amt = money.Percent(p.AmountMinor, 80)
	}
	return providers.Result{Outcome: providers.Succeeded, CapturedMinor: amt}
}

// hostedPage starts a hosted-page flow: a fresh page token in the URL.
func (s *Sandbox) hostedPage(p providers.Payment, action, step string) providers.Result {
	token := ids.Secret("", 32)
	u := s.PublicURL() + PagePath + url.PathEscape(p.ID) + "?t=" + url.QueryEscape(token)
	return providers.Result{Outcome: providers.Pending, NextAction: &providers.NextAction{Type: action, RedirectURL: u},
		PageToken: token, PageStep: step}
}

func collectOTP() providers.Result {
	return providers.Result{Outcome: providers.Pending, NextAction: &providers.NextAction{Type: providers.ActionCollectOTP, OTPLength: OTPLength}}
}

func failed(code, msg string) providers.Result {
	return providers.Result{Outcome: providers.Failed, Failure: &providers.Failure{Code: code, Message: msg}}
}

func declined() providers.Result {
	return providers.Result{Outcome: providers.Failed, Failure: &providers.Failure{Code: "card_declined", Message: "The card was declined.", DeclineCode: "generic_decline"}}
}
