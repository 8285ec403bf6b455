package banking

import (
	"context"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
)

// ListParams filters a list of transfers.
type ListParams struct {
	Page pagination.Page
	// Status keeps only transfers with this status (ACSC, ACSP, ACWP, RJCT).
	Status string
	// Role keeps only transfers where the caller is the "debtor" or the
	// "creditor" agent; empty means both.
	Role string
}

// List returns the caller's transfers (as either agent), newest first. The
// cursors starting_after and ending_before take UETRs. The compliance queue
// is List with Status ACWP and Role creditor.
func (s *Service) List(ctx context.Context, p auth.Principal, lp ListParams) ([]*Transfer, bool, error) {
	if _, err := s.Caller(ctx, p); err != nil {
		return nil, false, err
	}
	switch lp.Status {
	case "", StatusACSC, StatusACSP, StatusACWP, StatusRJCT:
	default:
		return nil, false, errs.Invalid("status", "parameter_invalid", "status must be ACSC, ACSP, ACWP or RJCT")
	}
	where := " WHERE livemode = ?"
	args := []any{p.Livemode}
	switch lp.Role {
	case "":
		where += " AND (debtor_merchant_id = ? OR creditor_merchant_id = ?)"
		args = append(args, p.MerchantID, p.MerchantID)
	case "debtor":
		where += " AND debtor_merchant_id = ?"
		args = append(args, p.MerchantID)
	case "creditor":
		where += " AND creditor_merchant_id = ?"
		args = append(args, p.MerchantID)
	default:
		return nil, false, errs.Invalid("role", "parameter_invalid", "role must be debtor or creditor")
	}
	if lp.Status != "" {
		where += " AND status = ?"
		args = append(args, lp.Status)
	}
	page := lp.Page
	for _, c := range []*string{&page.StartingAfter, &page.EndingBefore} {
		if *c == "" {
			continue
		}
		var id string
		err := s.db.QueryRow(ctx, "SELECT id FROM transfers WHERE livemode = ? AND uetr = ? AND (debtor_merchant_id = ? OR creditor_merchant_id = ?)",
			p.Livemode, *c, p.MerchantID, p.MerchantID).Scan(&id)
		if store.IsNotFound(err) {
			return nil, false, errs.Invalid("starting_after", "parameter_invalid", "no such transfer: '%s'", *c)
		}
		if err != nil {
			return nil, false, err
		}
		*c = id
	}
	cond, cargs, tail := page.Clause("id")
	rows, err := s.db.Query(ctx, "SELECT "+transferColumns+" FROM transfers"+where+cond+tail, append(args, cargs...)...)
	if err != nil {
		return nil, false, err
	}
	var out []*Transfer
	for rows.Next() {
		t, err := scanTransfer(rows)
		if err != nil {
			rows.Close()
			return nil, false, err
		}
		out = append(out, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	out, more := pagination.Finish(page, out)
	for _, t := range out {
		if err := loadReturns(ctx, s.db, t); err != nil {
			return nil, false, err
		}
	}
	return out, more, nil
}
