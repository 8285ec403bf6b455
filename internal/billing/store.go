package billing

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/store"
)

// row is what Scan needs from *sql.Row and *sql.Rows.
type row interface{ Scan(...any) error }

// scanAll reads every row of a query with scan and closes rows; err is the
// query's own, so a call can wrap the query directly.
func scanAll[T any](rows *sql.Rows, err error, scan func(row) (*T, error)) ([]*T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func nullInt(n sql.NullInt64) *int {
	if !n.Valid {
		return nil
	}
	v := int(n.Int64)
	return &v
}

// inList renders "?, ?, ?" for a status set and its arguments.
func inList[T ~string](states []T) (string, []any) {
	ph := make([]string, len(states))
	args := make([]any, len(states))
	for i, s := range states {
		ph[i], args[i] = "?", string(s)
	}
	return strings.Join(ph, ", "), args
}

// --- test clocks

const clockColumns = "id, merchant_id, livemode, name, frozen_time, status, version, created_at"

func scanClock(r row) (*TestClock, error) {
	var c TestClock
	var name sql.NullString
	var frozen, created int64
	if err := r.Scan(&c.ID, &c.MerchantID, &c.Livemode, &name, &frozen, &c.Status, &c.version, &created); err != nil {
		return nil, err
	}
	c.Object, c.Name, c.CreatedAt = "test_clock", store.NullString(name), store.FromMicros(created).Truncate(time.Second)
	c.FrozenTime = store.FromMicros(frozen).Unix()
	return &c, nil
}

func loadClock(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string) (*TestClock, error) {
	c, err := scanClock(q.QueryRow(ctx, "SELECT "+clockColumns+" FROM test_clocks WHERE id = ? AND merchant_id = ? AND livemode = ?", id, merchantID, livemode))
	if store.IsNotFound(err) {
		return nil, errs.NotFound("test_clock", id)
	}
	return c, err
}

// clockTime is the clock's frozen time.
func (c *TestClock) clockTime() time.Time { return time.Unix(c.FrozenTime, 0).UTC() }

// --- customers

const customerColumns = "id, merchant_id, livemode, name, email, phone, metadata, default_payment, test_clock_id, created_at, clock_created_at"

func scanCustomer(r row) (*Customer, error) {
	var c Customer
	var email, phone, dp, clock sql.NullString
	var md string
	var created int64
	var clockCreated sql.NullInt64
	if err := r.Scan(&c.ID, &c.MerchantID, &c.Livemode, &c.Name, &email, &phone, &md, &dp, &clock, &created, &clockCreated); err != nil {
		return nil, err
	}
	c.Object, c.Email, c.Phone, c.TestClock = "customer", store.NullString(email), store.NullString(phone), store.NullString(clock)
	c.CreatedAt = createdOnClock(store.FromMicros(created).Truncate(time.Second), store.NullMicros(clockCreated))
	if err := json.Unmarshal([]byte(md), &c.Metadata); err != nil {
		return nil, fmt.Errorf("customer %s metadata: %w", c.ID, err)
	}
	if dp.Valid {
		c.DefaultPayment = &DefaultPayment{}
		if err := json.Unmarshal([]byte(dp.String), c.DefaultPayment); err != nil {
			return nil, fmt.Errorf("customer %s default_payment: %w", c.ID, err)
		}
	}
	return &c, nil
}

func loadCustomer(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string) (*Customer, error) {
	c, err := scanCustomer(q.QueryRow(ctx, "SELECT "+customerColumns+" FROM customers WHERE id = ? AND merchant_id = ? AND livemode = ? AND deleted_at IS NULL",
		id, merchantID, livemode))
	if store.IsNotFound(err) {
		return nil, errs.NotFound("customer", id)
	}
	return c, err
}

func dpText(dp *DefaultPayment) any {
	if dp == nil {
		return nil
	}
	return jsonText(dp)
}

// --- subscriptions

const subColumns = `id, merchant_id, livemode, customer_id, test_clock_id, status, currency, interval_unit, interval_count,
	collection_method, days_until_due, metadata, items, pending_lines, billing_anchor, trial_end, period_number,
	current_period_start, current_period_end, cancel_at_period_end, canceled_at, ended_at, latest_invoice, version, created_at, start_date`

func scanSub(r row) (*Subscription, error) {
	var s Subscription
	var clock, latest sql.NullString
	var due sql.NullInt64
	var md, items, pending string
	var anchor, start, end, created, startDate int64
	var trialEnd, canceledAt, endedAt sql.NullInt64
	if err := r.Scan(&s.ID, &s.MerchantID, &s.Livemode, &s.Customer, &clock, &s.Status, &s.Currency, &s.Interval, &s.IntervalCount,
		&s.CollectionMethod, &due, &md, &items, &pending, &anchor, &trialEnd, &s.periodNumber,
		&start, &end, &s.CancelAtPeriodEnd, &canceledAt, &endedAt, &latest, &s.version, &created, &startDate); err != nil {
		return nil, err
	}
	s.Object, s.TestClock, s.LatestInvoice, s.DaysUntilDue = "subscription", store.NullString(clock), store.NullString(latest), nullInt(due)
	s.BillingCycleAnchor, s.CurrentPeriodStart, s.CurrentPeriodEnd = store.FromMicros(anchor), store.FromMicros(start), store.FromMicros(end)
	s.CreatedAt, s.StartDate = store.FromMicros(created).Truncate(time.Second), store.FromMicros(startDate)
	if s.TestClock != nil {
		s.CreatedAt = createdOnClock(s.CreatedAt, &s.StartDate) // a subscription starts when it is made
	}
	s.TrialEnd, s.CanceledAt, s.EndedAt = store.NullMicros(trialEnd), store.NullMicros(canceledAt), store.NullMicros(endedAt)
	for _, f := range []struct {
		src string
		dst any
	}{{md, &s.Metadata}, {items, &s.Items}, {pending, &s.pending}} {
		if err := json.Unmarshal([]byte(f.src), f.dst); err != nil {
			return nil, fmt.Errorf("subscription %s: %w", s.ID, err)
		}
	}
	return &s, nil
}

// scanSubs reads the rows of a subscriptions query.
func scanSubs(rows *sql.Rows, err error) ([]*Subscription, error) {
	return scanAll(rows, err, scanSub)
}

func loadSub(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string) (*Subscription, error) {
	s, err := scanSub(q.QueryRow(ctx, "SELECT "+subColumns+" FROM subscriptions WHERE id = ? AND merchant_id = ? AND livemode = ?", id, merchantID, livemode))
	if store.IsNotFound(err) {
		return nil, errs.NotFound("subscription", id)
	}
	return s, err
}

func insertSub(ctx context.Context, tx *store.Tx, s *Subscription) error {
	_, err := tx.Exec(ctx, `INSERT INTO subscriptions (`+subColumns+`, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.MerchantID, s.Livemode, s.Customer, s.TestClock, string(s.Status), s.Currency, string(s.Interval), s.IntervalCount,
		s.CollectionMethod, s.DaysUntilDue, jsonText(s.Metadata), jsonText(s.Items), jsonText(orEmpty(s.pending)),
		store.Micros(s.BillingCycleAnchor), store.MicrosPtr(s.TrialEnd), s.periodNumber,
		store.Micros(s.CurrentPeriodStart), store.Micros(s.CurrentPeriodEnd), s.CancelAtPeriodEnd,
		store.MicrosPtr(s.CanceledAt), store.MicrosPtr(s.EndedAt), s.LatestInvoice, 0, store.Micros(tx.Now()), store.Micros(s.StartDate),
		store.Micros(tx.Now()))
	return err
}

// moveSub writes s's mutable columns as the compare-and-set of t: only if
// the row is still at the version read and in one of t's source states.
func moveSub(ctx context.Context, tx *store.Tx, s *Subscription, t subTransition, from SubStatus) error {
	if !subAllowed(t, from) {
		return errs.InvalidState("subscription %s is %s; %s is not allowed from there", s.ID, from, t.name)
	}
	ph, sargs := inList(t.from)
	row := subRow(s, store.Micros(tx.Now())) // id, version, then subMutable's values
	args := append(row[2:], s.ID, s.version)
	res, err := tx.Exec(ctx, `UPDATE subscriptions SET `+subMutableSet+`, version = version + 1
		WHERE id = ? AND version = ? AND status IN (`+ph+`)`, append(args, sargs...)...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errLostRace
	}
	s.version++
	return nil
}

func orEmpty(l []Line) []Line {
	if l == nil {
		return []Line{}
	}
	return l
}

// --- invoices

const invColumns = `id, merchant_id, livemode, customer_id, subscription_id, test_clock_id, status, currency, collection_method,
	days_until_due, billing_reason, lines, amount_due, amount_paid, period_start, period_end, due_date, payment_intent, attempt_count,
	next_payment_attempt, attempt_due, attempt_claimed_until, hosted_token, version, created_at, effective_at, finalized_at, paid_at, voided_at, number, clock_created_at`

func scanInvoice(r row) (*Invoice, error) {
	var v Invoice
	var sub, clock, pi, number sql.NullString
	var days sql.NullInt64
	var lines string
	var ps, pe, due, next, attemptDue, claimed, finalized, paid, voided, clockCreated sql.NullInt64
	var created, effective int64
	if err := r.Scan(&v.ID, &v.MerchantID, &v.Livemode, &v.Customer, &sub, &clock, &v.Status, &v.Currency, &v.CollectionMethod,
		&days, &v.BillingReason, &lines, &v.AmountDue, &v.AmountPaid, &ps, &pe, &due, &pi, &v.AttemptCount,
		&next, &attemptDue, &claimed, &v.hostedToken, &v.version, &created, &effective, &finalized, &paid, &voided, &number, &clockCreated); err != nil {
		return nil, err
	}
	v.Number = store.NullString(number)
	v.Object, v.Subscription, v.TestClock, v.PaymentIntent, v.daysUntilDue = "invoice", store.NullString(sub), store.NullString(clock), store.NullString(pi), nullInt(days)
	v.PeriodStart, v.PeriodEnd, v.DueDate, v.NextPaymentAttempt = store.NullMicros(ps), store.NullMicros(pe), store.NullMicros(due), store.NullMicros(next)
	v.attemptDue, v.attemptClaimedUntil = store.NullMicros(attemptDue), store.NullMicros(claimed)
	v.FinalizedAt, v.PaidAt, v.VoidedAt = store.NullMicros(finalized), store.NullMicros(paid), store.NullMicros(voided)
	v.CreatedAt, v.EffectiveAt = store.FromMicros(created).Truncate(time.Second), store.FromMicros(effective)
	v.clockCreatedAt = store.NullMicros(clockCreated)
	v.CreatedAt = createdOnClock(v.CreatedAt, v.clockCreatedAt)
	if err := json.Unmarshal([]byte(lines), &v.Lines); err != nil {
		return nil, fmt.Errorf("invoice %s lines: %w", v.ID, err)
	}
	v.AmountRemaining = v.AmountDue - v.AmountPaid
	if v.Status != Open && v.Status != Uncollectible {
		v.AmountRemaining = 0
	}
	return &v, nil
}

func loadInvoice(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string) (*Invoice, error) {
	v, err := scanInvoice(q.QueryRow(ctx, "SELECT "+invColumns+" FROM invoices WHERE id = ? AND merchant_id = ? AND livemode = ?", id, merchantID, livemode))
	if store.IsNotFound(err) {
		return nil, errs.NotFound("invoice", id)
	}
	return v, err
}

// invoiceArgs is the stored form of an invoice, in invColumns order.
func invoiceArgs(v *Invoice, now time.Time) []any {
	return []any{v.ID, v.MerchantID, v.Livemode, v.Customer, v.Subscription, v.TestClock, string(v.Status), v.Currency, v.CollectionMethod,
		v.daysUntilDue, v.BillingReason, jsonText(v.Lines), v.AmountDue, v.AmountPaid, store.MicrosPtr(v.PeriodStart), store.MicrosPtr(v.PeriodEnd),
		store.MicrosPtr(v.DueDate), v.PaymentIntent, v.AttemptCount, store.MicrosPtr(v.NextPaymentAttempt), store.MicrosPtr(v.attemptDue),
		store.MicrosPtr(v.attemptClaimedUntil), v.hostedToken, 0, store.Micros(now), store.Micros(v.EffectiveAt),
		store.MicrosPtr(v.FinalizedAt), store.MicrosPtr(v.PaidAt), store.MicrosPtr(v.VoidedAt), v.Number, store.MicrosPtr(v.clockCreatedAt), store.Micros(now)}
}

// invoiceChunk bounds the rows of one multi-row INSERT (32 columns each).
const invoiceChunk = 200

// insertInvoices writes new invoices with multi-row INSERTs.
func insertInvoices(ctx context.Context, tx *store.Tx, invs []*Invoice) error {
	const one = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	if err := numberInvoices(ctx, tx, invs); err != nil {
		return err
	}
	for _, v := range invs {
		if v.TestClock != nil {
			at := v.EffectiveAt.Truncate(time.Second) // the clock's time when it is made
			v.clockCreatedAt = &at
		}
	}
	for start := 0; start < len(invs); start += invoiceChunk {
		end := min(start+invoiceChunk, len(invs))
		var q strings.Builder
		q.WriteString("INSERT INTO invoices (" + invColumns + ", updated_at) VALUES ")
		var args []any
		for i := start; i < end; i++ {
			if i > start {
				q.WriteString(", ")
			}
			q.WriteString(one)
			args = append(args, invoiceArgs(invs[i], tx.Now())...)
		}
		if _, err := tx.Exec(ctx, q.String(), args...); err != nil {
			return err
		}
	}
	for _, v := range invs {
		v.CreatedAt = createdOnClock(tx.Now().Truncate(time.Second), v.clockCreatedAt)
	}
	return nil
}

// moveInvoice writes v's mutable columns as the compare-and-set of t.
func moveInvoice(ctx context.Context, tx *store.Tx, v *Invoice, t invTransition) error {
	ph, sargs := inList(t.from)
	v.Status = t.to
	return updateInvoice(ctx, tx, v, "status IN ("+ph+")", sargs...)
}

// updateInvoice writes v's mutable columns if the row is still at the
// version read and cond holds.
func updateInvoice(ctx context.Context, tx *store.Tx, v *Invoice, cond string, condArgs ...any) error {
	args := []any{string(v.Status), jsonText(v.Lines), v.AmountDue, v.AmountPaid, store.MicrosPtr(v.DueDate), v.PaymentIntent, v.AttemptCount,
		store.MicrosPtr(v.NextPaymentAttempt), store.MicrosPtr(v.attemptDue), store.MicrosPtr(v.attemptClaimedUntil),
		store.MicrosPtr(v.FinalizedAt), store.MicrosPtr(v.PaidAt), store.MicrosPtr(v.VoidedAt), store.Micros(tx.Now()), v.ID, v.version}
	res, err := tx.Exec(ctx, `UPDATE invoices SET status = ?, lines = ?, amount_due = ?, amount_paid = ?, due_date = ?, payment_intent = ?,
		attempt_count = ?, next_payment_attempt = ?, attempt_due = ?, attempt_claimed_until = ?, finalized_at = ?, paid_at = ?, voided_at = ?,
		updated_at = ?, version = version + 1 WHERE id = ? AND version = ? AND `+cond, append(args, condArgs...)...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errLostRace
	}
	v.version++
	return nil
}
