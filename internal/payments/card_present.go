package payments

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// flowCardPresent marks intents recorded from a terminal: they are decided
// before they are written and never wait for anything.
const flowCardPresent = providers.FlowCardPresent

// CardPresentProvider is the provider code of card-present intents: the
// card gateway sits behind wallet_a, which also acquires Visa and
// Mastercard cards.
const CardPresentProvider = providers.WalletA

// cardPresentDetails is payment_method_details of a card-present intent.
// It holds no PAN, track data or cryptogram.
type cardPresentDetails struct {
	Type        string `json:"type"`
	CardPresent struct {
		Brand      string `json:"brand"`
		Last4      string `json:"last4"`
		EntryMode  string `json:"entry_mode"`
		TerminalID string `json:"terminal_id"`
		AuthCode   string `json:"auth_code,omitempty"`
		P2PE       bool   `json:"p2pe"`
	} `json:"card_present"`
}

// RecordCardPresent records a card-present authorisation from a terminal as
// a payment intent, once per (merchant, mode, in.IdempotencyKey): a retry
// returns the intent first recorded. An approval is succeeded, with the
// ledger credit and payment_intent.succeeded in the same transaction; a
// decline is canceled with last_error card_declined and its decline_code
// (with CaptureMethod manual an approval is held at requires_capture
// instead, with payment_intent.amount_capturable_updated and no credit)
// (and returned without error: the caller chooses its HTTP answer).
func (s *Service) RecordCardPresent(ctx context.Context, cl store.Claim, p auth.Principal, in CardPresent) (Intent, error) {
	work := s.db.Within(cl)
	if err := checkCardPresent(in); err != nil {
		return Intent{}, err
	}
	if r, err := s.byIdempotencyKey(ctx, work, p, in.IdempotencyKey); err == nil || !store.IsNotFound(err) {
		return viewOf(r, err)
	}
	now := s.db.Now()
	var d cardPresentDetails
	d.Type = "card_present"
	d.CardPresent.Brand, d.CardPresent.Last4, d.CardPresent.EntryMode = in.Brand, in.Last4, in.EntryMode
	d.CardPresent.TerminalID, d.CardPresent.P2PE = in.TerminalID, true
	res := providers.Result{Outcome: providers.Succeeded, CapturedMinor: in.AmountMinor}
	if in.Approved {
		d.CardPresent.AuthCode = in.AuthCode
	} else {
		code := in.DeclineCode
		if code == "" {
			code = "generic_decline"
		}
		res = providers.Result{Outcome: providers.Failed, Failure: &providers.Failure{Code: "card_declined", Message: "The card was declined.", DeclineCode: code}}
	}
	res.MethodDetails, _ = json.Marshal(d)
	md := map[string]string{}
	if in.OutletID != "" {
		md["outlet_id"] = in.OutletID
	}
	base := record{Intent: Intent{ID: ids.New("pi_"), Object: "payment_intent", Status: Processing, AmountMinor: in.AmountMinor,
		Currency: in.Currency, Provider: CardPresentProvider, Metadata: md, Livemode: p.Livemode, CreatedAt: now, MerchantID: p.MerchantID},
		flow: flowCardPresent, updatedAt: now, idemKey: in.IdempotencyKey,
		// The terminal payment's id is the authorisation's reference at the
		// card gateway: a live refund names the payment by it.
		providerRef: in.IdempotencyKey}
	if in.CaptureMethod == CaptureManual {
		base.CaptureMethod = CaptureManual // an approval is held at requires_capture
	}
	var out record
	err := work.InTx(ctx, func(tx *store.Tx) error {
		out = base
		t, err := applyResult(&out, res, tx.Now())
		if err != nil {
			return err
		}
		if err := insertNow(ctx, tx, &out); err != nil {
			return err
		}
		if _, err := emitCreated(ctx, tx, &out); err != nil {
			return err
		}
		return s.effects(ctx, tx, &out, t, res)
	})
	if store.IsConflict(err) {
		// A concurrent retry of the same terminal request won the insert.
		return viewOf(s.byIdempotencyKey(ctx, work, p, in.IdempotencyKey))
	}
	if err != nil {
		return Intent{}, err
	}
	return out.view(), nil
}

func viewOf(r *record, err error) (Intent, error) {
	if err != nil {
		return Intent{}, err
	}
	return r.view(), nil
}

func (s *Service) byIdempotencyKey(ctx context.Context, work store.Work, p auth.Principal, key string) (*record, error) {
	return scan(work.QueryRow(ctx, "SELECT "+columns+" FROM payment_intents WHERE merchant_id = ? AND livemode = ? AND idempotency_key = ?",
		p.MerchantID, p.Livemode, key))
}

func checkCardPresent(in CardPresent) error {
	switch {
	case in.IdempotencyKey == "":
		return errs.Missing("Idempotency-Key")
	case len(in.IdempotencyKey) > 255:
		return errs.Invalid("Idempotency-Key", "idempotency_key_invalid", "Idempotency-Key must be at most 255 characters")
	case in.AmountMinor <= 0:
		return errs.Invalid("amount_minor", "amount_invalid", "amount_minor must be a positive integer")
	case !currencyOffered(CardPresentProvider, in.Currency):
		return errs.Invalid("currency", "currency_not_supported", "card-present payments take DJF or USD, not %q", clip(in.Currency))
	case !strings.HasPrefix(in.TerminalID, "term_"):
		return errs.Invalid("terminal_id", "parameter_invalid", "terminal_id must be a term_ id")
	case in.Brand == "":
		return errs.Missing("brand")
	case len(in.Last4) != 4 || !allDigits(in.Last4):
		return errs.Invalid("last4", "parameter_invalid", "last4 must be four digits")
	case in.EntryMode == "":
		return errs.Missing("entry_mode")
	case in.Approved && in.AuthCode == "":
		return errs.Missing("auth_code")
	case in.CaptureMethod != "" && in.CaptureMethod != CaptureAutomatic && in.CaptureMethod != CaptureManual:
		return errs.Invalid("capture_method", "parameter_invalid", "capture_method must be automatic or manual, not %q", clip(in.CaptureMethod))
	}
	return nil
}
