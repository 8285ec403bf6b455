package payouts

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/providers"
)

// Limits of payouts and batches (docs/payouts.md).
const (
	MaxBatchRows         = 10_000     // rows of a batch, counted after dropping duplicate references
	MaxBatchTotalDJF     = 50_000_000 // variant B total, DJF (exponent 0: minor units are francs)
	MaxOpenRowsBatches   = 5          // variant B batches pending_approval or processing, per merchant and mode
	MaxBatchBytes        = 10 << 20   // CSV (and JSON) body of POST /v1/payouts/bulk
	MaxDescription       = 140        // payout and row description, characters
	MaxBatchDescription  = 255        // variant B batch description, characters
	MaxRecipientName     = 140        // characters
	MaxReference         = 255        // characters
	MaxRowErrorsReported = 100        // error.rows holds at most this many
	maxMetadataKeys      = 50
	maxMetadataKey       = 40
	maxMetadataValue     = 500
)

// RowsProviders are the rails a variant B row may use.
var RowsProviders = []string{providers.WalletA, providers.WalletB, providers.BankB, providers.BankA}

// walletRails need recipient_msisdn; the others are bank rails and need
// recipient_account.
var walletRails = []string{providers.WalletA, providers.WalletB, providers.WalletC, providers.WalletD}

// e164 is an E.164 number: +, a country code not starting with 0, at most 15 digits.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// accountRE is a bank account identifier: letters, digits and a few separators.
var accountRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 _./-]{0,63}$`)

// fieldError is one problem with one field of one payout.
type fieldError struct {
	param, code, message string
}

// payoutInput is one payout to make, from a single create, a variant A item
// or a variant B row, before validation.
type payoutInput struct {
	Row         int // 1-based data row of a batch; 0 for a single payout
	Amount      int64
	AmountSet   bool
	AmountField string // the name the amount was given under: amount (default) or amount_minor
	Currency    string
	Provider    string
	MSISDN      string
	Account     string
	Name        string
	Description string
	Reference   string
	Metadata    map[string]string
	Scenario    string // resolved sandbox scenario (test mode)
	errors      []fieldError
}

func (in *payoutInput) fail(param, code, format string, args ...any) {
	in.errors = append(in.errors, fieldError{param, code, fmt.Sprintf(format, args...)})
}

// shape says which rules apply.
type shape int

const (
	shapeSingle shape = iota // POST /v1/payouts
	shapeItems               // variant A
	shapeRows                // variant B
)

// validate checks one payout's fields, recording every problem on in. The
// scenario header applies to single payouts only; rows and items choose
// their scenario by magic number or account.
func (in *payoutInput) validate(sh shape, livemode bool, scenarioHeader string) {
	in.MSISDN = strings.TrimSpace(in.MSISDN)
	in.Account = strings.TrimSpace(in.Account)
	in.Name = strings.TrimSpace(in.Name)
	in.Reference = strings.TrimSpace(in.Reference)
	if !in.AmountSet {
		in.fail("amount", "parameter_missing", "amount is required")
	} else if in.Amount <= 0 {
		field := in.AmountField
		if field == "" {
			field = "amount"
		}
		in.fail(field, "amount_invalid", "%s must be a positive integer in minor units", field)
	}
	if in.Currency == "" {
		in.fail("currency", "parameter_missing", "currency is required")
	} else if _, err := money.Exponent(in.Currency); err != nil {
		in.fail("currency", "currency_invalid", "currency %q is not an ISO 4217 code", clip(in.Currency))
	} else if sh == shapeRows && in.Currency != "DJF" {
		in.fail("currency", "currency_not_supported", "bulk batches of rows are DJF only")
	}
	allowed := providers.PayoutProviders
	if sh == shapeRows {
		allowed = RowsProviders
	}
	wallet := slices.Contains(walletRails, in.Provider)
	providerOK := false
	switch {
	case in.Provider == "":
		in.fail("provider", "parameter_missing", "provider is required")
	case !slices.Contains(allowed, in.Provider):
		in.fail("provider", "provider_invalid", "provider must be one of %s", strings.Join(allowed, ", "))
	default:
		providerOK = true
		if in.Currency != "" && sh != shapeRows {
			if in.Provider == providers.WalletD && in.Currency != "ETB" {
				in.fail("currency", "currency_not_supported", "wallet_d pays out ETB only")
			} else if in.Provider != providers.WalletD && in.Currency != "DJF" && in.Currency != "USD" {
				in.fail("currency", "currency_not_supported", "%s pays out DJF and USD only", in.Provider)
			}
		}
	}
	switch {
	case in.MSISDN != "" && in.Account != "":
		in.fail("recipient_account", "recipient_conflict", "recipient_msisdn and recipient_account are mutually exclusive")
	case providerOK && wallet && in.MSISDN == "":
		in.fail("recipient_msisdn", "parameter_missing", "recipient_msisdn is required for %s", in.Provider)
	case providerOK && !wallet && in.Account == "":
		in.fail("recipient_account", "parameter_missing", "recipient_account is required for %s", in.Provider)
	case providerOK && wallet && in.Account != "":
		in.fail("recipient_account", "recipient_invalid", "%s is a wallet rail: give recipient_msisdn, not recipient_account", in.Provider)
	case providerOK && !wallet && in.MSISDN != "":
		in.fail("recipient_msisdn", "recipient_invalid", "%s is a bank rail: give recipient_account, not recipient_msisdn", in.Provider)
	}
	if in.MSISDN != "" && !e164.MatchString(in.MSISDN) {
		in.fail("recipient_msisdn", "msisdn_invalid", "recipient_msisdn must be an E.164 number such as +25377123456")
	}
	if in.Account != "" && !accountRE.MatchString(in.Account) {
		in.fail("recipient_account", "account_invalid", "recipient_account must be 1 to 64 letters, digits, spaces or _ . / -")
	}
	textField(in, "recipient_name", in.Name, MaxRecipientName)
	textField(in, "description", in.Description, MaxDescription)
	refParam := "reference"
	if sh == shapeItems {
		refParam = "external_ref"
	}
	if in.Reference == "" && sh == shapeRows {
		in.fail("reference", "parameter_missing", "reference is required")
	}
	textField(in, refParam, in.Reference, MaxReference)
	if len(in.Metadata) > maxMetadataKeys {
		in.fail("metadata", "metadata_invalid", "metadata holds at most %d keys", maxMetadataKeys)
	}
	for k, v := range in.Metadata {
		if k == "" || utf8.RuneCountInString(k) > maxMetadataKey || utf8.RuneCountInString(v) > maxMetadataValue {
			in.fail("metadata", "metadata_invalid", "metadata keys are 1 to %d characters and values at most %d", maxMetadataKey, maxMetadataValue)
			break
		}
	}
	if !livemode && providerOK {
		in.resolveScenario(sh, scenarioHeader)
	}
}

// textField checks a free-text field's length and refuses control characters.
func textField(in *payoutInput, param, v string, max int) {
	if n := utf8.RuneCountInString(v); n > max {
		in.fail(param, "parameter_too_long", "%s is %d characters; at most %d are allowed", param, n, max)
		return
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		in.fail(param, "parameter_invalid", "%s must not contain control characters", param)
	}
}

// resolveScenario picks the sandbox scenario: the
// X-Service-Scenario header (single payouts) wins, then a magic recipient
// number, then recipient_account sandbox_<name>. An unknown name, or one the
// provider does not offer, is invalid_scenario.
func (in *payoutInput) resolveScenario(sh shape, header string) {
	if header != "" && sh == shapeSingle {
		sc, ok := providers.ScenarioByName(header)
		if !ok {
			in.fail("X-Service-Scenario", "invalid_scenario", "unknown sandbox scenario %q", clip(header))
			return
		}
		if !providers.Offers(in.Provider, sc) {
			in.fail("X-Service-Scenario", "invalid_scenario", "scenario %s is not offered for %s", sc.Name, in.Provider)
			return
		}
		in.Scenario = sc.Name
		return
	}
	if sc, ok := providers.ScenarioFromMSISDN(in.MSISDN); ok {
		if !providers.Offers(in.Provider, sc) {
			in.fail("recipient_msisdn", "invalid_scenario", "scenario %s (magic number %s) is not offered for %s", sc.Name, in.MSISDN, in.Provider)
			return
		}
		in.Scenario = sc.Name
		return
	}
	if name, ok := strings.CutPrefix(in.Account, "sandbox_"); ok {
		sc, known := providers.ScenarioByName(name)
		if !known {
			in.fail("recipient_account", "invalid_scenario", "unknown sandbox scenario %q in recipient_account", clip(name))
			return
		}
		if !providers.Offers(in.Provider, sc) {
			in.fail("recipient_account", "invalid_scenario", "scenario %s is not offered for %s", sc.Name, in.Provider)
			return
		}
		in.Scenario = sc.Name
	}
}

// clip shortens a value echoed in an error message.
func clip(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		return string([]rune(s)[:40]) + "…"
	}
	return s
}

// singleError is the 400 for a single payout: its first problem.
func singleError(in *payoutInput) error {
	if len(in.errors) == 0 {
		return nil
	}
	f := in.errors[0]
	return errs.Invalid(f.param, f.code, "%s", f.message)
}

// rowErrors collects every row's problems into one 400 (the first 100 in
// error.rows, all counted in the message).
type rowErrors struct {
	param string // "rows", "items" or "file"
	rows  []errs.RowError
	bad   map[int]bool
}

func (r *rowErrors) add(row int, param, format string, args ...any) {
	if r.bad == nil {
		r.bad = map[int]bool{}
	}
	r.bad[row] = true
	r.rows = append(r.rows, errs.RowError{Row: row, Param: param, Message: fmt.Sprintf(format, args...)})
}

func (r *rowErrors) addInput(in *payoutInput) {
	for _, f := range in.errors {
		r.add(in.Row, f.param, "%s", f.message)
	}
}

// err returns the 400, or nil when no row is bad.
func (r *rowErrors) err() error {
	if len(r.rows) == 0 {
		return nil
	}
	shown := r.rows
	if len(shown) > MaxRowErrorsReported {
		shown = shown[:MaxRowErrorsReported]
	}
	msg := fmt.Sprintf("%d rows are invalid (%d problems); error.rows lists them by row number, counted from 1 at the first data row", len(r.bad), len(r.rows))
	if len(r.bad) == 1 {
		msg = fmt.Sprintf("1 row is invalid (%d problems); error.rows lists them by row number, counted from 1 at the first data row", len(r.rows))
	}
	if len(r.rows) > MaxRowErrorsReported {
		msg += fmt.Sprintf("; the first %d are shown", MaxRowErrorsReported)
	}
	return &errs.Error{Kind: errs.KindInvalid, Code: "invalid_rows", Param: r.param, Message: msg, Rows: shown}
}
