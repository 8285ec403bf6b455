package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/payd/payd/internal/store"
)

// seeder writes payment intents, their events and (for the succeeded ones)
// their ledger rows straight in SQL, one INSERT ... SELECT per table over a
// generated series of row numbers: generate_series on PostgreSQL, a
// recursive CTE on SQLite.
//
// Row i is created i×30 s before the run started, so each batch is older
// than the last and every row is older than what the benchmark creates. Its
// ids have the shape ids.New gives (prefix, 26 Crockford base32 characters,
// the creation millisecond in the first ten), the last 16 characters the row
// number, so they sort as created_at does, as real ones do. Merchants: i%10 == 0 the second, i%10 == 1 the third, the rest
// (80 %) the measured one. Status by i%20: 0-1 canceled, 2 requires_action,
// the rest succeeded with a capture posted (+amount pending, -amount to the
// provider's clearing account); every intent has one dispatched event.
type seeder struct {
	db         *store.DB
	mids       [3]string
	now        time.Time
	prev, done int
}

const step = 30 * time.Second

func (s *seeder) seed(ctx context.Context, to int) error {
	from := s.done
	eng := s.db.Engine()
	gen := eng.IntSeries(int64(from), int64(to-1))
	pad16 := func(expr string) string { return eng.LeftPad(expr, 16) }
	nowUS := store.Micros(s.now)
	at := fmt.Sprintf("(%d - i * %d)", nowUS, step.Microseconds())
	var digits []string
	for k := 9; k >= 0; k-- {
		digits = append(digits, fmt.Sprintf("substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', CAST(((%s / 1000) >> %d) %% 32 + 1 AS INTEGER), 1)", at, 5*k))
	}
	num := strings.Join(digits, " || ") + " || " + pad16("i")
	merchant := fmt.Sprintf("CASE i %% 10 WHEN 0 THEN '%s' WHEN 1 THEN '%s' ELSE '%s' END", s.mids[1], s.mids[2], s.mids[0])
	midx := "CASE i % 10 WHEN 0 THEN '1' WHEN 1 THEN '2' ELSE '0' END"
	provider := "CASE i % 3 WHEN 0 THEN 'bank_a' WHEN 1 THEN 'bank_b' ELSE 'wallet_c' END"
	flow := "CASE i % 3 WHEN 2 THEN 'push' ELSE 'otp' END"
	status := "CASE WHEN i % 20 < 2 THEN 'canceled' WHEN i % 20 = 2 THEN 'requires_action' ELSE 'succeeded' END"
	amount := "(100 + (i * 7919) % 50000)"
	succeeded := "i % 20 >= 3"
	piID := "'pi_' || " + num

	stmts := []string{}
	if from == 0 {
		var accts []string
		for k := range s.mids {
			for _, a := range [][2]string{{"pending", ""}, {"provider_clearing", "bank_a"}, {"provider_clearing", "bank_b"}, {"provider_clearing", "wallet_c"}} {
				accts = append(accts, fmt.Sprintf("('la_seed_%d_%s', '%s', FALSE, 'DJF', '%s', '%s', %d)", k, a[0]+a[1], s.mids[k], a[0], a[1], nowUS))
			}
		}
		stmts = append(stmts, "INSERT INTO ledger_accounts (id, merchant_id, livemode, currency, kind, provider, created_at) VALUES "+strings.Join(accts, ", "))
	}
	stmts = append(stmts,
		gen+`INSERT INTO payment_intents (id, merchant_id, livemode, status, amount_minor, amount_captured_minor,
			currency, provider, flow, customer_msisdn, metadata, created_at, updated_at, succeeded_at, canceled_at)
		SELECT `+piID+`, `+merchant+`, FALSE, `+status+`, `+amount+`, CASE WHEN `+succeeded+` THEN `+amount+` ELSE 0 END,
			'DJF', `+provider+`, `+flow+`, '+25377123456', '{}', `+at+`, `+at+`,
			CASE WHEN `+succeeded+` THEN `+at+` END, CASE WHEN i % 20 < 2 THEN `+at+` END FROM g`,
		gen+`INSERT INTO events (id, merchant_id, livemode, type, object_type, object_id, data, created_at, dispatched_at)
		SELECT 'evt_' || `+num+`, `+merchant+`, FALSE,
			CASE WHEN `+succeeded+` THEN 'payment_intent.succeeded' ELSE 'payment_intent.created' END, 'payment_intent', `+piID+`,
			'{"id":"' || `+piID+` || '","object":"payment_intent","status":"' || `+status+` || '","amount_minor":' || `+amount+` || ',"currency":"DJF"}',
			`+at+`, `+at+` FROM g`,
		gen+`INSERT INTO ledger_transactions (id, merchant_id, livemode, kind, reference, created_at)
		SELECT 'ltx_' || `+num+`, `+merchant+`, FALSE, 'payment_capture', `+piID+`, `+at+` FROM g WHERE `+succeeded,
		gen+`INSERT INTO ledger_entries (transaction_id, account_id, currency, amount)
		SELECT 'ltx_' || `+num+`, 'la_seed_' || `+midx+` || '_pending', 'DJF', `+amount+` FROM g WHERE `+succeeded,
		gen+`INSERT INTO ledger_entries (transaction_id, account_id, currency, amount)
		SELECT 'ltx_' || `+num+`, 'la_seed_' || `+midx+` || '_provider_clearing' || `+provider+`, 'DJF', -`+amount+` FROM g WHERE `+succeeded,
		// The seeded accounts' balances (one slot each) are the sums of their entries.
		`DELETE FROM ledger_balances WHERE account_id LIKE 'la_seed_%'`,
		`INSERT INTO ledger_balances (account_id, slot, balance)
		SELECT account_id, 0, SUM(amount) FROM ledger_entries WHERE account_id LIKE 'la_seed_%' GROUP BY account_id`,
	)
	for _, q := range stmts {
		if _, err := s.db.Exec(ctx, q); err != nil {
			return fmt.Errorf("%.80s: %w", strings.Join(strings.Fields(q), " "), err)
		}
	}
	// What autovacuum does shortly after a bulk load.
	if err := s.db.Analyze(ctx, "payment_intents", "events", "ledger_transactions", "ledger_entries", "ledger_accounts"); err != nil {
		return err
	}
	s.prev, s.done = from, to
	return nil
}

// explain prints the plans of the list queries as the API sends them.
func (s *seeder) explain(ctx context.Context, w io.Writer) {
	pre := s.db.Engine().ExplainPrefix(true)
	since := store.Micros(time.Now().Add(-24 * time.Hour))
	for _, q := range []struct {
		name string
		sql  string
		args []any
	}{
		{"list", "SELECT id FROM payment_intents WHERE merchant_id = ? AND livemode = ? ORDER BY id DESC LIMIT 11", []any{s.mids[0], false}},
		{"list created[gte]", "SELECT id FROM payment_intents WHERE merchant_id = ? AND livemode = ? AND created_at >= ? ORDER BY id DESC LIMIT 11", []any{s.mids[0], false, since}},
		{"list ordered by the list index", "SELECT id FROM payment_intents WHERE merchant_id = ? AND livemode = ? ORDER BY merchant_id DESC, livemode DESC, id DESC LIMIT 11", []any{s.mids[0], false}},
	} {
		for _, cheap := range []bool{false, true} {
			set := ""
			err := s.db.InTx(ctx, func(tx *store.Tx) error {
				if cheap {
					applied, err := tx.CheapRandomReads(ctx)
					if err != nil || !applied {
						return err
					}
					set = "SET LOCAL random_page_cost = 1.1"
				}
				rows, err := tx.Query(ctx, pre+q.sql, q.args...)
				if err != nil {
					return err
				}
				defer rows.Close()
				fmt.Fprintf(w, "plan, %s %s:\n", q.name, set)
				cols, _ := rows.Columns()
				for rows.Next() {
					vals := make([]any, len(cols))
					ptrs := make([]any, len(cols))
					for i := range vals {
						ptrs[i] = &vals[i]
					}
					rows.Scan(ptrs...)
					fmt.Fprintf(w, "   %v\n", vals[len(vals)-1])
				}
				return rows.Err()
			})
			if err != nil {
				fmt.Fprintf(w, "explain %s: %v\n", q.name, err)
			}
		}
	}
}
