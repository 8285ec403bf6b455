package disputes

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
)

// errLostRace means another request moved the dispute first.
var errLostRace = errors.New("disputes: the dispute changed under this request")

// columns is the column list scanDispute expects.
const columns = `id, merchant_id, livemode, payment_intent, status, reason, amount_minor, currency, provider, provider_ref,
	evidence, metadata, evidence_due_by, submitted_at, created_at, updated_at, closed_at`

// scanDispute reads one row selected with columns.
func scanDispute(row interface{ Scan(...any) error }) (*Dispute, error) {
	var d Dispute
	var evidence, meta string
	var due, created, updated int64
	var submitted, closed sql.NullInt64
	err := row.Scan(&d.ID, &d.MerchantID, &d.Livemode, &d.PaymentIntent, &d.Status, &d.Reason, &d.AmountMinor, &d.Currency,
		&d.Provider, &d.ProviderRef, &evidence, &meta, &due, &submitted, &created, &updated, &closed)
	if err != nil {
		return nil, err
	}
	d.Object = "dispute"
	if err := json.Unmarshal([]byte(evidence), &d.Evidence); err != nil {
		return nil, fmt.Errorf("dispute %s evidence: %w", d.ID, err)
	}
	if err := json.Unmarshal([]byte(meta), &d.Metadata); err != nil {
		return nil, fmt.Errorf("dispute %s metadata: %w", d.ID, err)
	}
	d.EvidenceDueBy, d.CreatedAt, d.UpdatedAt = store.FromMicros(due), store.FromMicros(created), store.FromMicros(updated)
	d.SubmittedAt, d.ClosedAt = store.NullMicros(submitted), store.NullMicros(closed)
	return &d, nil
}

func marshal(d *Dispute) (evidence, meta string, err error) {
	e, err := json.Marshal(d.Evidence)
	if err != nil {
		return "", "", err
	}
	md := d.Metadata
	if md == nil {
		md = map[string]string{}
	}
	m, err := json.Marshal(md)
	return string(e), string(m), err
}

// insert writes a new dispute in needs_response.
func insert(ctx context.Context, tx *store.Tx, d *Dispute) error {
	evidence, meta, err := marshal(d)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO disputes (id, merchant_id, livemode, payment_intent, status, reason, amount_minor, currency,
		provider, provider_ref, evidence, metadata, evidence_due_by, submitted_at, created_at, updated_at, closed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.MerchantID, d.Livemode, d.PaymentIntent, string(d.Status), d.Reason, d.AmountMinor, d.Currency,
		d.Provider, d.ProviderRef, evidence, meta, store.Micros(d.EvidenceDueBy), store.MicrosPtr(d.SubmittedAt),
		store.Micros(d.CreatedAt), store.Micros(d.UpdatedAt), store.MicrosPtr(d.ClosedAt))
	return err
}

// move writes d's new state as the compare-and-set of t: it succeeds only if
// the row is still in one of t's source states (and, for the merchant's
// evidence moves, before evidence_due_by: the deadline is in the guard too);
// otherwise errLostRace.
func move(ctx context.Context, tx *store.Tx, d *Dispute, t transition) error {
	if d.Status != t.To {
		return fmt.Errorf("disputes: transition %s leads to %s, not %s", t.Name, t.To, d.Status)
	}
	evidence, meta, err := marshal(d)
	if err != nil {
		return err
	}
	q := `UPDATE disputes SET status = ?, evidence = ?, metadata = ?, submitted_at = ?, updated_at = ?, closed_at = ?
		WHERE id = ? AND ` + t.Cond()
	args := []any{string(d.Status), evidence, meta, store.MicrosPtr(d.SubmittedAt), store.Micros(d.UpdatedAt), store.MicrosPtr(d.ClosedAt), d.ID}
	if t.Name == save.Name || t.Name == submit.Name {
		q += " AND evidence_due_by > ?"
		args = append(args, store.Micros(d.UpdatedAt))
	}
	res, err := tx.Exec(ctx, q, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errLostRace
	}
	return nil
}

// get reads one dispute of the merchant in the mode, or 404, by primary key
// alone (store.Owned).
func get(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string) (*Dispute, error) {
	d, err := scanDispute(q.QueryRow(ctx, "SELECT "+columns+" FROM disputes WHERE id = ?", id))
	if d, err = store.Owned(d, err, merchantID, livemode); store.IsNotFound(err) {
		return nil, errs.NotFound("dispute", id)
	}
	return d, err
}

// getByID reads any dispute by id (background jobs).
func getByID(ctx context.Context, q store.Querier, id string) (*Dispute, error) {
	d, err := scanDispute(q.QueryRow(ctx, "SELECT "+columns+" FROM disputes WHERE id = ?", id))
	if store.IsNotFound(err) {
		return nil, errs.NotFound("dispute", id)
	}
	return d, err
}

// byIntent reads the dispute of a payment intent (there is at most one).
func byIntent(ctx context.Context, q store.Querier, intentID string) (*Dispute, error) {
	d, err := scanDispute(q.QueryRow(ctx, "SELECT "+columns+" FROM disputes WHERE payment_intent = ?", intentID))
	if store.IsNotFound(err) {
		return nil, errs.NotFound("dispute", intentID)
	}
	return d, err
}

// ListParams filters GET /v1/disputes.
type ListParams struct {
	PaymentIntent string
	Status        Status
}

// list returns a page of a merchant's disputes in a mode, newest first.
func list(ctx context.Context, q store.Querier, merchantID string, livemode bool, f ListParams, page pagination.Page) ([]*Dispute, bool, error) {
	query := "SELECT " + columns + " FROM disputes WHERE merchant_id = ? AND livemode = ?"
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
	var out []*Dispute
	for rows.Next() {
		d, err := scanDispute(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, d.view())
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	out, more := pagination.Finish(page, out)
	return out, more, nil
}
