package billing

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/payd/payd/internal/store"
)

// numberFormat renders an invoice number: INV- and at least six digits.
const numberFormat = "INV-%06d"

// numberInvoices gives each new invoice the next number of its merchant and
// mode, in slice order. One upsert per merchant and mode reserves a block:
// it locks that merchant's counter row until the transaction ends, so two
// transactions never take the same number and a rolled-back one gives its
// numbers back (PostgreSQL: the row lock; SQLite: one writer at a time).
// Counters are taken in a fixed order so that two transactions taking
// several never deadlock.
func numberInvoices(ctx context.Context, tx *store.Tx, invs []*Invoice) error {
	type scope struct {
		merchant string
		live     bool
	}
	groups := map[scope][]*Invoice{}
	var order []scope
	for _, v := range invs {
		k := scope{v.MerchantID, v.Livemode}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], v)
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].merchant != order[j].merchant {
			return order[i].merchant < order[j].merchant
		}
		return !order[i].live && order[j].live
	})
	for _, k := range order {
		g := groups[k]
		var last int64
		err := tx.QueryRow(ctx, `INSERT INTO invoice_numbers (merchant_id, livemode, last_number) VALUES (?, ?, ?)
			ON CONFLICT (merchant_id, livemode) DO UPDATE SET last_number = invoice_numbers.last_number + excluded.last_number
			RETURNING last_number`, k.merchant, k.live, int64(len(g))).Scan(&last)
		if err != nil {
			return fmt.Errorf("number invoices: %w", err)
		}
		first := last - int64(len(g)) + 1
		for i, v := range g {
			n := fmt.Sprintf(numberFormat, first+int64(i))
			v.Number = &n
		}
	}
	return nil
}

// createdOnClock shows an object made on a test clock with the clock's time
// of its making in created_at (the stored created_at is the wall clock's).
func createdOnClock(created time.Time, clockCreated *time.Time) time.Time {
	if clockCreated != nil {
		return clockCreated.UTC().Truncate(time.Second)
	}
	return created
}

// clockTimeOf is now when the object lives on a test clock, else nil.
func clockTimeOf(clock *string, now time.Time) *time.Time {
	if clock == nil {
		return nil
	}
	return &now
}
