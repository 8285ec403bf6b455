package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Flow is how a payment is authorised by the customer, chosen by payd from
// the provider and the intent's metadata.
type Flow string

// The payment flows.
const (
	FlowOTP          Flow = "otp"           // an SMS code the merchant collects, then confirm
	FlowHostedPage   Flow = "hosted_page"   // wallet_a hpp: phone and PIN on the provider's page
	FlowCardPage     Flow = "card_page"     // wallet_a card: the card on the provider's page, 3-D Secure there
	FlowMethodPicker Flow = "method_picker" // wallet_d: the customer picks a method on the provider's page
	FlowPush         Flow = "push"          // the customer approves in the wallet app
)

// Page steps of the sandbox's hosted pages.
const (
	StepWalletAHPP   = "wallet_a_hpp"
	StepCard         = "card"
	StepThreeDS      = "three_ds"
	StepMethodPicker = "method_picker"
)

// NextAction is what the customer (or the merchant for them) must do next,
// as the adapter reports it: collect_otp, redirect, push_approval, or
// redirect_to_url for a 3-D Secure challenge.
type NextAction struct {
	Type        string
	OTPLength   int
	RedirectURL string
}

// The next action types.
const (
	ActionCollectOTP    = "collect_otp"
	ActionRedirect      = "redirect"
	ActionPushApproval  = "push_approval"
	ActionRedirectToURL = "redirect_to_url"
)

// Payment is what an adapter is told about one payment intent. Adapters get
// a copy on every call and keep no state of their own between calls: what
// must survive (the provider's reference, the hosted page step, the sandbox
// scenario) is stored on the intent by payd and handed back.
type Payment struct {
	ID          string // pi_...
	MerchantID  string
	Livemode    bool
	Provider    string // bank_a, wallet_a, ...
	Rail        string // the provider, or CardGatewayCNP for wallet_a card payments
	Flow        Flow
	AmountMinor int64
	Currency    string
	// MSISDN is the customer's number as the provider wants it: bank_a gets
	// the bare local number (payd strips +253).
	MSISDN string
	// Method is wallet_d's direct payment method (telebirr, amole, ...).
	Method      string
	Description string
	ReturnURL   string
	// Scenario is the sandbox scenario in force ("" for none). Live
	// adapters ignore it.
	Scenario    string
	ProviderRef string
	PageStep    string
	CreatedAt   time.Time
	// ManualCapture: capture_method manual. A card payment's approval is
	// then held (an authorisation) until payd captures or releases it.
	ManualCapture bool
	// BeforeDelay, when set, runs before the adapter spends time outside
	// the database on the payment (the sandbox's simulated timeout): the
	// request's claim reads its key (store.Claim's LookUp), so a retry of a
	// request already answered answers at once. An error from it is
	// returned as it is.
	BeforeDelay func(context.Context) error
}

// Outcome is where a provider call left the payment.
type Outcome int

// The outcomes of a provider call.
const (
	// Pending: the customer must act (NextAction), or the answer comes later
	// (query Status again after PollAfter).
	Pending Outcome = iota + 1
	// Succeeded: the money is captured (CapturedMinor of it).
	Succeeded
	// Failed: the provider refused; Failure says why. Definitive.
	Failed
	// Review: the provider holds the payment for a compliance review.
	Review
)

// Result is a provider's answer.
type Result struct {
	Outcome Outcome
	// NextAction, when Pending and the customer must act.
	NextAction *NextAction
	// PageToken is the secret in a payd-hosted page's URL (sandbox pages);
	// payd stores only its hash and checks it on every page request.
	PageToken string
	// PageStep is the hosted page's step after this call (StepCard, ...).
	PageStep string
	// PollAfter, when Pending without a customer action to wait for (push
	// approvals): ask Status again after this long.
	PollAfter time.Duration
	// CapturedMinor is what was captured, when Succeeded (it may be less than
	// the amount: sandbox partial_capture).
	CapturedMinor int64
	// Failure, when Failed.
	Failure *Failure
	// NotFound, with Failed, says the failure is the provider having no
	// record of the payment (a status query): it was never taken, unless a
	// request that is still to resume sends it yet.
	NotFound bool
	// MethodDetails is the payment_method_details to record (card brand and
	// last4, a wallet_d method); never a full card number.
	MethodDetails json.RawMessage
	// ProviderRef is the provider's own reference, when it gives one.
	ProviderRef string
	// DisputeAfter, with Succeeded, asks payd to dispute the payment this
	// long after it succeeds (the sandbox's disputed test card).
	DisputeAfter time.Duration
	// FailFirstWebhook asks payd to record every event about this payment as
	// failed on its first delivery attempt (sandbox_webhook_fail).
	FailFirstWebhook bool
}

// PageSubmission is what the customer typed into a hosted page. It lives in
// memory only: PIN, card number and CVC are never stored or logged, and its
// String and LogValue say nothing about them.
type PageSubmission struct {
	Step    string // the page step the form belongs to
	Phone   string // wallet_a hpp
	PIN     string // wallet_a hpp, 4 to 6 digits
	Card    Card   // card page
	Outcome string // 3-D Secure page: complete or fail
	Method  string // wallet_d picker
}

// Card is a card typed on the hosted card page.
type Card struct {
	Number   string
	ExpMonth int
	ExpYear  int
	CVC      string
}

// String hides the secrets of a submission.
func (s PageSubmission) String() string {
	return fmt.Sprintf("PageSubmission{Step:%s Outcome:%s Method:%s}", s.Step, s.Outcome, s.Method)
}

// GoString hides the secrets of a submission from %#v.
func (s PageSubmission) GoString() string { return s.String() }

// String hides a card's number and CVC.
func (c Card) String() string { return "Card{redacted}" }

// GoString hides a card's number and CVC from %#v.
func (c Card) GoString() string { return c.String() }

// PaymentAdapter is one provider's payment side. payd's state machine calls
// only these methods; the sandbox implements them in memory, a live adapter
// over HTTP. A definitive refusal is a Result with Outcome Failed; a
// returned error means the outcome is unknown (ErrNoAnswer for a provider
// that did not answer in time): the intent stays processing and is settled
// later through Status.
type PaymentAdapter interface {
	// Initiate asks the provider to start collecting p.
	Initiate(ctx context.Context, p Payment) (Result, error)
	// ConfirmOTP passes the code the customer received by SMS.
	ConfirmOTP(ctx context.Context, p Payment, otp string) (Result, error)
	// CompletePage reports what the customer submitted on a hosted page
	// (the sandbox's own pages; live providers host theirs).
	CompletePage(ctx context.Context, p Payment, s PageSubmission) (Result, error)
	// Status asks where p stands (push approvals, reconciliation).
	Status(ctx context.Context, p Payment) (Result, error)
	// Remote reports whether calls leave the process. payd then records the
	// intent (or claims it, status processing) before calling, so a crash
	// mid-call leaves a row that reconciliation settles; an in-process
	// adapter without side effects is called first and its answer written in
	// one transaction.
	Remote() bool
}

// ScenarioSelector is implemented by adapters that simulate named outcomes
// (the sandbox). Live adapters do not implement it, so in live mode the
// scenario header and magic numbers are ignored.
type ScenarioSelector interface {
	// SelectScenario chooses a new payment's scenario from the
	// X-Service-Scenario header (which wins) and the customer's number
	// exactly as the client sent it. An unknown name or one the rail does
	// not offer is a 400 invalid_scenario naming the field it came from.
	SelectScenario(rail, header, msisdn string) (string, error)
	// CheckScenario validates a scenario for an override on rail.
	CheckScenario(rail, name string) error
}

// ErrNoAnswer means the provider did not answer in time: the outcome is
// unknown, the intent stays processing.
var ErrNoAnswer = errors.New("providers: the provider did not answer in time")

// ErrUnsupported is returned by an adapter for a call its provider does not
// offer (e.g. CompletePage on a live adapter whose provider hosts its own
// page).
var ErrUnsupported = errors.New("providers: not supported by this provider")

// HostedPage is what a payd-hosted provider page (the sandbox's) shows, and
// where it leads once submitted.
type HostedPage struct {
	IntentID     string
	MerchantName string // who the customer is paying, shown on the page
	Provider     string
	Status       string
	Step         string // the form to show; "" once the intent no longer waits for the page
	AmountMinor  int64
	Currency     string
	Description  string
	Method       string   // wallet_d: the method to preselect
	Methods      []string // wallet_d: the methods offered
	ReturnURL    string   // return_url?payment_intent=<id>
	Error        string   // why the payment ended, when it was refused; on a card page, why the last card was declined
	// AttemptsLeft is, on a card page after a decline, how many more cards
	// the customer may try.
	AttemptsLeft int
}
