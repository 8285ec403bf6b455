package billing

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
)

// A billing run moves thousands of rows; it writes them set-based: one
// UPDATE ... FROM (VALUES ...) for a chunk of subscriptions or invoices,
// each row still a compare-and-set on the version it was read at. The
// statement answers the ids it wrote, so a row another writer moved
// meanwhile is known and handled alone.

// column is one column a batch update writes, with the SQL type its
// values are cast to (PostgreSQL types a VALUES list from its first row).
type column struct {
	name, sqlType string
}

// setChunk bounds the rows of one batch UPDATE.
const setChunk = 250

// setMany writes rows into table: each row is the id, the version it was
// read at, then one value per column of cols. A row is written only if it
// is still at that version and cond (on the table's own columns, table
// qualified) holds; its version goes up by one. It returns the ids written.
func setMany(ctx context.Context, tx *store.Tx, table string, cols []column, rows [][]any, cond string, condArgs ...any) (map[string]bool, error) {
	done := make(map[string]bool, len(rows))
	for start := 0; start < len(rows); start += setChunk {
		q, args, err := setManyQuery(tx.Dialect(), table, cols, rows[start:min(start+setChunk, len(rows))], cond, condArgs...)
		if err != nil {
			return nil, err
		}
		r, err := tx.Query(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		if err := store.AddIDs(r, done); err != nil {
			return nil, err
		}
	}
	return done, nil
}

// setManyQuery is the statement, and its arguments, that writes one chunk
// of setMany's rows: UPDATE table ... FROM (VALUES ...) AS v, joined on the
// table's primary key.
//
// Only PostgreSQL gets the first row's values cast to the columns' types
// (store.Dialect.ValuesParam: it types a VALUES list from its first row).
// On SQLite a cast in the list makes it a compound of one row UNION ALL the
// rest, whose size the planner does not know, and it then read the table
// through any partial
// index whose condition cond implies (the claim's "status = 'open'" matches
// invoices_attempts_keyset), every open invoice for each chunk, probing
// the list for each: a claim cost what the open invoices numbered, and a
// month's attempt round grew with the square of the subscriptions. A plain
// VALUES list of known length is joined by the primary key, a lookup per
// row (TestSetManyJoinsOnPrimaryKey). SQLite needs no cast: the column
// written applies its own affinity.
func setManyQuery(d store.Dialect, table string, cols []column, rows [][]any, cond string, condArgs ...any) (string, []any, error) {
	var q strings.Builder
	q.WriteString("UPDATE " + table + " SET ")
	for i, c := range cols {
		fmt.Fprintf(&q, "%s = v.column%d, ", c.name, i+3)
	}
	q.WriteString("version = " + table + ".version + 1 FROM (VALUES ")
	args := make([]any, 0, len(rows)*(len(cols)+2)+len(condArgs))
	for i, row := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		if i == 0 {
			q.WriteString("(" + d.ValuesParam("TEXT") + ", " + d.ValuesParam("BIGINT"))
			for _, c := range cols {
				q.WriteString(", " + d.ValuesParam(c.sqlType))
			}
		} else {
			q.WriteString("(?, ?" + strings.Repeat(", ?", len(cols)))
		}
		q.WriteString(")")
		if len(row) != len(cols)+2 {
			return "", nil, fmt.Errorf("billing: a batch row of %s has %d values, want %d", table, len(row), len(cols)+2)
		}
		args = append(args, row...)
	}
	q.WriteString(") AS v WHERE " + table + ".id = v.column1 AND " + table + ".version = v.column2")
	if cond != "" {
		q.WriteString(" AND " + cond)
	}
	q.WriteString(" RETURNING " + table + ".id")
	return q.String(), append(args, condArgs...), nil
}

// subMutable are a subscription's columns a transition writes, one row at
// a time (moveSub) or a batch of them (a period start or an end).
var subMutable = []column{{"status", "TEXT"}, {"items", "TEXT"}, {"pending_lines", "TEXT"}, {"metadata", "TEXT"},
	{"period_number", "BIGINT"}, {"current_period_start", "BIGINT"}, {"current_period_end", "BIGINT"},
	{"cancel_at_period_end", "BOOLEAN"}, {"canceled_at", "BIGINT"}, {"ended_at", "BIGINT"}, {"latest_invoice", "TEXT"},
	{"updated_at", "BIGINT"}}

// subMutableSet is subMutable as the SET list of a one-row UPDATE
// ("status = ?, items = ?, ...").
var subMutableSet = setList(subMutable)

// setList is cols as the SET list of a one-row UPDATE, a placeholder each.
func setList(cols []column) string {
	set := make([]string, len(cols))
	for i, c := range cols {
		set[i] = c.name + " = ?"
	}
	return strings.Join(set, ", ")
}

// subRow is s's batch row for subMutable, at the version read.
func subRow(s *Subscription, now int64) []any {
	return []any{s.ID, s.version, string(s.Status), jsonText(s.Items), jsonText(orEmpty(s.pending)), jsonText(s.Metadata), s.periodNumber,
		store.Micros(s.CurrentPeriodStart), store.Micros(s.CurrentPeriodEnd), s.CancelAtPeriodEnd, store.MicrosPtr(s.CanceledAt),
		store.MicrosPtr(s.EndedAt), s.LatestInvoice, now}
}

// invMutable are an invoice's columns a billing step writes.
var invMutable = []column{{"status", "TEXT"}, {"amount_paid", "BIGINT"}, {"payment_intent", "TEXT"}, {"attempt_count", "BIGINT"},
	{"next_payment_attempt", "BIGINT"}, {"attempt_due", "BIGINT"}, {"attempt_claimed_until", "BIGINT"}, {"paid_at", "BIGINT"},
	{"updated_at", "BIGINT"}}

// invRow is v's batch row for invMutable, at the version read.
func invRow(v *Invoice, now int64) []any {
	return []any{v.ID, v.version, string(v.Status), v.AmountPaid, v.PaymentIntent, v.AttemptCount, store.MicrosPtr(v.NextPaymentAttempt),
		store.MicrosPtr(v.attemptDue), store.MicrosPtr(v.attemptClaimedUntil), store.MicrosPtr(v.PaidAt), now}
}

// customersByID loads the customers with ids, which may repeat (the deleted
// ones too when withDeleted).
func customersByID(ctx context.Context, q store.Querier, ids []string, withDeleted bool) (map[string]*Customer, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	out := make(map[string]*Customer, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	live := "deleted_at IS NULL AND "
	if withDeleted {
		live = ""
	}
	rows, err := q.Query(ctx, "SELECT "+customerColumns+" FROM customers WHERE "+live+"id IN ("+store.Placeholders(len(ids))+")", store.Args(ids)...)
	cs, err := scanAll(rows, err, scanCustomer)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		out[c.ID] = c
	}
	return out, nil
}

// scanInvoices reads the rows of an invoices query.
func scanInvoices(rows *sql.Rows, err error) ([]*Invoice, error) {
	return scanAll(rows, err, scanInvoice)
}

// invoicesByID loads the invoices with ids.
func invoicesByID(ctx context.Context, q store.Querier, ids []string) (map[string]*Invoice, error) {
	out := make(map[string]*Invoice, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, "SELECT "+invColumns+" FROM invoices WHERE id IN ("+store.Placeholders(len(ids))+")", store.Args(ids)...)
	invs, err := scanAll(rows, err, scanInvoice)
	if err != nil {
		return nil, err
	}
	for _, v := range invs {
		out[v.ID] = v
	}
	return out, nil
}

// onIntentStatusMany is the batch form of onIntentStatus, for the intents
// of a billing run's attempts created together: the successes of the
// attempts in flight pay their invoices with one UPDATE, one insert of
// their invoice.paid events and one UPDATE of the subscriptions they bring
// back to active. Everything else (refusals, pending intents, a payment
// that is not the attempt in flight, a row another writer moved) goes
// through onIntentStatus one by one.
func (s *Service) onIntentStatusMany(ctx context.Context, tx *store.Tx, pis []payments.Intent) error {
	var paid []payments.Intent
	var ids []string
	for _, pi := range pis {
		switch {
		case pi.InvoiceID == "": // not an intent billing created
		case pi.Status == payments.Succeeded:
			paid, ids = append(paid, pi), append(ids, pi.InvoiceID)
		default:
			if err := s.onIntentStatus(ctx, tx, pi); err != nil {
				return err
			}
		}
	}
	if len(paid) == 0 {
		return nil
	}
	invs, err := invoicesByID(ctx, tx, ids)
	if err != nil {
		return err
	}
	now := store.Micros(tx.Now())
	var fast []*Invoice
	var fastPI []payments.Intent
	var rows [][]any
	for _, pi := range paid {
		v := invs[pi.InvoiceID]
		if v == nil || v.MerchantID != pi.MerchantID || v.Livemode != pi.Livemode {
			continue // not this merchant's invoice: as onIntentStatus, nothing to do
		}
		if !invAllowed(payInvoice, v.Status) || !isCurrentAttempt(v, pi.Metadata[MetaAttempt]) || !coversDue(v, pi) {
			if err := s.onIntentStatus(ctx, tx, pi); err != nil {
				return err
			}
			continue
		}
		at := *v.attemptDue
		id := pi.ID
		v.Status, v.AmountPaid, v.PaidAt, v.PaymentIntent, v.NextPaymentAttempt, v.attemptClaimedUntil = Paid, v.AmountPaid+pi.AmountCapturedMinor, &at, &id, nil, nil
		fast, fastPI, rows = append(fast, v), append(fastPI, pi), append(rows, invRow(v, now))
	}
	ph, sargs := inList(payInvoice.from)
	done, err := setMany(ctx, tx, "invoices", invMutable, rows, "invoices.status IN ("+ph+")", sargs...)
	if err != nil {
		return err
	}
	var evs []events.Pending
	var latest []*Invoice
	var latestAt []*time.Time
	for i, v := range fast {
		if !done[v.ID] {
			if err := s.onIntentStatus(ctx, tx, fastPI[i]); err != nil {
				return err
			}
			continue
		}
		v.version++
		at := stepOnClock(v.TestClock, *v.PaidAt) // the attempt's due time
		evs = append(evs, ev(v, EventInvoicePaid, s.view(v), at))
		if v.Subscription != nil {
			latest, latestAt = append(latest, v), append(latestAt, at)
		}
	}
	if _, err := events.EmitMany(ctx, tx, evs); err != nil {
		return err
	}
	return s.recoverMany(ctx, tx, latest, latestAt)
}

// recoverMany brings back to active the past_due or unpaid subscriptions
// whose latest invoice is one of paid (the recover transition), with their
// events. The usual case, every subscription active already, costs one
// UPDATE (by primary key) that changes nothing. onClock[i] is the time on
// its test clock of the step that paid paid[i] (stepOnClock), which the
// event of its subscription shows.
func (s *Service) recoverMany(ctx context.Context, tx *store.Tx, paid []*Invoice, onClock []*time.Time) error {
	if len(paid) == 0 {
		return nil
	}
	subs, invs := make([]string, len(paid)), make([]string, len(paid))
	at := make(map[string]*time.Time, len(paid))
	for i, v := range paid {
		subs[i], invs[i] = *v.Subscription, v.ID
		at[*v.Subscription] = onClock[i]
	}
	ph, sargs := inList(recoverPaid.from)
	args := append([]any{string(recoverPaid.to), store.Micros(tx.Now())}, store.Args(subs)...)
	args = append(append(args, store.Args(invs)...), sargs...)
	rows, err := tx.Query(ctx, "UPDATE subscriptions SET status = ?, version = version + 1, updated_at = ? WHERE id IN ("+
		store.Placeholders(len(subs))+") AND latest_invoice IN ("+store.Placeholders(len(invs))+") AND status IN ("+ph+") RETURNING id, merchant_id, livemode",
		args...)
	if err != nil {
		return err
	}
	type ref struct {
		id, merchant string
		live         bool
	}
	var moved []ref
	for rows.Next() {
		var r ref
		if err := rows.Scan(&r.id, &r.merchant, &r.live); err != nil {
			rows.Close()
			return err
		}
		moved = append(moved, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range moved {
		sub, err := loadSub(ctx, tx, r.merchant, r.live, r.id)
		if err != nil {
			return err
		}
		if err := emitOnClock(ctx, tx, at[sub.ID], sub.MerchantID, sub.Livemode, EventSubscriptionUpdated, "subscription", sub.ID, sub); err != nil {
			return err
		}
	}
	return nil
}
