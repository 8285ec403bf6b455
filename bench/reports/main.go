// Command reports measures how balance transaction lists and the settlement
// report cost as a merchant's history grows. It starts its own payd on a
// loopback port (the harness bench/scale uses), seeds captured payments
// straight in SQL (a payment intent and a payment_succeeded posting each, one
// every 30 s back from now) up to each size, and measures the list's first
// page, a page in the middle of the history and the last page, a retrieve
// deep in the history, and one day's settlement report in JSON and CSV.
//
//	go run ./bench/reports                                   # SQLite, sizes 0,10000,100000
//	go run ./bench/reports -engine postgres -seed 0,10000,100000,1000000
//
// Every step is bounded by -duration and -max; nothing but loopback is loaded.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
)

func main() {
	cc := harness.CostCurveFlags(flag.CommandLine, harness.CostCurveDefaults{
		Sizes: "0,10000,100000", SizesUsage: "balance transactions of the measured merchant to measure at, ascending", Max: 2000})
	flag.Parse()
	if err := cc.Parse(); err != nil {
		harness.Fatal(err)
	}
	ctx := context.Background()
	// No background workers: the seeded history reaches a year back in test
	// mode, which the sandbox purge would fold; the bench writes the balance
	// checkpoints itself, as the job would have over that year.
	m, ms, cleanup, err := cc.Start(ctx, "Reports bench", 2, harness.Configure(func(c *app.Config) { c.Workers = false }))
	if err != nil {
		harness.Fatal(err)
	}
	defer cleanup()
	// Rows run forwards in time from start and end at now at the largest
	// size, so entry numbers follow time across batches as they do in a
	// real ledger.
	s := &seeder{db: m.DB, mids: [2]string{ms[0].MerchantID, ms[1].MerchantID},
		start: m.DB.Now().Add(-time.Duration(rowsFor(cc.Sizes[len(cc.Sizes)-1])) * step)}
	api := harness.API{Base: m.URL(), Key: ms[0].SecretKeys[0]}
	fmt.Println(cc.Header())
	err = cc.Walk("balance transactions", func(n int) (string, error) {
		if err := s.seed(ctx, n); err != nil {
			return "", err
		}
		t := time.Now()
		cps, err := ledger.WriteCheckpoints(ctx, m.DB, ledger.CheckpointEvery, ledger.CheckpointSettle)
		if err != nil {
			return "", fmt.Errorf("checkpoints: %w", err)
		}
		return fmt.Sprintf("seeded to %d balance transactions of the measured merchant (%d postings in all), then %d checkpoints written (%s), all",
			n, s.rows, cps, time.Since(t).Round(time.Millisecond)), nil
	}, func(n int) error {
		if err := measure(ctx, s, api, cc.Levels, cc.Duration, cc.Max); err != nil {
			return err
		}
		if cc.Explain {
			s.explain(ctx, os.Stdout)
		}
		return nil
	})
	if err != nil {
		harness.Fatal(err)
	}
}

func measure(ctx context.Context, s *seeder, api harness.API, levels []int, dur time.Duration, maxOps int64) error {
	middle, err := s.txnAt(ctx, s.measured/2)
	if err != nil {
		return err
	}
	oldest, err := s.txnAt(ctx, 10)
	if err != nil {
		return err
	}
	// A day in the middle of the history (today when nothing is seeded).
	day := s.at(s.rows / 2).Format(time.DateOnly)
	steps := []struct {
		name, path string
		csv        bool
	}{
		{"GET /v1/balance_transactions?limit=10 (first page)", "/v1/balance_transactions?limit=10", false},
		{"... &starting_after= the middle of the history", "/v1/balance_transactions?limit=10&starting_after=" + middle, false},
		{"... &starting_after= the 11th oldest (last page)", "/v1/balance_transactions?limit=10&starting_after=" + oldest, false},
		{"GET /v1/balance_transactions/{id} (the 11th oldest)", "/v1/balance_transactions/" + oldest, false},
		{"... ?type=payment&created[gte]=24 h ago", "/v1/balance_transactions?limit=10&type=payment&created%5Bgte%5D=" +
			strconv.FormatInt(s.at(s.rows-1).Add(-24*time.Hour).Unix(), 10), false},
		{"GET /v1/reports/settlement?date=" + day, "/v1/reports/settlement?date=" + day, false},
		{"... &timezone=Africa/Djibouti, Accept: text/csv", "/v1/reports/settlement?timezone=Africa/Djibouti&date=" + day, true},
	}
	for _, st := range steps {
		if strings.Contains(st.path, "starting_after=&") || strings.HasSuffix(st.path, "/v1/balance_transactions/") {
			continue // nothing that deep yet
		}
		fmt.Printf("%s\n", st.name)
		for _, cl := range levels {
			res := loadgen.RunWith(loadgen.Options{Clients: cl, Duration: dur, MaxOps: maxOps}, func(c *loadgen.Call) error {
				if !st.csv {
					return api.With(c.HTTP).Get(st.path, nil)
				}
				var body []byte
				if err := api.With(c.HTTP).Do(harness.Request{Method: "GET", Path: st.path, ContentType: "text/csv"}, &body); err != nil {
					return err
				}
				return nil
			})
			fmt.Printf("  %s\n", res)
			res.WriteFailures(os.Stdout)
		}
	}
	return nil
}

// seeder writes captured payments straight in SQL, one INSERT ... SELECT per
// table over a generated series: row i is created at start + i×30 s;
// i%10 == 0 belongs to a second merchant, the rest (90 %) to the
// measured one; providers rotate over bank_a, bank_b and wallet_c. Each row
// is a payment intent and a payment_succeeded posting (+amount available,
// −amount the provider's clearing account), as the service books them.
type seeder struct {
	db       *store.DB
	mids     [2]string
	start    time.Time // row 0's time
	rows     int       // rows seeded (both merchants)
	measured int       // of them, the measured merchant's
}

const step = 30 * time.Second

// seed adds rows until the measured merchant has n balance transactions.
func (s *seeder) seed(ctx context.Context, n int) error {
	from, to := s.rows, rowsFor(n)
	eng := s.db.Engine()
	gen := eng.IntSeries(int64(from), int64(to-1))
	pad := func(expr string) string { return eng.LeftPad(expr, 16) }
	at := fmt.Sprintf("(%d + i * %d)", store.Micros(s.start), step.Microseconds())
	merchant := fmt.Sprintf("CASE i %% 10 WHEN 0 THEN '%s' ELSE '%s' END", s.mids[1], s.mids[0])
	midx := "CASE i % 10 WHEN 0 THEN '1' ELSE '0' END"
	provider := "CASE i % 3 WHEN 0 THEN 'bank_a' WHEN 1 THEN 'bank_b' ELSE 'wallet_c' END"
	amount := "(100 + (i * 7919) % 50000)"
	piID := "'pi_bench' || " + pad("i")
	ltxID := "'ltx_bench' || " + pad("i")
	var stmts []string
	if from == 0 {
		var accts []string
		for k := range s.mids {
			for _, a := range [][2]string{{"available", ""}, {"provider_clearing", "bank_a"}, {"provider_clearing", "bank_b"}, {"provider_clearing", "wallet_c"}} {
				accts = append(accts, fmt.Sprintf("('lac_bench_%d_%s', '%s', FALSE, 'DJF', '%s', '%s', %d)", k, a[0]+a[1], s.mids[k], a[0], a[1], store.Micros(s.start)))
			}
		}
		stmts = append(stmts, "INSERT INTO ledger_accounts (id, merchant_id, livemode, currency, kind, provider, created_at) VALUES "+strings.Join(accts, ", "))
	}
	stmts = append(stmts,
		gen+`INSERT INTO payment_intents (id, merchant_id, livemode, status, amount_minor, amount_captured_minor,
			currency, provider, flow, customer_msisdn, metadata, created_at, updated_at, succeeded_at)
		SELECT `+piID+`, `+merchant+`, FALSE, 'succeeded', `+amount+`, `+amount+`, 'DJF', `+provider+`, 'otp', '+25377123456', '{}', `+at+`, `+at+`, `+at+` FROM g`,
		gen+`INSERT INTO ledger_transactions (id, merchant_id, livemode, kind, reference, created_at)
		SELECT `+ltxID+`, `+merchant+`, FALSE, 'payment_succeeded', `+piID+`, `+at+` FROM g`,
		// Both entries of a posting together and oldest first, as the service
		// writes them.
		gen+`INSERT INTO ledger_entries (transaction_id, account_id, currency, amount)
		SELECT `+ltxID+`, CASE side WHEN 0 THEN 'lac_bench_' || `+midx+` || '_available'
			ELSE 'lac_bench_' || `+midx+` || '_provider_clearing' || `+provider+` END,
			'DJF', CASE side WHEN 0 THEN `+amount+` ELSE -`+amount+` END
		FROM g CROSS JOIN (SELECT 0 AS side UNION ALL SELECT 1) sides ORDER BY i, side`,
		// The seeded accounts' balances (one slot each) are the sums of
		// their entries.
		`DELETE FROM ledger_balances WHERE account_id LIKE 'lac_bench_%'`,
		`INSERT INTO ledger_balances (account_id, slot, balance)
		SELECT account_id, 0, SUM(amount) FROM ledger_entries WHERE account_id LIKE 'lac_bench_%' GROUP BY account_id`,
	)
	for _, q := range stmts {
		if _, err := s.db.Exec(ctx, q); err != nil {
			return fmt.Errorf("%.80s: %w", strings.Join(strings.Fields(q), " "), err)
		}
	}
	// What autovacuum does shortly after a bulk load; the vacuum sets the
	// visibility map, which index-only scans of the entries rely on.
	if err := s.db.Analyze(ctx, "payment_intents", "ledger_transactions"); err != nil {
		return err
	}
	if err := s.db.VacuumAnalyze(ctx, "ledger_entries"); err != nil {
		return err
	}
	if err := s.db.Analyze(ctx, "ledger_accounts"); err != nil {
		return err
	}
	s.rows, s.measured = to, measuredBelow(to)
	return nil
}

// rowsFor is how many rows give the measured merchant n of them.
func rowsFor(n int) int {
	to := n * 10 / 9
	for measuredBelow(to) < n {
		to++
	}
	return to
}

// at is row i's time.
func (s *seeder) at(i int) time.Time { return s.start.Add(time.Duration(i) * step) }

// measuredBelow is how many of rows 0..n-1 are the measured merchant's.
func measuredBelow(n int) int { return n - (n+9)/10 }

// txnAt returns the id of the measured merchant's balance transaction k
// entries from the oldest ("" when there are not that many).
func (s *seeder) txnAt(ctx context.Context, k int) (string, error) {
	if k <= 0 || k >= s.measured {
		return "", nil
	}
	var entry, created int64
	err := s.db.QueryRow(ctx, `SELECT e.id, t.created_at FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
		WHERE e.account_id = 'lac_bench_0_available' ORDER BY e.id LIMIT 1 OFFSET `+strconv.Itoa(k)).Scan(&entry, &created)
	if err != nil {
		return "", err
	}
	return ids.At("txn_", store.FromMicros(created), uint64(entry)), nil
}

// explain prints the plans of the queries a first page, a page in the
// middle (its rows, its checkpoint, the sum from its rows to the checkpoint)
// and a day's report send (the statements of internal/reports, with the seeded
// accounts' ids).
func (s *seeder) explain(ctx context.Context, w io.Writer) {
	from := store.Micros(s.at(s.rows / 2).Truncate(24 * time.Hour))
	var mid, cp, oldest int64
	if s.measured > 10 {
		if err := s.db.QueryRow(ctx, "SELECT id FROM ledger_entries WHERE account_id = 'lac_bench_0_available' ORDER BY id LIMIT 1 OFFSET 10").Scan(&oldest); err != nil {
			fmt.Fprintf(w, "explain: %v\n", err)
			return
		}
	}
	if s.measured > 0 {
		if err := s.db.QueryRow(ctx, "SELECT id FROM ledger_entries WHERE account_id = 'lac_bench_0_available' ORDER BY id LIMIT 1 OFFSET "+
			strconv.Itoa(s.measured/2)).Scan(&mid); err != nil {
			fmt.Fprintf(w, "explain: %v\n", err)
			return
		}
		cp = mid
		c, ok, err := ledger.CheckpointAtOrAfter(ctx, s.db, "lac_bench_0_available", mid)
		if err == nil && ok {
			cp = c.EntryID
		}
	}
	for _, q := range []struct {
		name string
		sql  string
		args []any
	}{
		{"first page", `SELECT e.id, e.account_id, e.currency, e.amount, t.id, t.kind, t.reference, t.created_at
			FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
			WHERE e.account_id = ? ORDER BY e.account_id DESC, e.id DESC LIMIT 11`, []any{"lac_bench_0_available"}},
		{"page in the middle", `SELECT e.id, e.account_id, e.currency, e.amount, t.id, t.kind, t.reference, t.created_at
			FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
			WHERE e.account_id = ? AND e.id < ? ORDER BY e.account_id DESC, e.id DESC LIMIT 11`, []any{"lac_bench_0_available", mid}},
		{"last page (the 10 oldest)", `SELECT e.id, e.account_id, e.currency, e.amount, t.id, t.kind, t.reference, t.created_at
			FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
			WHERE e.account_id = ? AND e.id < ? ORDER BY e.account_id DESC, e.id DESC LIMIT 11`, []any{"lac_bench_0_available", oldest}},
		{"nearest checkpoint above the middle", `SELECT entry_id, balance FROM ledger_checkpoints WHERE account_id = ? AND entry_id >= ?
			ORDER BY account_id, entry_id LIMIT 1`, []any{"lac_bench_0_available", mid}},
		{"sum from the middle to its checkpoint", `SELECT COALESCE(SUM(CASE WHEN id > ? THEN amount ELSE 0 END), 0)
			FROM ledger_entries WHERE account_id = ? AND id > ? AND id <= ?`, []any{mid, "lac_bench_0_available", mid - 20, cp}},
		{"a day's postings", `SELECT id, kind, reference FROM ledger_transactions
			WHERE merchant_id = ? AND livemode = ? AND kind IN (?, ?, ?, ?) AND created_at >= ? AND created_at < ?`,
			[]any{s.mids[0], false, "payment_succeeded", "refund", "refund_failure", "refund_settlement", from, from + 86_400_000_000}},
	} {
		if err := harness.PrintPlan(ctx, s.db, w, q.name, q.sql, q.args...); err != nil {
			fmt.Fprintf(w, "explain %s: %v\n", q.name, err)
		}
	}
}
