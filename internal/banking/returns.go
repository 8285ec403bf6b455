package banking

import (
	"context"
	"errors"

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
// another transfer or currency, 409 invalid_state for a transfer that is not
// settled (held or rejected), 409 amount_exceeds_remaining when the returns
// would exceed the original amount, 402 insufficient_balance when the
// creditor agent's settlement account cannot cover it. A transfer still
// ACSP is settled first, in the same transaction (gross settlement: the
// return follows the settlement). An XML message whose id was already
// applied to this transfer is not applied again.
func (s *Service) Return(ctx context.Context, p auth.Principal, uetr, kind string, req iso20022.ReturnRequest) (*Transfer, error) {
	if _, err := s.Caller(ctx, p); err != nil {
		return nil, err
	}
	switch {
	case kind == KindReturn && req.Source == iso20022.ReturnFromCamt056:
		return nil, errs.Invalid("", "message_type_mismatch", "a camt.056 cancellation request goes to /cancel")
	case kind == KindCancel && req.Source == iso20022.ReturnFromPacs004:
		return nil, errs.Invalid("", "message_type_mismatch", "a pacs.004 return goes to /return")
	case kind != KindReturn && kind != KindCancel:
		return nil, errs.Internal(errors.New("banking: unknown return kind " + kind))
	}
	if req.OriginalUETR != "" && req.OriginalUETR != uetr {
		return nil, errs.Invalid("OrgnlUETR", "parameter_invalid", "the message names another transfer than the URL")
	}
	var out *Transfer
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
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
		if req.Currency != "" && req.Currency != t.Currency {
			return errs.Invalid("Ccy", "parameter_invalid", "the transfer is in %s", t.Currency)
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
