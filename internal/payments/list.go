package payments

import (
	"context"
	"net/url"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// ListParams filters GET /v1/payment_intents.
type ListParams struct {
	Page     pagination.Page
	Status   Status
	Provider string
	// CreatedFrom and CreatedUntil bound created_at: From <= created_at < Until.
	CreatedFrom, CreatedUntil *time.Time
}

// maxUnixSeconds is the latest unix time a list filter accepts.
const maxUnixSeconds = pagination.MaxUnixSeconds

// ParseListQuery reads the list's query string: limit, starting_after,
// ending_before, status, provider, and created[gte], created[gt],
// created[lte], created[lt], each an RFC 3339 time or unix seconds. Times
// compare at second precision, as created_at is shown: created[lte] with an
// intent's created_at includes that intent.
func ParseListQuery(q url.Values) (ListParams, error) {
	var lp ListParams
	var err error
	if lp.Page, err = pagination.Parse(q); err != nil {
		return lp, err
	}
	if v := q.Get("status"); v != "" {
		if !Status(v).Valid() {
			return lp, errs.Invalid("status", "parameter_invalid", "status must be one of requires_action, processing, requires_capture, succeeded, canceled, compliance_review")
		}
		lp.Status = Status(v)
	}
	if v := q.Get("provider"); v != "" {
		if !providers.Known(v, providers.PaymentProviders) {
			return lp, errs.Invalid("provider", "parameter_invalid", "provider must be one of bank_a, bank_b, wallet_a, wallet_c, wallet_d")
		}
		lp.Provider = v
	}
	if lp.CreatedFrom, lp.CreatedUntil, err = pagination.ParseCreated(q); err != nil {
		return lp, err
	}
	return lp, nil
}

// ParseTime reads a list filter's time: unix seconds (digits only) or RFC
// 3339 with any offset.
func ParseTime(s string) (time.Time, error) { return pagination.ParseTime(s) }

// List returns the principal's intents, newest first.
func (s *Service) List(ctx context.Context, p auth.Principal, lp ListParams) (pagination.List[Intent], error) {
	q := "SELECT " + columns + " FROM payment_intents WHERE merchant_id = ? AND livemode = ?"
	args := []any{p.MerchantID, p.Livemode}
	if lp.Status != "" {
		q += " AND status = ?"
		args = append(args, string(lp.Status))
	}
	if lp.Provider != "" {
		q += " AND provider = ?"
		args = append(args, lp.Provider)
	}
	if lp.CreatedFrom != nil {
		// An id bound implied by the time bound lets the newest-first scan
		// by id stop after limit rows instead of sorting the whole time
		// window (SQLite). An id holds the millisecond its request began and
		// created_at the moment the row was written, at most one request's
		// duration later (a slow provider call), so the bound sits an hour
		// before the time bound: never excluding a row, still tight.
		q += " AND created_at >= ? AND id >= ?"
		args = append(args, store.Micros(*lp.CreatedFrom), ids.Floor("pi_", lp.CreatedFrom.Add(-time.Hour)))
	}
	if lp.CreatedUntil != nil {
		q += " AND created_at < ?"
		args = append(args, store.Micros(*lp.CreatedUntil))
	}
	cond, cargs, tail := lp.Page.ClauseScoped("id", "merchant_id", "livemode")
	rows, err := s.db.Query(ctx, q+cond+tail, append(args, cargs...)...)
	if err != nil {
		return pagination.List[Intent]{}, err
	}
	defer rows.Close()
	var out []Intent
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return pagination.List[Intent]{}, err
		}
		out = append(out, r.view())
	}
	if err := rows.Err(); err != nil {
		return pagination.List[Intent]{}, err
	}
	items, more := pagination.Finish(lp.Page, out)
	return pagination.NewList(items, more), nil
}
