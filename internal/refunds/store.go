package refunds

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
)

// columns is the column list scanRefund expects.
const columns = `id, merchant_id, livemode, payment_intent, status, amount_minor, currency, provider, reason, metadata,
	scenario, failure_code, failure_message, provider_ref, created_by, approved_by,
	created_at, updated_at, succeeded_at, failed_at, canceled_at`

// scanRefund reads one row selected with columns.
func scanRefund(row interface{ Scan(...any) error }) (*Refund, error) {
	var r Refund
	var reason, fcode, fmsg, approvedBy sql.NullString
	var meta string
	var created, updated int64
	var succeeded, failed, canceled sql.NullInt64
	err := row.Scan(&r.ID, &r.MerchantID, &r.Livemode, &r.PaymentIntent, &r.Status, &r.AmountMinor, &r.Currency, &r.Provider,
		&reason, &meta, &r.Scenario, &fcode, &fmsg, &r.ProviderRef, &r.CreatedBy, &approvedBy,
		&created, &updated, &succeeded, &failed, &canceled)
	if err != nil {
		return nil, err
	}
	r.Object = "refund"
	r.Reason, r.FailureCode, r.FailureMessage, r.ApprovedBy = store.NullString(reason), store.NullString(fcode), store.NullString(fmsg), store.NullString(approvedBy)
	if err := json.Unmarshal([]byte(meta), &r.Metadata); err != nil {
		return nil, fmt.Errorf("refund %s metadata: %w", r.ID, err)
	}
	r.CreatedAt, r.UpdatedAt = store.FromMicros(created), store.FromMicros(updated)
	r.SucceededAt, r.FailedAt, r.CanceledAt = store.NullMicros(succeeded), store.NullMicros(failed), store.NullMicros(canceled)
	return &r, nil
}

// insert writes a new refund in its first status.
func insert(ctx context.Context, tx *store.Tx, r *Refund) error {
	meta, err := json.Marshal(r.Metadata)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO refunds (id, merchant_id, livemode, payment_intent, status, amount_minor, currency, provider,
		reason, metadata, scenario, failure_code, failure_message, provider_ref, created_by, approved_by,
		created_at, updated_at, succeeded_at, failed_at, canceled_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.MerchantID, r.Livemode, r.PaymentIntent, string(r.Status), r.AmountMinor, r.Currency, r.Provider,
		store.StringPtr(r.Reason), string(meta), r.Scenario, store.StringPtr(r.FailureCode), store.StringPtr(r.FailureMessage), r.ProviderRef,
		r.CreatedBy, store.StringPtr(r.ApprovedBy), store.Micros(r.CreatedAt), store.Micros(r.UpdatedAt),
		store.MicrosPtr(r.SucceededAt), store.MicrosPtr(r.FailedAt), store.MicrosPtr(r.CanceledAt))
	return err
}

// move writes r's new state as the compare-and-set of t: it succeeds only
// if the row is still in one of t's source states; otherwise the refund
// changed meanwhile and errLostRace is returned.
func move(ctx context.Context, tx *store.Tx, r *Refund, t transition) error {
	if r.Status != t.To {
		return fmt.Errorf("refunds: transition %s leads to %s, not %s", t.Name, t.To, r.Status)
	}
	res, err := tx.Exec(ctx, `UPDATE refunds SET status = ?, failure_code = ?, failure_message = ?, provider_ref = ?, approved_by = ?,
		updated_at = ?, succeeded_at = ?, failed_at = ?, canceled_at = ? WHERE id = ? AND `+t.Cond(),
		string(r.Status), store.StringPtr(r.FailureCode), store.StringPtr(r.FailureMessage), r.ProviderRef, store.StringPtr(r.ApprovedBy),
		store.Micros(r.UpdatedAt), store.MicrosPtr(r.SucceededAt), store.MicrosPtr(r.FailedAt), store.MicrosPtr(r.CanceledAt), r.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errLostRace
	}
	return nil
}

// Owner is the merchant and mode the refund belongs to (store.Owned).
func (r *Refund) Owner() (string, bool) { return r.MerchantID, r.Livemode }

// get reads one refund of the merchant in the mode, or 404, by primary key
// alone (store.Owned).
func get(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string) (*Refund, error) {
	r, err := scanRefund(q.QueryRow(ctx, "SELECT "+columns+" FROM refunds WHERE id = ?", id))
	if r, err = store.Owned(r, err, merchantID, livemode); store.IsNotFound(err) {
		return nil, errs.NotFound("refund", id)
	}
	return r, err
}

// getByID reads any refund by id (background jobs, callbacks).
func getByID(ctx context.Context, q store.Querier, id string) (*Refund, error) {
	r, err := scanRefund(q.QueryRow(ctx, "SELECT "+columns+" FROM refunds WHERE id = ?", id))
	if store.IsNotFound(err) {
		return nil, errs.NotFound("refund", id)
	}
	return r, err
}

// ListParams filters GET /v1/refunds.
type ListParams struct {
	PaymentIntent string
	Status        Status
}

// list returns a page of a merchant's refunds in a mode, newest first.
func list(ctx context.Context, q store.Querier, merchantID string, livemode bool, f ListParams, page pagination.Page) ([]*Refund, bool, error) {
	query := "SELECT " + columns + " FROM refunds WHERE merchant_id = ? AND livemode = ?"
	args := []any{merchantID, livemode}
	if f.PaymentIntent != "" {
		query += " AND payment_intent = ?"
		args = append(args, f.PaymentIntent)
	}
	if f.Status != "" {
		query += " AND status = ?"
		args = append(args, string(f.Status))
	}
	cond, cargs, tail := page.Clause("id")
	rows, err := q.Query(ctx, query+cond+tail, append(args, cargs...)...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []*Refund
	for rows.Next() {
		r, err := scanRefund(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, r.view())
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	out, more := pagination.Finish(page, out)
	return out, more, nil
}

// inChunk bounds one IN (...) list.
const inChunk = 500

// IntentsOf maps refund ids of the principal's merchant and mode to the
// payment intents they refund (for the settlement report); ids of another
// merchant or mode, or unknown, are absent from the map.
func (s *Service) IntentsOf(ctx context.Context, p auth.Principal, refundIDs []string) (map[string]string, error) {
	out := make(map[string]string, len(refundIDs))
	for start := 0; start < len(refundIDs); start += inChunk {
		part := refundIDs[start:min(start+inChunk, len(refundIDs))]
		ph, in := store.PaddedIn(part)
		rows, err := s.db.Query(ctx, "SELECT id, payment_intent FROM refunds WHERE merchant_id = ? AND livemode = ? AND id IN ("+
			ph+")", append([]any{p.MerchantID, p.Livemode}, in...)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id, pi string
			if err := rows.Scan(&id, &pi); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = pi
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// recentByPrincipal sums the refunds a principal made for a merchant in this
// mode since a time that went ahead without approval (the cumulative
// four-eyes rule): waiting, canceled and failed refunds moved no money on
// that principal's word alone and do not count.
func recentByPrincipal(ctx context.Context, q store.Querier, merchantID string, livemode bool, principal string, since time.Time) (int64, error) {
	var sum int64
	err := q.QueryRow(ctx, `SELECT COALESCE(SUM(amount_minor), 0) FROM refunds
		WHERE merchant_id = ? AND livemode = ? AND created_by = ? AND created_at >= ? AND approved_by IS NULL
		AND status NOT IN ('requires_approval', 'canceled', 'failed')`,
		merchantID, livemode, principal, store.Micros(since)).Scan(&sum)
	return sum, err
}
