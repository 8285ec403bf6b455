package banking

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/payd/payd/internal/banking/iso20022"
	"github.com/payd/payd/internal/store"
)

// transferColumns is the column list scanTransfer reads.
const transferColumns = `id, livemode, uetr, msg_id, msg_created_at, msg_created_at_text, end_to_end_id, status, reason_code, reason_text,
	reason_detail, amount_minor, currency, debtor_name, debtor_account, debtor_agent, creditor_name, creditor_account,
	creditor_agent, remittance_info, debtor_merchant_id, creditor_merchant_id, returned_amount_minor, screening,
	created_by, reviewed_by, review_note, reviewed_at, created_at, settled_at`

func scanTransfer(row interface{ Scan(...any) error }) (*Transfer, error) {
	var t Transfer
	var msgCreated, reviewedAt, settledAt sql.NullInt64
	var code, text, detail, remit, creditorMerchant, screeningJSON, reviewedBy, note, msgCreatedText sql.NullString
	var created int64
	err := row.Scan(&t.ID, &t.Livemode, &t.UETR, &t.MsgID, &msgCreated, &msgCreatedText, &t.EndToEndID, &t.Status, &code, &text,
		&detail, &t.AmountMinor, &t.Currency, &t.Debtor.Name, &t.Debtor.Account, &t.DebtorAgent, &t.Creditor.Name,
		&t.Creditor.Account, &t.CreditorAgent, &remit, &t.DebtorMerchantID, &creditorMerchant, &t.ReturnedAmountMinor,
		&screeningJSON, &t.CreatedBy, &reviewedBy, &note, &reviewedAt, &created, &settledAt)
	if err != nil {
		return nil, err
	}
	if msgCreated.Valid {
		t.MsgCreatedAt = store.FromMicros(msgCreated.Int64)
	}
	t.MsgCreatedAtText = msgCreatedText.String
	if code.Valid {
		t.Reason = iso20022.StatusReason{Code: code.String, Text: text.String, Detail: detail.String}
	}
	if remit.Valid {
		s := remit.String
		t.RemittanceInfo = &s
	}
	t.CreditorMerchantID = creditorMerchant.String
	if screeningJSON.Valid && screeningJSON.String != "" {
		var rec ScreeningRecord
		if err := json.Unmarshal([]byte(screeningJSON.String), &rec); err == nil {
			t.Screening = &rec
		}
	}
	t.ReviewedBy, t.ReviewNote = reviewedBy.String, note.String
	t.ReviewedAt = store.NullMicros(reviewedAt)
	t.CreatedAt = store.FromMicros(created)
	t.SettledAt = store.NullMicros(settledAt)
	return &t, nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// insertTransfer writes a new transfer row; it reports false when the UETR
// is already taken in this mode (nothing is written then).
func insertTransfer(ctx context.Context, tx *store.Tx, t *Transfer, messageID string) (bool, error) {
	var msgCreated, settled, screeningJSON, remit any
	if !t.MsgCreatedAt.IsZero() {
		msgCreated = store.Micros(t.MsgCreatedAt)
	}
	if t.SettledAt != nil {
		settled = store.Micros(*t.SettledAt)
	}
	if t.Screening != nil {
		b, err := json.Marshal(t.Screening)
		if err != nil {
			return false, err
		}
		screeningJSON = string(b)
	}
	if t.RemittanceInfo != nil {
		remit = *t.RemittanceInfo
	}
	now := store.Micros(tx.Now())
	res, err := tx.Exec(ctx, `INSERT INTO transfers (id, livemode, uetr, message_id, msg_id, msg_created_at, msg_created_at_text, end_to_end_id,
		status, reason_code, reason_text, reason_detail, amount_minor, currency, debtor_name, debtor_account, debtor_agent,
		creditor_name, creditor_account, creditor_agent, remittance_info, debtor_merchant_id, creditor_merchant_id,
		returned_amount_minor, screening, created_by, created_at, settled_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		t.ID, t.Livemode, t.UETR, nullString(messageID), t.MsgID, msgCreated, nullString(t.MsgCreatedAtText), t.EndToEndID,
		t.Status, nullString(t.Reason.Code), nullString(t.Reason.Text), nullString(t.Reason.Detail), t.AmountMinor, t.Currency,
		t.Debtor.Name, t.Debtor.Account, t.DebtorAgent, t.Creditor.Name, t.Creditor.Account, t.CreditorAgent, remit,
		t.DebtorMerchantID, nullString(t.CreditorMerchantID), screeningJSON, t.CreatedBy, now, settled, now)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// uetrTaken reports whether a transfer with this UETR exists in the mode.
func uetrTaken(ctx context.Context, q store.Querier, livemode bool, uetr string) (bool, error) {
	var one int
	err := q.QueryRow(ctx, "SELECT 1 FROM transfers WHERE livemode = ? AND uetr = ?", livemode, uetr).Scan(&one)
	if store.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// getTransfer loads a transfer by UETR as one of its agents sees it: another
// merchant's transfer, or one in the other mode, is not found. lock takes a
// row lock (PostgreSQL) for a read-modify-write.
func getTransfer(ctx context.Context, q store.Querier, merchantID string, livemode bool, uetr string, lock bool) (*Transfer, error) {
	query := "SELECT " + transferColumns + ` FROM transfers WHERE livemode = ? AND uetr = ?
		AND (debtor_merchant_id = ? OR creditor_merchant_id = ?)`
	if lock {
		query += q.Dialect().ForUpdate()
	}
	t, err := scanTransfer(q.QueryRow(ctx, query, livemode, uetr, merchantID, merchantID))
	if err != nil {
		return nil, err
	}
	if err := loadReturns(ctx, q, t); err != nil {
		return nil, err
	}
	return t, nil
}

// getTransferByID loads a transfer by its internal id (background jobs).
func getTransferByID(ctx context.Context, q store.Querier, id string) (*Transfer, error) {
	t, err := scanTransfer(q.QueryRow(ctx, "SELECT "+transferColumns+" FROM transfers WHERE id = ?", id))
	if err != nil {
		return nil, err
	}
	if err := loadReturns(ctx, q, t); err != nil {
		return nil, err
	}
	return t, nil
}

func loadReturns(ctx context.Context, q store.Querier, t *Transfer) error {
	rows, err := q.Query(ctx, `SELECT id, kind, source, msg_id, amount_minor, reason_code, reason_text, created_by, created_at
		FROM transfer_returns WHERE transfer_id = ? ORDER BY id`, t.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	t.Returns = nil
	for rows.Next() {
		var r Return
		var msgID sql.NullString
		var created int64
		if err := rows.Scan(&r.ID, &r.Kind, &r.Source, &msgID, &r.AmountMinor, &r.ReasonCode, &r.ReasonText, &r.CreatedBy, &created); err != nil {
			return err
		}
		r.MsgID = msgID.String
		r.CreatedAt = store.FromMicros(created)
		t.Returns = append(t.Returns, r)
	}
	return rows.Err()
}
