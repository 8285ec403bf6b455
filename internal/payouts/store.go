package payouts

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/screening"
	"github.com/payd/payd/internal/store"
)

// payoutColumns is the column list scanPayout expects.
const payoutColumns = `id, merchant_id, livemode, status, amount, currency, provider, recipient_msisdn, recipient_account,
	recipient_name, description, metadata, reference, batch_id, batch_row, screening, scenario, needs_approval,
	compliance_cleared, failure_code, failure_message, created_by, approved_by, dispatch_attempts,
	created_at, updated_at, succeeded_at, failed_at, canceled_at`

type scanner interface{ Scan(...any) error }

// scanPayout reads one row selected with payoutColumns.
func scanPayout(row scanner) (*Payout, error) {
	var p Payout
	var msisdn, account, name, desc, batchID, scenario, fcode, fmsg, approvedBy sql.NullString
	var batchRow sql.NullInt64
	var meta, scr string
	var created, updated int64
	var succeeded, failed, canceled sql.NullInt64
	err := row.Scan(&p.ID, &p.MerchantID, &p.Livemode, &p.Status, &p.Amount, &p.Currency, &p.Provider, &msisdn, &account,
		&name, &desc, &meta, &p.Reference, &batchID, &batchRow, &scr, &scenario, &p.NeedsApproval,
		&p.ComplianceCleared, &fcode, &fmsg, &p.CreatedBy, &approvedBy, &p.dispatchAttempts,
		&created, &updated, &succeeded, &failed, &canceled)
	if err != nil {
		return nil, err
	}
	p.Object = "payout"
	p.RecipientMSISDN, p.RecipientAccount, p.RecipientName = store.NullString(msisdn), store.NullString(account), store.NullString(name)
	p.Description, p.BatchID, p.FailureCode, p.FailureMessage = store.NullString(desc), store.NullString(batchID), store.NullString(fcode), store.NullString(fmsg)
	p.ApprovedBy = store.NullString(approvedBy)
	p.Scenario = scenario.String
	p.BatchRow = int(batchRow.Int64)
	p.Metadata = map[string]string{}
	if meta != "" {
		if err := json.Unmarshal([]byte(meta), &p.Metadata); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal([]byte(scr), &p.Screening); err != nil {
		return nil, err
	}
	if p.Screening.Matches == nil {
		p.Screening.Matches = []screening.Match{}
	}
	p.CreatedAt, p.UpdatedAt = store.FromMicros(created), store.FromMicros(updated)
	p.SucceededAt, p.FailedAt = store.NullMicros(succeeded), store.NullMicros(failed)
	if canceled.Valid {
		p.CanceledAt = store.FromMicros(canceled.Int64)
	}
	return &p, nil
}

// Owner is the merchant and mode the payout belongs to (store.Owned).
func (p *Payout) Owner() (string, bool) { return p.MerchantID, p.Livemode }

// Owner is the merchant and mode the batch belongs to (store.Owned).
func (b *Batch) Owner() (string, bool) { return b.MerchantID, b.Livemode }

// getPayout reads one payout of the merchant in the mode; lock takes a row
// lock (PostgreSQL) for a read-then-write inside tx. It reads by primary key
// alone (store.Owned).
func getPayout(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string, lock bool) (*Payout, error) {
	query := "SELECT " + payoutColumns + " FROM payouts WHERE id = ?"
	if lock {
		query += q.Dialect().ForUpdate()
	}
	p, err := scanPayout(q.QueryRow(ctx, query, id))
	if p, err = store.Owned(p, err, merchantID, livemode); store.IsNotFound(err) {
		return nil, errs.NotFound("payout", id)
	}
	return p, err
}

// insertChunk bounds the rows of one multi-row INSERT (25 parameters a row).
const insertChunk = 400

// insertPayouts writes new payouts with multi-row inserts. dispatchAt is
// set for payouts a dispatcher should pick up; claimID marks payouts already
// claimed by the caller (sent inline).
func insertPayouts(ctx context.Context, tx *store.Tx, ps []*Payout, dispatch func(*Payout) (dispatchAt any, claimID any)) error {
	const cols = `id, merchant_id, livemode, status, amount, currency, provider, recipient_msisdn, recipient_account,
		recipient_name, description, metadata, reference, batch_id, batch_row, screening, scenario, needs_approval,
		created_by, approved_by, dispatch_at, dispatch_attempts, claim_id, created_at, updated_at`
	for start := 0; start < len(ps); start += insertChunk {
		end := min(start+insertChunk, len(ps))
		q := "INSERT INTO payouts (" + cols + ") VALUES " + store.Rows(end-start, 25)
		args := make([]any, 0, (end-start)*25)
		for i := start; i < end; i++ {
			p := ps[i]
			meta, err := json.Marshal(p.Metadata)
			if err != nil {
				return err
			}
			var batchRow, scenario any
			if p.BatchID != nil {
				batchRow = p.BatchRow
			}
			if p.Scenario != "" {
				scenario = p.Scenario
			}
			at, claim := dispatch(p)
			args = append(args, p.ID, p.MerchantID, p.Livemode, string(p.Status), p.Amount, p.Currency, p.Provider,
				store.StringPtr(p.RecipientMSISDN), store.StringPtr(p.RecipientAccount), store.StringPtr(p.RecipientName), store.StringPtr(p.Description),
				string(meta), p.Reference, store.StringPtr(p.BatchID), batchRow, p.Screening.json(), scenario, p.NeedsApproval,
				p.CreatedBy, store.StringPtr(p.ApprovedBy), at, p.dispatchAttempts, claim, store.Micros(p.CreatedAt), store.Micros(p.UpdatedAt))
		}
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// ListParams filters a payout list.
type ListParams struct {
	Status    Status
	Recipient string // recipient_msisdn or recipient_account, exactly
	BatchID   string
	Provider  string
}

func micros(t time.Time) int64 { return store.Micros(t) }
