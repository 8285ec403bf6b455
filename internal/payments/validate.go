package payments

import (
	"errors"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/providers"
)

// CreateParams is the body of POST /v1/payment_intents, plus the sandbox
// scenario header.
type CreateParams struct {
	Amount         *int64            `json:"amount"`       // major units
	AmountMinor    *int64            `json:"amount_minor"` // minor units; exactly one of the two
	Currency       string            `json:"currency"`
	Provider       string            `json:"provider"`
	CustomerMSISDN *string           `json:"customer_msisdn"`
	ReturnURL      *string           `json:"return_url"`
	Description    *string           `json:"description"`
	Metadata       map[string]string `json:"metadata"`
	// CaptureMethod is automatic (the default) or manual (card payments
	// only: wallet_a with metadata.wallet_a_mode card).
	CaptureMethod *string `json:"capture_method"`
	// Scenario is the X-Service-Scenario header (test mode only).
	Scenario string `json:"-"`
	// InvoiceID is set by billing alone, on the intents it creates for an
	// invoice; a request's body cannot set it.
	InvoiceID string `json:"-"`
}

// Limits on free-form fields (Stripe's).
const (
	maxDescription   = 1000
	maxMetadataKeys  = 50
	maxMetadataKey   = 40
	maxMetadataValue = 500
	maxReturnURL     = 2048
)

// The metadata keys payd reads.
const (
	metaWalletAMode   = "wallet_a_mode"
	metaAuthMode      = "auth_mode"
	metaWalletDMode   = "wallet_d_mode"
	metaWalletDMethod = "wallet_d_payment_method"
)

// walletDMethods are wallet_d's direct payment methods and the flow each
// uses.
var walletDMethods = map[string]providers.Flow{
	"telebirr": providers.FlowPush, "mpesa": providers.FlowPush, "cbebirr": providers.FlowPush, "ebirr": providers.FlowPush,
	"amole": providers.FlowOTP, "awashbirr": providers.FlowOTP,
}

// WalletDMethods lists wallet_d's payment methods in the order the method
// picker shows them.
var WalletDMethods = []string{"telebirr", "mpesa", "cbebirr", "ebirr", "amole", "awashbirr"}

// currencies each provider takes.
func currencyOffered(provider, currency string) bool {
	if provider == providers.WalletD {
		return currency == "ETB"
	}
	return currency == "DJF" || currency == "USD"
}

// newIntent is a validated create request.
type newIntent struct {
	amountMinor    int64
	currency       string
	provider       string
	flow           providers.Flow
	rail           string
	msisdn         *string // as sent
	providerMSISDN string  // as the provider wants it
	method         string
	returnURL      *string
	description    *string
	metadata       map[string]string
	captureMethod  string
}

// validate checks a create request completely before anything is written;
// each error is a 400 naming the field.
func validate(in CreateParams) (newIntent, error) {
	var n newIntent
	switch {
	case in.Amount != nil && in.AmountMinor != nil:
		return n, errs.Invalid("amount", "parameter_invalid", "send amount (major units) or amount_minor (minor units), not both")
	case in.Amount == nil && in.AmountMinor == nil:
		return n, errs.Missing("amount")
	}
	if in.Currency == "" {
		return n, errs.Missing("currency")
	}
	if _, err := money.Exponent(in.Currency); err != nil {
		return n, errs.Invalid("currency", "currency_invalid", "currency must be an upper-case ISO 4217 code such as DJF, not %q", clip(in.Currency))
	}
	n.currency = in.Currency
	var err error
	if in.AmountMinor != nil {
		if *in.AmountMinor <= 0 {
			return n, errs.Invalid("amount_minor", "amount_invalid", "amount_minor must be a positive integer")
		}
		n.amountMinor = *in.AmountMinor
	} else {
		if *in.Amount <= 0 {
			return n, errs.Invalid("amount", "amount_invalid", "amount must be a positive integer (major units)")
		}
		if n.amountMinor, err = money.MajorToMinor(*in.Amount, in.Currency); err != nil {
			return n, errs.Invalid("amount", "amount_too_large", "amount %d %s does not fit in minor units", *in.Amount, in.Currency)
		}
	}
	switch {
	case in.Provider == "":
		return n, errs.Missing("provider")
	case in.Provider == providers.WalletB:
		return n, errs.Invalid("provider", "parameter_invalid", "wallet_b is a payout rail only; payment intents take bank_a, bank_b, wallet_a, wallet_c or wallet_d")
	case !providers.Known(in.Provider, providers.PaymentProviders):
		return n, errs.Invalid("provider", "parameter_invalid", "unknown provider %q; payment intents take bank_a, bank_b, wallet_a, wallet_c or wallet_d", clip(in.Provider))
	}
	n.provider = in.Provider
	if !currencyOffered(n.provider, n.currency) {
		want := "DJF or USD"
		if n.provider == providers.WalletD {
			want = "ETB"
		}
		return n, errs.Invalid("currency", "currency_not_supported", "%s takes %s, not %s", n.provider, want, n.currency)
	}
	if err := ValidateMetadata(in.Metadata); err != nil {
		return n, err
	}
	n.metadata = in.Metadata
	if n.metadata == nil {
		n.metadata = map[string]string{}
	}
	if err := n.chooseFlow(); err != nil {
		return n, err
	}
	if err := n.checkCaptureMethod(in.CaptureMethod); err != nil {
		return n, err
	}
	if err := n.checkMSISDN(in.CustomerMSISDN); err != nil {
		return n, err
	}
	if in.ReturnURL != nil {
		if err := checkReturnURL(*in.ReturnURL); err != nil {
			return n, err
		}
		n.returnURL = in.ReturnURL
	}
	if n.redirects() && n.returnURL == nil {
		return n, errs.Invalid("return_url", "parameter_missing", "return_url is required for %s's redirect flow", n.provider)
	}
	if in.Description != nil {
		if !utf8.ValidString(*in.Description) || utf8.RuneCountInString(*in.Description) > maxDescription {
			return n, errs.Invalid("description", "parameter_invalid", "description must be valid UTF-8 of at most %d characters", maxDescription)
		}
		n.description = in.Description
	}
	return n, nil
}

// chooseFlow applies the flow table (docs/payments.md) to the provider and metadata.
func (n *newIntent) chooseFlow() error {
	n.rail = n.provider
	md := n.metadata
	switch n.provider {
	case providers.BankA, providers.BankB:
		n.flow = providers.FlowOTP
	case providers.WalletA:
		switch mode, ok := md[metaWalletAMode]; {
		case !ok:
			n.flow = providers.FlowPush // without a mode, the push-approval flow
		case mode == "hpp":
			n.flow = providers.FlowHostedPage
		case mode == "card":
			n.flow = providers.FlowCardPage
			n.rail = providers.CardGatewayCNP
		default:
			return errs.Invalid("metadata.wallet_a_mode", "parameter_invalid", "metadata.wallet_a_mode must be hpp or card, not %q", clip(mode))
		}
	case providers.WalletC:
		switch mode, ok := md[metaAuthMode]; {
		case !ok, mode == "APP":
			n.flow = providers.FlowPush
		case mode == "OTP":
			n.flow = providers.FlowOTP
		default:
			return errs.Invalid("metadata.auth_mode", "parameter_invalid", "metadata.auth_mode must be APP or OTP, not %q", clip(mode))
		}
	case providers.WalletD:
		method, hasMethod := md[metaWalletDMethod]
		if hasMethod {
			if _, ok := walletDMethods[method]; !ok {
				return errs.Invalid("metadata.wallet_d_payment_method", "parameter_invalid",
					"metadata.wallet_d_payment_method must be one of %s, not %q", strings.Join(WalletDMethods, ", "), clip(method))
			}
			n.method = method
		}
		switch mode, ok := md[metaWalletDMode]; {
		case !ok:
			n.flow = providers.FlowMethodPicker
		case mode == "direct":
			if !hasMethod {
				return errs.Invalid("metadata.wallet_d_payment_method", "parameter_missing", "metadata.wallet_d_payment_method is required with wallet_d_mode direct")
			}
			n.flow = walletDMethods[method]
		default:
			return errs.Invalid("metadata.wallet_d_mode", "parameter_invalid", "metadata.wallet_d_mode must be direct (or absent for the hosted picker), not %q", clip(mode))
		}
	}
	return nil
}

// checkCaptureMethod takes capture_method: automatic (also when absent) on
// every rail, manual only for card payments, whose authorisation can be
// held and captured later.
func (n *newIntent) checkCaptureMethod(in *string) error {
	n.captureMethod = CaptureAutomatic
	if in == nil {
		return nil
	}
	switch *in {
	case CaptureAutomatic:
	case CaptureManual:
		if n.flow != providers.FlowCardPage {
			return errs.Invalid("capture_method", "parameter_invalid",
				"capture_method manual is for card payments only (provider wallet_a with metadata.wallet_a_mode card)")
		}
		n.captureMethod = CaptureManual
	default:
		return errs.Invalid("capture_method", "parameter_invalid", "capture_method must be automatic or manual, not %q", clip(*in))
	}
	return nil
}

// ParseCancellationReason checks a cancel's cancellation_reason: empty (no
// reason given) or one of duplicate, fraudulent, requested_by_customer,
// abandoned.
func ParseCancellationReason(s *string) (*string, error) {
	if s == nil {
		return nil, nil
	}
	switch *s {
	case ReasonDuplicate, ReasonFraudulent, ReasonRequestedByCustomer, ReasonAbandoned:
		v := *s
		return &v, nil
	}
	return nil, errs.Invalid("cancellation_reason", "parameter_invalid",
		"cancellation_reason must be one of duplicate, fraudulent, requested_by_customer, abandoned, not %q", clip(*s))
}

// redirects reports whether the flow sends the customer to a hosted page.
func (n *newIntent) redirects() bool {
	return n.flow == providers.FlowHostedPage || n.flow == providers.FlowCardPage || n.flow == providers.FlowMethodPicker
}

// needsMSISDN: payd requires the customer's number for
// bank_a, bank_b, wallet_c and wallet_a's push flow.
func (n *newIntent) needsMSISDN() bool {
	switch n.provider {
	case providers.BankA, providers.BankB, providers.WalletC:
		return true
	case providers.WalletA:
		return n.flow == providers.FlowPush
	}
	return false
}

func (n *newIntent) checkMSISDN(in *string) error {
	if in == nil || *in == "" {
		if n.needsMSISDN() {
			return errs.Missing("customer_msisdn")
		}
		return nil
	}
	local, err := ProviderMSISDN(n.provider, *in)
	if err != nil {
		return errs.Invalid("customer_msisdn", "parameter_invalid", "%s", err.Error())
	}
	n.msisdn, n.providerMSISDN = in, local
	return nil
}

// djiboutiPrefix is the country code bank_a's numbers carry in E.164.
const djiboutiPrefix = "+253"

// ProviderMSISDN checks a customer number as sent and returns it as the
// provider wants it. bank_a wants the bare local number: an E.164 number
// must be a Djibouti one (+253), whose prefix is stripped; a bare number of
// 6 to 12 digits passes as it is. bank_b takes the same two forms but keeps
// them as sent (it is the account identifier). The wallets take E.164 only.
func ProviderMSISDN(provider, s string) (string, error) {
	switch provider {
	case providers.BankA:
		if strings.HasPrefix(s, "+") {
			if !isE164(s) {
				return "", errE164
			}
			local, ok := strings.CutPrefix(s, djiboutiPrefix)
			if !ok {
				return "", errors.New("bank_a takes a Djibouti number: +253 followed by the local number, or the bare local number")
			}
			return local, nil
		}
		if !isBareLocal(s) {
			return "", errors.New("bank_a takes the bare local number (6 to 12 digits) or a +253 E.164 number")
		}
		return s, nil
	case providers.BankB:
		if isE164(s) || isBareLocal(s) {
			return s, nil
		}
		return "", errors.New("bank_b takes an E.164 number or the bare local number (6 to 12 digits)")
	}
	if !isE164(s) {
		return "", errE164
	}
	return s, nil
}

var errE164 = errors.New("customer_msisdn must be an E.164 number: + and 8 to 15 digits, the first not 0")

func isE164(s string) bool {
	if len(s) < 9 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return false
	}
	return allDigits(s[1:])
}

func isBareLocal(s string) bool { return len(s) >= 6 && len(s) <= 12 && allDigits(s) }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func checkReturnURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || len(s) > maxReturnURL || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return errs.Invalid("return_url", "parameter_invalid", "return_url must be an absolute http or https URL of at most %d characters", maxReturnURL)
	}
	return nil
}

// ValidateMetadata checks a metadata object (at most 50 keys of 1 to 40
// characters, values of at most 500): a 400 naming the field otherwise.
// Refunds and other objects that carry metadata use the same rules.
func ValidateMetadata(md map[string]string) error {
	if len(md) > maxMetadataKeys {
		return errs.Invalid("metadata", "parameter_invalid", "metadata holds at most %d keys", maxMetadataKeys)
	}
	for k, v := range md {
		if k == "" || utf8.RuneCountInString(k) > maxMetadataKey || !utf8.ValidString(k) {
			return errs.Invalid("metadata", "parameter_invalid", "metadata keys are 1 to %d characters", maxMetadataKey)
		}
		if utf8.RuneCountInString(v) > maxMetadataValue || !utf8.ValidString(v) {
			return errs.Invalid("metadata."+k, "parameter_invalid", "metadata values are at most %d characters", maxMetadataValue)
		}
	}
	return nil
}

// clip shortens a client's value quoted back in an error message.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	return string([]rune(s)[:40]) + "…"
}

// ChooseFlow returns the flow a payment intent for provider with this
// metadata would use, or the 400 naming the metadata
// field at fault. Billing uses it to tell push rails from OTP and redirect
// ones before it creates an intent.
func ChooseFlow(provider string, metadata map[string]string) (providers.Flow, error) {
	if !providers.Known(provider, providers.PaymentProviders) || provider == providers.WalletB {
		return "", errs.Invalid("provider", "parameter_invalid", "unknown provider %q; payments take bank_a, bank_b, wallet_a, wallet_c or wallet_d", clip(provider))
	}
	n := newIntent{provider: provider, metadata: metadata}
	err := n.chooseFlow()
	return n.flow, err
}
