package billing

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// The hosted invoice page's link carries a token (see invoiceLinkToken): it
// lets whoever holds the link see the invoice and pay it, nothing else, as
// a payment link sent to a customer does. It is derived, not stored, and
// compared in constant time; a wrong or missing token is 404.

// RailOption is one way to pay offered on the hosted invoice page.
type RailOption struct {
	Value       string // the form value
	Label       string
	Provider    string
	Metadata    map[string]string
	NeedsNumber bool
}

// railOptions are every rail a payment intent offers, with the flows a
// customer can complete in a browser or wallet app.
var railOptions = []RailOption{
	{"wallet_c", "Wallet C (approve in the app)", "wallet_c", nil, true},
	{"wallet_c_otp", "Wallet C (SMS code)", "wallet_c", map[string]string{"auth_mode": "OTP"}, true},
	{"wallet_a", "Wallet A (phone and PIN)", "wallet_a", map[string]string{"wallet_a_mode": "hpp"}, false},
	{"card", "Card", "wallet_a", map[string]string{"wallet_a_mode": "card"}, false},
	{"bank_a", "Bank A (SMS code)", "bank_a", nil, true},
	{"bank_b", "Bank B (SMS code)", "bank_b", nil, true},
	{"wallet_d", "Wallet D (telebirr, M-PESA, CBE Birr, ...)", "wallet_d", nil, false},
}

// RailOptions lists the rails offered for a currency (wallet_d takes ETB
// only, the others DJF and USD).
func RailOptions(currency string) []RailOption {
	var out []RailOption
	for _, o := range railOptions {
		if (o.Provider == providers.WalletD) == (currency == "ETB") {
			out = append(out, o)
		}
	}
	return out
}

// HostedInvoice returns the invoice a hosted page link names, when token
// is the link's.
func (s *Service) HostedInvoice(ctx context.Context, id, token string) (Invoice, error) {
	v, err := scanInvoice(s.db.QueryRow(ctx, "SELECT "+invColumns+" FROM invoices WHERE id = ?", id))
	if store.IsNotFound(err) || err == nil && (v.Status == Draft || !s.linkTokenOpens(v, token)) {
		return Invoice{}, errs.NotFound("invoice", id)
	}
	if err != nil {
		return Invoice{}, err
	}
	return s.view(v), nil
}

// HostedPay starts a payment of the invoice with the rail the customer
// chose on the hosted page; the intent returns to the page
// (return_url) after a redirect flow.
func (s *Service) HostedPay(ctx context.Context, id, token, option, number string) (payments.Intent, error) {
	v, err := s.HostedInvoice(ctx, id, token)
	if err != nil {
		return payments.Intent{}, err
	}
	if !invAllowed(payInvoice, v.Status) {
		return payments.Intent{}, errs.InvalidState("this invoice is %s and cannot be paid", v.Status)
	}
	var opt *RailOption
	for _, o := range RailOptions(v.Currency) {
		if o.Value == option {
			opt = &o
		}
	}
	if opt == nil {
		return payments.Intent{}, errs.Invalid("rail", "parameter_invalid", "choose how to pay")
	}
	md := map[string]string{MetaInvoice: v.ID, MetaAttempt: "hosted"}
	for k, val := range opt.Metadata {
		md[k] = val
	}
	amt, desc, ret := v.AmountRemaining, "Invoice "+v.ID, *v.HostedInvoiceURL
	in := payments.CreateParams{AmountMinor: &amt, Currency: v.Currency, Provider: opt.Provider, Description: &desc, Metadata: md, ReturnURL: &ret,
		InvoiceID: v.ID}
	if opt.NeedsNumber {
		in.CustomerMSISDN = &number
	}
	return s.pay.Create(ctx, store.NoClaim, principal(v.MerchantID, v.Livemode), in)
}

// HostedConfirm passes the customer's SMS code for a payment of the
// invoice started on its hosted page.
func (s *Service) HostedConfirm(ctx context.Context, id, token, intentID, otp string) (payments.Intent, error) {
	v, err := s.HostedInvoice(ctx, id, token)
	if err != nil {
		return payments.Intent{}, err
	}
	p := principal(v.MerchantID, v.Livemode)
	pi, err := s.pay.Get(ctx, p, intentID)
	if err != nil || pi.InvoiceID != v.ID {
		return payments.Intent{}, errs.NotFound("payment_intent", intentID)
	}
	return s.pay.Confirm(ctx, store.NoClaim, p, intentID, otp)
}

// Intent returns a payment intent of the invoice (for its hosted page).
func (s *Service) Intent(ctx context.Context, v Invoice, intentID string) (payments.Intent, error) {
	pi, err := s.pay.Get(ctx, principal(v.MerchantID, v.Livemode), intentID)
	if err != nil || pi.InvoiceID != v.ID {
		return payments.Intent{}, errs.NotFound("payment_intent", intentID)
	}
	return pi, nil
}

// invoiceLinkToken is the token of an invoice's hosted-page link: an HMAC of
// the invoice id under the service's link key, so the database holds no
// working link. Invoices made before links were derived keep the random
// token stored with them.
//
// Without a link key (a process with no secrets key) there is no token:
// the link is never one anybody could compute.
func (s *Service) invoiceLinkToken(v *Invoice) string {
	if v.hostedToken != "" {
		return v.hostedToken
	}
	return linkToken(s.linkKey, v.ID)
}

func linkToken(key []byte, id string) string {
	if len(key) == 0 {
		return ""
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("payd hosted invoice link\x00"))
	mac.Write([]byte(id))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:24])
}

// linkTokenOpens reports whether token opens v's hosted page: v's token,
// or the one made before link keys were derived (when that key is known).
func (s *Service) linkTokenOpens(v *Invoice, token string) bool {
	want := s.invoiceLinkToken(v)
	if token == "" || want == "" {
		return false
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(want)) == 1 {
		return true
	}
	old := linkToken(s.oldLink, v.ID)
	return v.hostedToken == "" && old != "" && subtle.ConstantTimeCompare([]byte(token), []byte(old)) == 1
}
