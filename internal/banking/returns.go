package banking

import (
	"context"
	"errors"
	"strings"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/banking/iso20022"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
)

// Return applies a return (kind KindReturn, sent by the creditor agent) or a
// cancellation (KindCancel, sent by the debtor agent) to a transfer, read
// from the JSON body, a pacs.004 (returns) or a camt.056 (cancellations).
// Both move money back, creditor → debtor settlement account, and answer the
// updated transfer.
//
// The amount is req.AmountMinor, or everything not yet returned when it is
// zero. Errors: 403 when the caller is not the agent the kind requires, 404
// when it is neither agent, 400 for a message of the other kind or naming
// another transfer or currency (see checkReferences), 409 invalid_state for a transfer that is not
// settled (held or rejected), 409 amount_exceeds_remaining when the returns
// would exceed the original amount, 402 insufficient_balance when the
// creditor agent's settlement account cannot cover it. A transfer still
// ACSP is settled first, in the same transaction (gross settlement: the
// return follows the settlement). An XML message whose id was already
// applied to this transfer is not applied again. It runs in the request's
// unit of work (cl; store.NoClaim without one).
func (s *Service) Return(ctx context.Context, cl store.Claim, p auth.Principal, uetr, kind string, req iso20022.ReturnRequest) (*Transfer, error) {
	work := s.db.Within(cl)
	if _, err := caller(ctx, work, p); err != nil {
		return nil, err
	}
	switch {
	case kind == KindReturn && req.Source == iso20022.ReturnFromCamt056:
		return nil, errs.Invalid("", "message_type_mismatch", "a camt.056 cancellation request goes to /cancel")
	case kind == KindCancel && iso20022.IsPacs004(req.Source):
		return nil, errs.Invalid("", "message_type_mismatch", "a pacs.004 return goes to /return")
	case kind != KindReturn && kind != KindCancel:
		return nil, errs.Internal(errors.New("banking: unknown return kind " + kind))
	}
	if err := checkUETR(req, uetr); err != nil {
		return nil, err
	}
	var out *Transfer
	err := work.InTx(ctx, func(tx *store.Tx) error {
		t, err := getTransfer(ctx, tx, p.MerchantID, p.Livemode, uetr, true)
		if store.IsNotFound(err) {
			return errs.NotFound("transfer", uetr)
		}
		if err != nil {
			return err
		}
		if kind == KindReturn && t.CreditorMerchantID != p.MerchantID {
			return errs.Permission("permission_denied", "only the creditor agent returns a transfer; the debtor agent cancels it")
		}
		if kind == KindCancel && t.DebtorMerchantID != p.MerchantID {
			return errs.Permission("permission_denied", "only the debtor agent cancels a transfer; the creditor agent returns it")
		}
		if err := checkReferences(req, t); err != nil {
			return err
		}
		if req.MsgID != "" {
			for _, r := range t.Returns {
				if r.MsgID == req.MsgID {
					out = t // the same message again: already applied
					return nil
				}
			}
		}
		switch t.Status {
		case StatusACSC:
		case StatusACSP:
			if err := settleInFlight(ctx, tx, t); err != nil {
				return err
			}
		default:
			return errs.InvalidState("transfer %s is %s; only a settled transfer can be returned or cancelled", t.UETR, t.Status)
		}
		amount := req.AmountMinor
		if amount == 0 {
			amount = t.remainingMinor()
		}
		if amount <= 0 || amount > t.remainingMinor() {
			return &errs.Error{Kind: errs.KindConflict, Code: "amount_exceeds_remaining", Param: "amount_minor",
				Message: "returns would exceed the transfer: " + itoa(t.remainingMinor()) + " " + t.Currency + " remain to return"}
		}
		res, err := tx.Exec(ctx, `UPDATE transfers SET returned_amount_minor = returned_amount_minor + ?, updated_at = ?
			WHERE id = ? AND status = ? AND returned_amount_minor <= amount_minor - ?`,
			amount, store.Micros(tx.Now()), t.ID, StatusACSC, amount)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return errs.Conflict("amount_exceeds_remaining", "returns would exceed the transfer")
		}
		if err := postReturn(ctx, tx, t, amount); err != nil {
			if errors.Is(err, ledger.ErrInsufficientFunds) {
				return errs.PaymentRequired("insufficient_balance", "the creditor agent's settlement account cannot cover the return")
			}
			return err
		}
		r := Return{ID: ids.New("trr_"), Kind: kind, Source: req.Source, MsgID: req.MsgID, AmountMinor: amount,
			ReasonCode: req.ReasonCode, ReasonText: req.ReasonText, CreatedBy: p.ID, CreatedAt: tx.Now()}
		if _, err := tx.Exec(ctx, `INSERT INTO transfer_returns (id, transfer_id, livemode, kind, source, msg_id, amount_minor,
			reason_code, reason_text, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, t.ID, t.Livemode, r.Kind, r.Source, nullString(r.MsgID), r.AmountMinor, r.ReasonCode, r.ReasonText,
			r.CreatedBy, store.Micros(r.CreatedAt)); err != nil {
			return err
		}
		t.ReturnedAmountMinor += amount
		t.Returns = append(t.Returns, r)
		out = t
		return emit(ctx, tx, t, EventReturned)
	})
	return out, err
}

// checkUETR refuses a pacs.004 or camt.056 that names no OrgnlUETR, and any
// request whose UETR is not the URL's: a message is applied only to the
// payment it names. Errors are 400 with param the element path.
func checkUETR(req iso20022.ReturnRequest, uetr string) error {
	switch {
	case req.OriginalUETR == "" && req.Source != iso20022.ReturnFromJSON:
		return errs.Invalid(req.Paths.UETR, "parameter_missing",
			"the %s names no OrgnlUETR: payd applies a return or cancellation only to the transfer it names", req.Source)
	case req.OriginalUETR != "" && !strings.EqualFold(req.OriginalUETR, uetr):
		return referenceMismatch(req.Paths.UETR, "UETR", req.OriginalUETR, uetr)
	}
	return nil
}

// checkReferences refuses a request whose other references (original
// message id, end-to-end id, interbank settlement amount and currency, and
// the currency of the amount returned) are given but are not the
// transfer's. Nothing is applied.
func checkReferences(req iso20022.ReturnRequest, t *Transfer) error {
	p := req.Paths
	switch {
	case req.OriginalMsgID != "" && req.OriginalMsgID != t.MsgID:
		return referenceMismatch(p.MsgID, "original message id", req.OriginalMsgID, t.MsgID)
	case req.OriginalEndToEndID != "" && req.OriginalEndToEndID != t.EndToEndID:
		return referenceMismatch(p.EndToEndID, "end-to-end id", req.OriginalEndToEndID, t.EndToEndID)
	case req.OriginalCurrency != "" && req.OriginalCurrency != t.Currency:
		return referenceMismatch(p.Currency, "currency", req.OriginalCurrency, t.Currency)
	case req.OriginalAmountMinor != 0 && req.OriginalAmountMinor != t.AmountMinor:
		return referenceMismatch(p.Amount, "interbank settlement amount (minor units)", itoa(req.OriginalAmountMinor), itoa(t.AmountMinor))
	case req.Currency != "" && req.Currency != t.Currency:
		return referenceMismatch(p.ReturnedCurrency, "currency", req.Currency, t.Currency)
	}
	return nil
}

func referenceMismatch(path, what, got, want string) error {
	return errs.Invalid(path, "reference_mismatch", "the message names %s %q but the transfer's is %q; nothing was applied",
		what, clip(got), want)
}

// clip bounds an echoed value.
func clip(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}
