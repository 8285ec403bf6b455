package payments

import (
	"context"
	"net/url"
	"strconv"
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

// maxUnixSeconds is 9999-12-31T23:59:59Z, the last second RFC 3339 can write.
const maxUnixSeconds = 253402300799

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
			return lp, errs.Invalid("status", "parameter_invalid", "status must be one of requires_action, processing, succeeded, canceled, compliance_review")
		}
		lp.Status = Status(v)
	}
	if v := q.Get("provider"); v != "" {
		if !providers.Known(v, providers.PaymentProviders) {
			return lp, errs.Invalid("provider", "parameter_invalid", "provider must be one of bank_a, bank_b, wallet_a, wallet_c, wallet_d")
		}
		lp.Provider = v
	}
	bounds := []struct {
		param string
		lower bool // a lower bound (From) or an upper one (Until)
		shift time.Duration
	}{
		{"created[gte]", true, 0}, {"created[gt]", true, time.Second},
		{"created[lte]", false, time.Second}, {"created[lt]", false, 0},
	}
	for _, b := range bounds {
		v, ok := q[b.param]
		if !ok {
			continue
		}
		if len(v) != 1 {
			return lp, errs.Invalid(b.param, "parameter_invalid", "%s may be given once", b.param)
		}
		t, err := ParseTime(v[0])
		if err != nil {
			return lp, errs.Invalid(b.param, "parameter_invalid", "%s must be an RFC 3339 time (2026-01-02T15:04:05Z) or unix seconds", b.param)
		}
		t = t.Truncate(time.Second).Add(b.shift)
		switch {
		case b.lower && (lp.CreatedFrom == nil || t.After(*lp.CreatedFrom)):
			lp.CreatedFrom = &t
		case !b.lower && (lp.CreatedUntil == nil || t.Before(*lp.CreatedUntil)):
			lp.CreatedUntil = &t
		}
	}
	return lp, nil
}

// ParseTime reads a list filter's time: unix seconds (digits only) or RFC
// 3339 with any offset.
func ParseTime(s string) (time.Time, error) {
	if s != "" && allDigits(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n > maxUnixSeconds {
			return time.Time{}, errs.Invalid("", "parameter_invalid", "unix seconds out of range")
		}
		return time.Unix(n, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

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
