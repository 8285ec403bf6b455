package payouts

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/timestamp"
)

// Batch is a bulk batch of either variant.
type Batch struct {
	ID               string
	MerchantID       string
	Livemode         bool
	Variant          string // VariantItems (po_bulk_) or VariantRows (batch_)
	Status           BatchStatus
	Currency         *string // variant B
	Description      *string
	RowCount         int
	TotalAmountMinor int64
	Succeeded        int
	Failed           int
	Canceled         int
	Pending          int // rows not yet terminal (held and approval-waiting included)
	Dispatched       bool
	CreatedBy        string
	ApprovedBy       *string
	ApprovedAt       *time.Time
	CanceledAt       *time.Time
	CompletedAt      *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// MarshalJSON renders the batch object of its variant:
// variant A with item_count, succeeded, failed, pending; variant B with
// row_count, total_amount_minor, created_by and, once approved, approved_at,
// approved_by and the rows_ counters. Both add object, livemode,
// description, canceled_at and completed_at, and a canceled count (rows
// canceled by review or with the batch), so the counters always add up to
// the row count.
func (b *Batch) MarshalJSON() ([]byte, error) {
	ts := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := timestamp.Format(*t)
		return &s
	}
	m := map[string]any{
		"id": b.ID, "object": "payout_batch", "livemode": b.Livemode, "status": b.Status, "description": b.Description,
		"created_at": timestamp.Format(b.CreatedAt), "canceled_at": ts(b.CanceledAt), "completed_at": ts(b.CompletedAt),
	}
	if b.Variant == VariantItems {
		m["item_count"] = b.RowCount
		m["succeeded"], m["failed"], m["canceled"], m["pending"] = b.Succeeded, b.Failed, b.Canceled, b.Pending
		m["created_by"] = b.CreatedBy
	} else {
		m["currency"] = deref(b.Currency)
		m["row_count"] = b.RowCount
		m["total_amount_minor"] = b.TotalAmountMinor
		m["created_by"] = b.CreatedBy
		if b.ApprovedAt != nil {
			m["approved_at"], m["approved_by"] = ts(b.ApprovedAt), b.ApprovedBy
			m["rows_succeeded"], m["rows_failed"], m["rows_canceled"], m["rows_pending"] = b.Succeeded, b.Failed, b.Canceled, b.Pending
		}
	}
	return json.Marshal(m)
}

const batchColumns = `id, merchant_id, livemode, variant, status, currency, description, row_count, total_amount_minor,
	rows_succeeded, rows_failed, rows_canceled, rows_pending, dispatched, created_by, approved_by, approved_at, canceled_at,
	completed_at, created_at, updated_at`

func scanBatch(row scanner) (*Batch, error) {
	var b Batch
	var currency, desc, approvedBy sql.NullString
	var approvedAt, canceledAt, completedAt sql.NullInt64
	var created, updated int64
	if err := row.Scan(&b.ID, &b.MerchantID, &b.Livemode, &b.Variant, &b.Status, &currency, &desc, &b.RowCount, &b.TotalAmountMinor,
		&b.Succeeded, &b.Failed, &b.Canceled, &b.Pending, &b.Dispatched, &b.CreatedBy, &approvedBy, &approvedAt, &canceledAt,
		&completedAt, &created, &updated); err != nil {
		return nil, err
	}
	b.Currency, b.Description, b.ApprovedBy = store.NullString(currency), store.NullString(desc), store.NullString(approvedBy)
	b.ApprovedAt, b.CanceledAt, b.CompletedAt = store.NullMicros(approvedAt), store.NullMicros(canceledAt), store.NullMicros(completedAt)
	b.CreatedAt, b.UpdatedAt = store.FromMicros(created), store.FromMicros(updated)
	return &b, nil
}

// getBatch reads one batch of the merchant in the mode, by primary key
// alone (store.Owned).
func getBatch(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string, lock bool) (*Batch, error) {
	query := "SELECT " + batchColumns + " FROM payout_batches WHERE id = ?"
	if lock {
		query += q.Dialect().ForUpdate()
	}
	b, err := scanBatch(q.QueryRow(ctx, query, id))
	if b, err = store.Owned(b, err, merchantID, livemode); store.IsNotFound(err) {
		return nil, errs.NotFound("payout batch", id)
	}
	return b, err
}

// delta is a change of a batch's counters.
type delta struct {
	succeeded, failed, canceled, pending int
}

// batchDelta applies d to a batch's counters in tx (the transaction of the
// rows' transitions, so the counters are always exact), completes the batch
// when no row is left pending (emitting payout_batch.completed), and takes
// a completed batch back to processing when a retry made a row pending.
func (s *Service) batchDelta(ctx context.Context, tx *store.Tx, batchID string, d delta) error {
	now := micros(tx.Now())
	if _, err := tx.Exec(ctx, `UPDATE payout_batches SET rows_succeeded = rows_succeeded + ?, rows_failed = rows_failed + ?,
		rows_canceled = rows_canceled + ?, rows_pending = rows_pending + ?, updated_at = ? WHERE id = ?`,
		d.succeeded, d.failed, d.canceled, d.pending, now, batchID); err != nil {
		return err
	}
	if d.pending > 0 {
		_, err := tx.Exec(ctx, `UPDATE payout_batches SET status = 'processing', completed_at = NULL WHERE id = ? AND `+
			batchCASFrom(BatchProcessing, BatchCompleted), batchID)
		return err
	}
	res, err := tx.Exec(ctx, `UPDATE payout_batches SET status = 'completed', completed_at = ? WHERE id = ? AND rows_pending = 0 AND `+
		batchCASFrom(BatchCompleted, BatchProcessing), now, batchID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		b, err := scanBatch(tx.QueryRow(ctx, "SELECT "+batchColumns+" FROM payout_batches WHERE id = ?", batchID))
		if err != nil {
			return err
		}
		_, err = events.Emit(ctx, tx, b.MerchantID, b.Livemode, "payout_batch.completed", "payout_batch", b.ID, b)
		return err
	}
	return nil
}
