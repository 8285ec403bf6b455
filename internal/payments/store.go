package payments

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// record is an intent as stored: the API object plus what only payd and the
// adapter see.
type record struct {
	Intent
	flow          providers.Flow
	scenario      string
	pageStep      string
	pageTokenHash string
	providerRef   string
	version       int64
	updatedAt     time.Time
	idemKey       string // card-present intents: the terminal request's Idempotency-Key
	// clockCreatedAt is the test clock's time the intent was made at (an
	// intent a test clock's advance makes, for billing): shown as its
	// created_at. CreatedAt stays the real time (expiry, lists, retention).
	clockCreatedAt *time.Time
}

// rail is the sandbox rail of the intent: the card gateway for card payments.
func (r *record) rail() string {
	if r.flow == providers.FlowCardPage {
		return providers.CardGatewayCNP
	}
	return r.Provider
}

// payment is what the adapter is told about the intent.
func (r *record) payment() providers.Payment {
	p := providers.Payment{ID: r.ID, MerchantID: r.MerchantID, Livemode: r.Livemode, Provider: r.Provider, Rail: r.rail(),
		Flow: r.flow, AmountMinor: r.AmountMinor, Currency: r.Currency, Method: r.Metadata[metaWalletDMethod],
		Scenario: r.scenario, ProviderRef: r.providerRef, PageStep: r.pageStep, CreatedAt: r.CreatedAt,
		ManualCapture: r.CaptureMethod == CaptureManual}
	if r.CustomerMSISDN != nil {
		// Stored as sent and checked at creation; the provider's form is
		// derived again the same way.
		p.MSISDN, _ = ProviderMSISDN(r.Provider, *r.CustomerMSISDN)
	}
	if r.Description != nil {
		p.Description = *r.Description
	}
	if r.ReturnURL != nil {
		p.ReturnURL = *r.ReturnURL
	}
	return p
}

// view is the intent as the API shows it: times at second precision.
func (r *record) view() Intent {
	in := r.Intent
	in.Object = "payment_intent"
	in.CaptureMethod = captureMethodOf(r)
	in.Refunded = in.AmountCapturedMinor > 0 && in.AmountRefundedMinor >= in.AmountCapturedMinor
	in.CreatedAt = in.CreatedAt.Truncate(time.Second)
	if r.clockCreatedAt != nil {
		in.CreatedAt = r.clockCreatedAt.UTC().Truncate(time.Second)
	}
	if in.SucceededAt != nil {
		t := in.SucceededAt.Truncate(time.Second)
		in.SucceededAt = &t
	}
	if in.CanceledAt != nil {
		t := in.CanceledAt.Truncate(time.Second)
		in.CanceledAt = &t
	}
	if in.Metadata == nil {
		in.Metadata = map[string]string{}
	}
	return in
}

// tokenMatches compares a page token with the stored hash in constant time.
func (r *record) tokenMatches(token string) bool {
	if r.pageTokenHash == "" || token == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(r.pageTokenHash)) == 1
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

const columns = `id, merchant_id, livemode, status, amount_minor, amount_captured_minor, amount_refunded_minor, currency, provider, flow,
	customer_msisdn, description, metadata, return_url, next_action, last_error, payment_method_details,
	scenario, page_step, page_token_hash, provider_ref, version, created_at, updated_at, succeeded_at, canceled_at,
	cancellation_reason, capture_method, amount_capturable_minor, disputed, invoice_id, clock_created_at`

// viewColumns are the columns of an Intent, in scanView's order: what a
// read that only answers the intent (GET /v1/payment_intents/{id}, the
// hosted invoice page's look at its intent) selects; its merchant and mode
// are the read's condition, not columns. Each
// column a read selects costs its column name and declared type on SQLite,
// and its conversion on both engines.
const viewColumns = `id, status, amount_minor, amount_captured_minor, amount_refunded_minor, currency, provider,
	customer_msisdn, description, metadata, return_url, next_action, last_error, payment_method_details,
	created_at, succeeded_at, canceled_at, cancellation_reason, capture_method, amount_capturable_minor, disputed, invoice_id, clock_created_at`

// scan reads a row of columns.
func scan(row interface{ Scan(...any) error }) (*record, error) { return scanRecord(row, true) }

// scanView reads a row of viewColumns: a record whose Intent view shows,
// without what only payd and the adapter use, nor its merchant and mode
// (the caller's).
func scanView(row interface{ Scan(...any) error }) (*record, error) { return scanRecord(row, false) }

// scanTemps holds a row's stored forms on their way to a record: allocated
// with the record, in one allocation, rather than each on its own.
type scanTemps struct {
	msisdn, desc, retURL, next, lastErr, details, tokenHash, invoice, reason sql.NullString
	metadata                                                                 string
	created, updated                                                         int64
	succeeded, canceled, onClock                                             sql.NullInt64
}

func scanRecord(row interface{ Scan(...any) error }, full bool) (*record, error) {
	both := &struct {
		record
		scanTemps
	}{}
	r, t := &both.record, &both.scanTemps
	var err error
	if full {
		err = row.Scan(&r.ID, &r.MerchantID, &r.Livemode, &r.Status, &r.AmountMinor, &r.AmountCapturedMinor, &r.AmountRefundedMinor, &r.Currency, &r.Provider, &r.flow,
			&t.msisdn, &t.desc, &t.metadata, &t.retURL, &t.next, &t.lastErr, &t.details,
			&r.scenario, &r.pageStep, &t.tokenHash, &r.providerRef, &r.version, &t.created, &t.updated, &t.succeeded, &t.canceled,
			&t.reason, &r.CaptureMethod, &r.AmountCapturableMinor, &r.Disputed, &t.invoice, &t.onClock)
	} else {
		err = row.Scan(&r.ID, &r.Status, &r.AmountMinor, &r.AmountCapturedMinor, &r.AmountRefundedMinor, &r.Currency, &r.Provider,
			&t.msisdn, &t.desc, &t.metadata, &t.retURL, &t.next, &t.lastErr, &t.details,
			&t.created, &t.succeeded, &t.canceled, &t.reason, &r.CaptureMethod, &r.AmountCapturableMinor, &r.Disputed, &t.invoice, &t.onClock)
	}
	if err != nil {
		return nil, err
	}
	msisdn, desc, retURL, next, lastErr, details, tokenHash, invoice, reason := t.msisdn, t.desc, t.retURL, t.next, t.lastErr, t.details, t.tokenHash, t.invoice, t.reason
	metadata, created, updated, succeeded, canceled, onClock := t.metadata, t.created, t.updated, t.succeeded, t.canceled, t.onClock
	r.InvoiceID = invoice.String
	r.CustomerMSISDN = store.NullString(msisdn)
	r.Description = store.NullString(desc)
	r.ReturnURL = store.NullString(retURL)
	r.pageTokenHash = tokenHash.String
	r.CancellationReason = store.NullString(reason)
	if metadata == "{}" {
		// What most intents hold: no need for the decoder.
		r.Metadata = map[string]string{}
	} else if err := json.Unmarshal([]byte(metadata), &r.Metadata); err != nil {
		return nil, fmt.Errorf("intent %s metadata: %w", r.ID, err)
	}
	if next.Valid {
		r.NextAction = &NextAction{}
		if err := decodeNextAction(next.String, r.NextAction); err != nil {
			return nil, fmt.Errorf("intent %s next_action: %w", r.ID, err)
		}
	}
	if lastErr.Valid {
		r.LastError = &LastError{}
		if err := json.Unmarshal([]byte(lastErr.String), r.LastError); err != nil {
			return nil, fmt.Errorf("intent %s last_error: %w", r.ID, err)
		}
	}
	if details.Valid {
		raw := json.RawMessage(details.String)
		r.PaymentMethodDetails = &raw
	}
	r.CreatedAt = store.FromMicros(created)
	if full {
		r.updatedAt = store.FromMicros(updated)
	}
	r.SucceededAt = store.NullMicros(succeeded)
	r.CanceledAt = store.NullMicros(canceled)
	r.clockCreatedAt = store.NullMicros(onClock)
	return r, nil
}

// mutable is the stored form of the columns a transition may change.
func (r *record) mutable() []any { return r.appendMutable(make([]any, 0, mutableCols+4)) }

// mutableCols is how many values appendMutable appends.
const mutableCols = 14

// appendMutable appends the values of mutable to dst.
func (r *record) appendMutable(dst []any) []any {
	var next, lastErr, details any
	if r.NextAction != nil {
		b, _ := json.Marshal(r.NextAction)
		next = string(b)
	}
	if r.LastError != nil {
		b, _ := json.Marshal(r.LastError)
		lastErr = string(b)
	}
	if r.PaymentMethodDetails != nil {
		details = string(*r.PaymentMethodDetails)
	}
	var tokenHash any
	if r.pageTokenHash != "" {
		tokenHash = r.pageTokenHash
	}
	return append(dst, string(r.Status), r.AmountCapturedMinor, next, lastErr, details, r.scenario, r.pageStep, tokenHash, r.providerRef,
		store.Micros(r.updatedAt), store.MicrosPtr(r.SucceededAt), store.MicrosPtr(r.CanceledAt),
		r.CancellationReason, r.AmountCapturableMinor)
}

// insert writes a new intent. Its id is fresh and its Idempotency-Key
// claimed by the request, so the insert fails only when the transaction
// does: it goes to the database with the transaction's next statement.
func insert(ctx context.Context, tx *store.Tx, r *record) error {
	return insertWith(tx.ExecLater, ctx, r)
}

// insertNow writes a new intent at once, for a caller that handles a
// conflict on its key (a card-present retry racing the first).
func insertNow(ctx context.Context, tx *store.Tx, r *record) error {
	return insertWith(func(ctx context.Context, q string, args ...any) error {
		_, err := tx.Exec(ctx, q, args...)
		return err
	}, ctx, r)
}

func insertWith(exec func(ctx context.Context, q string, args ...any) error, ctx context.Context, r *record) error {
	return exec(ctx, insertIntents+insertIntentRow, insertArgs(r)...)
}

// insertIntents is the INSERT of new intents up to its VALUES, each row
// insertIntentRow with insertArgs (insert and insertMany).
const insertIntents = `INSERT INTO payment_intents (id, merchant_id, livemode, amount_minor, currency, provider, flow,
		customer_msisdn, description, metadata, return_url, idempotency_key, invoice_id, created_at,
		status, amount_captured_minor, next_action, last_error, payment_method_details, scenario, page_step, page_token_hash, provider_ref,
		updated_at, succeeded_at, canceled_at, cancellation_reason, amount_capturable_minor, capture_method, clock_created_at, version) VALUES `

const insertIntentRow = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)"

// insertArgs are a new intent's values for insertIntentRow.
func insertArgs(r *record) []any {
	md, _ := json.Marshal(r.Metadata)
	// One slice of the row's length: appending the mutable values to a
	// shorter one copied it twice per create.
	args := make([]any, 0, 14+mutableCols+2)
	args = append(args, r.ID, r.MerchantID, r.Livemode, r.AmountMinor, r.Currency, r.Provider, string(r.flow),
		r.CustomerMSISDN, r.Description, string(md), r.ReturnURL, nullable(r.idemKey, ""), nullable(r.InvoiceID, ""), store.Micros(r.CreatedAt))
	return append(r.appendMutable(args), captureMethodOf(r), store.MicrosPtr(r.clockCreatedAt))
}

// captureMethodOf is the stored capture method: automatic unless manual.
func captureMethodOf(r *record) string {
	if r.CaptureMethod == CaptureManual {
		return CaptureManual
	}
	return CaptureAutomatic
}

// move writes r's new state as the compare-and-set of t: it succeeds only
// if the row is still in one of t's source states at the version read.
func move(ctx context.Context, tx *store.Tx, r *record, t transition) error {
	if r.Status != t.To {
		return fmt.Errorf("payments: transition %s leads to %s, not %s", t.Name, t.To, r.Status)
	}
	args := append(append(r.mutable(), r.ID, r.version), t.Args()...)
	// The compare-and-set's count is checked when the statement's answer
	// comes back: on PostgreSQL with the transaction's next statement that
	// needs one (the ledger posting's balance updates on a success), a
	// round trip fewer; a lost race then fails the InTx that ran it, which
	// rolls back what it wrote meanwhile.
	err := tx.ExecLaterExpect(ctx, 1, errLostRace, `UPDATE payment_intents SET status = ?, amount_captured_minor = ?, next_action = ?, last_error = ?,
		payment_method_details = ?, scenario = ?, page_step = ?, page_token_hash = ?, provider_ref = ?, updated_at = ?,
		succeeded_at = ?, canceled_at = ?, cancellation_reason = ?, amount_capturable_minor = ?, version = version + 1
		WHERE id = ? AND version = ? AND status IN (`+store.Placeholders(len(t.From))+`)`, args...)
	if err != nil {
		return err
	}
	r.version++
	return nil
}

func nullable(s, empty string) any {
	if s == empty {
		return nil
	}
	return s
}

// Owner is the merchant and mode the intent belongs to (store.Owned).
func (r *record) Owner() (string, bool) { return r.MerchantID, r.Livemode }

// load returns an intent of the principal's merchant and mode, or 404.
//
// It reads by primary key alone and checks the owner here: PostgreSQL's
// cached (generic) plan for "id = ? AND merchant_id = ? AND livemode = ?"
// chose the merchant's index on a table whose statistics were not gathered
// yet, and then read every intent of the merchant to find one (1.4 ms per
// confirm after a few thousand intents, until autovacuum's first ANALYZE).
func load(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string) (*record, error) {
	r, err := scan(q.QueryRow(ctx, "SELECT "+columns+" FROM payment_intents WHERE id = ?", id))
	if r, err = store.Owned(r, err, merchantID, livemode); store.IsNotFound(err) {
		return nil, errs.NotFound("payment_intent", id)
	}
	return r, err
}

// loadView is load for a caller that only answers the intent (view): it
// reads viewColumns of the principal's merchant's and mode's intent (the
// condition keeps the isolation in the query itself), not what only payd
// and the adapter use.
func loadView(ctx context.Context, db *store.DB, merchantID string, livemode bool, id string) (*record, error) {
	r, err := scanView(db.QueryRowByKey(ctx, "SELECT "+viewColumns+" FROM payment_intents WHERE id = ? AND merchant_id = ? AND livemode = ?",
		id, merchantID, livemode))
	if store.IsNotFound(err) {
		return nil, errs.NotFound("payment_intent", id)
	}
	if err != nil {
		return nil, err
	}
	r.MerchantID, r.Livemode = merchantID, livemode
	return r, nil
}

// loadByID returns any intent by id: for the hosted pages (whose token is
// the credential) and background jobs.
func loadByID(ctx context.Context, q store.Querier, id string) (*record, error) {
	r, err := scan(q.QueryRow(ctx, "SELECT "+columns+" FROM payment_intents WHERE id = ?", id))
	if store.IsNotFound(err) {
		return nil, errs.NotFound("payment_intent", id)
	}
	return r, err
}
