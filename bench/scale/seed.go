package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
)

// seeder writes the history of payment intents straight in SQL, set-based
// as a restore would: per chunk of rows, in one transaction, a staging
// table of what the row's tables share (filled from a generated series of
// row numbers: generate_series on PostgreSQL, a recursive CTE on SQLite),
// then one INSERT ... SELECT per table from it. A seed that at least
// doubles the tables drops their secondary indexes (and on PostgreSQL their
// foreign keys) first and makes them again at the end from their own
// definitions, as pg_restore loads data before it builds indexes.
//
// Each row i is one bank_a or bank_b payment intent created with an
// Idempotency-Key and confirmed 0.5 s later, with what the service writes
// for it when the merchant has a webhook endpoint: the intent (90 %
// succeeded, 10 % canceled by a wrong code), its two events
// (payment_intent.created, then .succeeded or .canceled) with their
// payloads, a delivery of each to the merchant's endpoint (succeeded at the
// first attempt) and that attempt, the two idempotency keys with their
// stored answers, and for a succeeded intent its payment_succeeded posting
// (+amount to the merchant's available balance, -amount to the provider's
// clearing account).
//
// Row i belongs to the hot merchant (k = 0) when i is even, otherwise to
// merchant 1 + (i/2) % (merchants-1): one merchant holds half the rows,
// the others share the rest. Rows run forwards in time, one every step, and
// the largest size's last row is an hour before the day the run started
// (UTC), so entry numbers and ids follow time across chunks as in a real
// ledger, everything the bench creates is newer than the history, and
// today's settlement report holds only the bench's own payments at every
// size.
type seeder struct {
	db    *store.DB
	ms    []seedMerchant
	start time.Time // row 0's creation
	done  int       // rows seeded
	chunk int       // rows per statement
	shape shape     // what of each row's history is kept
}

// seedMerchant is what a row needs of its merchant.
type seedMerchant struct {
	id, principal, endpoint   string
	available, clearA, clearB string // ledger account ids
}

// step is the time between two rows: 10,000,000 rows span 347 days.
const step = 3 * time.Second

// confirmAfter is the time from an intent's creation to its confirm.
const confirmAfter = 500 * time.Millisecond

// rowAt is row i's creation time.
func (s *seeder) rowAt(i int) time.Time { return s.start.Add(time.Duration(i) * step) }

// newSeeder prepares the seeding of up to max rows: it makes the merchants'
// ledger accounts (before anything else posts to them) and the helper table
// that maps a merchant's number to its ids.
func newSeeder(ctx context.Context, db *store.DB, ms []seedMerchant, max int, sh shape) (*seeder, error) {
	s := &seeder{db: db, ms: ms, chunk: 250_000, shape: sh,
		start: db.Now().UTC().Truncate(24 * time.Hour).Add(-time.Hour).Add(-time.Duration(max) * step)}
	now := store.Micros(db.Now())
	var accts, rows []string
	for k := range ms {
		m := &ms[k]
		m.available, m.clearA, m.clearB = ids.New("lac_"), ids.New("lac_"), ids.New("lac_")
		for _, a := range [][3]string{{m.available, "available", ""}, {m.clearA, "provider_clearing", "bank_a"}, {m.clearB, "provider_clearing", "bank_b"}} {
			accts = append(accts, fmt.Sprintf("('%s', '%s', FALSE, 'DJF', '%s', '%s', %d)", a[0], m.id, a[1], a[2], now))
		}
		rows = append(rows, fmt.Sprintf("(%d, '%s', '%s', '%s', '%s', '%s', '%s')", k, m.id, m.principal, m.endpoint, m.available, m.clearA, m.clearB))
	}
	for _, q := range []string{
		"INSERT INTO ledger_accounts (id, merchant_id, livemode, currency, kind, provider, created_at) VALUES " + strings.Join(accts, ", "),
		// The bench's own table, dropped by cleanup with the database.
		`CREATE TABLE scale_seed_merchants (k INTEGER PRIMARY KEY, merchant_id TEXT NOT NULL, principal_id TEXT NOT NULL,
			endpoint_id TEXT NOT NULL, available TEXT NOT NULL, clearing_bank_a TEXT NOT NULL, clearing_bank_b TEXT NOT NULL)`,
		"INSERT INTO scale_seed_merchants VALUES " + strings.Join(rows, ", "),
	} {
		if _, err := db.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("%.80s: %w", q, err)
		}
	}
	return s, nil
}

// seed adds rows until there are n, chunk by chunk, then refreshes what a
// bulk load leaves stale: the seeded accounts' balances, the balance
// checkpoints (as the checkpoint job would have written them over the
// history) and the planner's statistics. progress, when not nil, hears each
// chunk.
func (s *seeder) seed(ctx context.Context, n int, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	// With the retained shape, what falls out of its window as the history
	// grows goes first, with the indexes still there to find it.
	t := time.Now()
	if purged, err := s.purgeRetained(ctx, n); err != nil {
		return err
	} else if purged {
		fmt.Fprintf(progress, "  events, deliveries, attempts and keys past their windows at %d deleted in %s (load %s)\n", n, time.Since(t).Round(time.Millisecond), harness.LoadAvg())
	}
	// A seed that at least doubles the tables loads them as pg_restore
	// does: without their secondary indexes and (PostgreSQL) foreign keys,
	// which are built and checked after, once over the whole table. A
	// smaller seed keeps them (rebuilding over the rows already there would
	// cost more than it saves).
	var dropped, fks []index
	if n-s.done >= s.done {
		var err error
		if dropped, err = secondaryIndexes(ctx, s.db, seededTables...); err != nil {
			return err
		}
		if fks, err = foreignKeys(ctx, s.db, seededTables...); err != nil {
			return err
		}
		if err := dropForeignKeys(ctx, s.db, fks); err != nil {
			return err
		}
		if err := dropIndexes(ctx, s.db, dropped); err != nil {
			return err
		}
	}
	for from := s.done; from < n; from += s.chunk {
		to := min(from+s.chunk, n)
		t := time.Now()
		var tables []string
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			tables = tables[:0]
			restore, err := seedingSession(ctx, tx)
			if err != nil {
				return err
			}
			for _, q := range s.statements(from, to, n) {
				ts := time.Now()
				if _, err := tx.Exec(ctx, q); err != nil {
					return fmt.Errorf("%.100s: %w", strings.Join(strings.Fields(q), " "), err)
				}
				if t, ok := insertTable(q); ok {
					tables = append(tables, fmt.Sprintf("%s %s", t, time.Since(ts).Round(time.Millisecond)))
				}
			}
			return restore()
		})
		if err != nil {
			return err
		}
		s.done = to
		fmt.Fprintf(progress, "  rows %d..%d in %s (load %s): %s\n", from, to-1, time.Since(t).Round(time.Millisecond), harness.LoadAvg(), strings.Join(tables, ", "))
	}
	if len(dropped) > 0 {
		t := time.Now()
		if err := createIndexes(ctx, s.db, dropped); err != nil {
			return err
		}
		fmt.Fprintf(progress, "  %d indexes built in %s (load %s)\n", len(dropped), time.Since(t).Round(time.Millisecond), harness.LoadAvg())
	}
	if len(fks) > 0 {
		t := time.Now()
		if err := addForeignKeys(ctx, s.db, fks); err != nil {
			return err
		}
		fmt.Fprintf(progress, "  %d foreign keys checked in %s (load %s)\n", len(fks), time.Since(t).Round(time.Millisecond), harness.LoadAvg())
	}
	// The seeded accounts' balances are the sums of their entries (the bench
	// writes nothing while it seeds), in one slot each.
	for _, q := range []string{
		`DELETE FROM ledger_balances WHERE account_id IN (SELECT available FROM scale_seed_merchants
			UNION ALL SELECT clearing_bank_a FROM scale_seed_merchants UNION ALL SELECT clearing_bank_b FROM scale_seed_merchants)`,
		`INSERT INTO ledger_balances (account_id, slot, balance)
		SELECT account_id, 0, SUM(amount) FROM ledger_entries WHERE account_id IN (SELECT available FROM scale_seed_merchants
			UNION ALL SELECT clearing_bank_a FROM scale_seed_merchants UNION ALL SELECT clearing_bank_b FROM scale_seed_merchants)
		GROUP BY account_id`,
		// The sandbox purge would fold test-mode history older than 30 days
		// and the retention job would delete events, deliveries and spent
		// keys past their horizons as of the real clock: the seeded history
		// stands for a merchant's year of live payments, whole or as the
		// retention policy leaves it at the history's end (the seed trims
		// it so itself), so neither runs during the bench.
		fmt.Sprintf(`UPDATE jobs SET run_at = %d WHERE unique_key IN ('periodic:sandbox_purge', 'periodic:retention')`, store.Micros(s.db.Now().Add(30*24*time.Hour))),
	} {
		if _, err := s.db.Exec(ctx, q); err != nil {
			return fmt.Errorf("%.80s: %w", strings.Join(strings.Fields(q), " "), err)
		}
	}
	if _, err := ledger.WriteCheckpoints(ctx, s.db, ledger.CheckpointEvery, ledger.CheckpointSettle); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	// What autovacuum does shortly after a bulk load; the vacuum sets the
	// visibility map, which index-only scans rely on.
	if err := s.db.Analyze(ctx, "payment_intents", "events", "webhook_deliveries", "webhook_attempts", "idempotency_keys",
		"ledger_transactions", "ledger_accounts", "ledger_balances", "ledger_checkpoints"); err != nil {
		return err
	}
	if err := s.db.VacuumAnalyze(ctx, "ledger_entries"); err != nil {
		return err
	}
	// A restore ends with its pages in the database's files: the measured
	// steps after it must not share the machine with the checkpoint of the
	// load (gigabytes of index pages in SQLite's log after a 10M seed).
	t = time.Now()
	switch err := s.db.FlushLog(ctx); {
	case errors.Is(err, store.ErrLogBusy):
		fmt.Fprintf(progress, "  log not emptied after the seed: %v\n", err)
	case err != nil:
		return fmt.Errorf("flushing the log after the seed: %w", err)
	default:
		fmt.Fprintf(progress, "  log flushed to the database files in %s (load %s)\n", time.Since(t).Round(time.Millisecond), harness.LoadAvg())
	}
	return nil
}

// statements are the statements of rows from..to-1 of a history of n
// rows: the chunk's staging table, then the INSERTs, children after
// parents, then the staging table's drop. They run in one transaction.
// With the retained shape a retained table gets only the rows inside its
// window of the n (none, and no statement, when the chunk is older).
//
// The staging table holds what several tables share of a row, computed
// once: its merchant's ids, its times, and the two id suffixes (the
// Crockford base32 millisecond and the padded row number) every id of the
// row is one of. Without it the ids, times and payloads were computed
// again in each table's statement (a row's intent id six times), which on
// SQLite was most of the seeding's time.
func (s *seeder) statements(from, to, n int) []string {
	eng := s.db.Engine()
	pg := eng.Name() == "postgres"
	startUS := store.Micros(s.start)
	at := fmt.Sprintf("(%d + i * %d)", startUS, step.Microseconds())
	at2 := fmt.Sprintf("(%s + %d)", at, confirmAfter.Microseconds())
	// An id's suffix as ids.New makes it at time t (µs): ten Crockford
	// base32 characters of the millisecond, then sixteen of the row number.
	suffix := func(t string) string {
		var d []string
		for k := 9; k >= 0; k-- {
			d = append(d, fmt.Sprintf("substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', CAST(((%s / 1000) >> %d) %% 32 + 1 AS INTEGER), 1)", t, 5*k))
		}
		return strings.Join(d, " || ") + " || " + eng.LeftPad("i", 16)
	}
	// RFC 3339 UTC at second precision, as the API writes times.
	rfc := func(t string) string {
		if pg {
			return fmt.Sprintf(`to_char(to_timestamp((%s) / 1000000) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`, t)
		}
		return fmt.Sprintf(`strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ', (%s) / 1000000, 'unixepoch')`, t)
	}
	blob := func(expr string) string {
		if pg {
			return "convert_to(" + expr + ", 'UTF8')"
		}
		return "CAST(" + expr + " AS BLOB)"
	}
	// On SQLite i is the rowid, so rows come out in i's order without a
	// sort; on PostgreSQL the table goes with the transaction.
	key, drop := "i INTEGER PRIMARY KEY", "DROP TABLE scale_seed_rows"
	if pg {
		key, drop = "i BIGINT", ""
	}
	stage := `CREATE TEMP TABLE scale_seed_rows (` + key + `, merchant_id TEXT, principal_id TEXT, endpoint_id TEXT, available TEXT,
			clearing TEXT, provider TEXT, ok INTEGER, amount BIGINT, at BIGINT, at2 BIGINT, s1 TEXT, s2 TEXT, rfc1 TEXT, rfc2 TEXT)`
	if pg {
		stage += " ON COMMIT DROP"
	}
	provider := "CASE (i / 7) % 2 WHEN 0 THEN 'bank_a' ELSE 'bank_b' END"
	q := []string{stage,
		eng.IntSeries(int64(from), int64(to-1)) + `INSERT INTO scale_seed_rows
		SELECT i, m.merchant_id, m.principal_id, m.endpoint_id, m.available,
			CASE (i / 7) % 2 WHEN 0 THEN m.clearing_bank_a ELSE m.clearing_bank_b END, ` + provider + `,
			CASE WHEN (i / 2) % 10 <> 0 THEN 1 ELSE 0 END, (100 + (i * 7919) % 50000), ` + at + `, ` + at2 + `,
			` + suffix(at) + `, ` + suffix(at2) + `, ` + rfc(at) + `, ` + rfc(at2) +
			fmt.Sprintf(" FROM g JOIN scale_seed_merchants m ON m.k = CASE WHEN i %% 2 = 0 THEN 0 ELSE 1 + (i / 2) %% %d END", len(s.ms)-1),
	}
	const from_ = " FROM scale_seed_rows"
	piID := "'pi_' || s1"
	ok := "ok = 1" // succeeded (90 %); the others canceled
	lastError := `'{"code":"otp_invalid","message":"otp invalid","provider":"' || provider || '"}'`
	// The intent as the API answered it: after its create, and in the end.
	obj := func(final bool) string {
		status, captured, next, lastErr, succ, canc := "requires_action", "0", `{"type":"collect_otp","otp_length":6}`, "null", "null", "null"
		q := `'{"id":"' || ` + piID + ` || '","object":"payment_intent","status":"`
		if final {
			q = `'{"id":"' || ` + piID + ` || '","object":"payment_intent","status":"' || CASE WHEN ` + ok + ` THEN 'succeeded' ELSE 'canceled' END || '`
			status, next = "", "null"
			captured = `' || CASE WHEN ` + ok + ` THEN amount ELSE 0 END || '`
			lastErr = `' || CASE WHEN ` + ok + ` THEN 'null' ELSE ` + lastError + ` END || '`
			succ = `' || CASE WHEN ` + ok + ` THEN '"' || rfc2 || '"' ELSE 'null' END || '`
			canc = `' || CASE WHEN ` + ok + ` THEN 'null' ELSE '"' || rfc2 || '"' END || '`
		}
		return q + status + `","amount_minor":' || amount || ',"amount_captured_minor":` + captured +
			`,"amount_capturable_minor":0,"capture_method":"automatic","amount_refunded_minor":0,"refunded":false,"disputed":false,` +
			`"currency":"DJF","provider":"' || provider || '","customer_msisdn":"+25377123456","description":"scale bench",` +
			`"metadata":{},"return_url":null,"next_action":` + next + `,"last_error":` + lastErr + `,"payment_method_details":null,` +
			`"livemode":false,"created_at":"' || rfc1 || '","succeeded_at":` + succ + `,"canceled_at":` + canc +
			`,"cancellation_reason":null}'`
	}
	created, final := obj(false), obj(true)
	confirmErr := `'{"error":{"type":"invalid_request_error","code":"otp_invalid","message":"otp invalid","param":"otp","request_id":"req_' || s2 || '"}}'`
	// The rows of the chunk inside a retained table's window of w rows
	// (the newest of the n): a FROM with its WHERE, or "" with the tables'
	// statements left out when none is.
	skip := map[string]bool{}
	within := func(w int, tables ...string) string {
		lo := n - kept(w, n) // the window's first row
		switch {
		case lo <= from:
			return from_
		case lo >= to:
			for _, t := range tables {
				skip[t] = true
			}
			return ""
		}
		return from_ + fmt.Sprintf(" WHERE i >= %d", lo)
	}
	fromE := within(s.shape.events, "events")
	fromD := within(s.shape.deliveries, "webhook_deliveries", "webhook_attempts")
	fromK := within(s.shape.keys, "idempotency_keys")
	hash := eng.LeftPad("i", 64)
	q = append(q,
		`INSERT INTO payment_intents (id, merchant_id, livemode, status, amount_minor, amount_captured_minor, currency, provider, flow,
			customer_msisdn, description, metadata, last_error, version, created_at, updated_at, succeeded_at, canceled_at)
		SELECT `+piID+`, merchant_id, FALSE, CASE WHEN `+ok+` THEN 'succeeded' ELSE 'canceled' END, amount,
			CASE WHEN `+ok+` THEN amount ELSE 0 END, 'DJF', provider, 'otp', '+25377123456', 'scale bench', '{}',
			CASE WHEN `+ok+` THEN NULL ELSE `+lastError+` END, 1, at, at2,
			CASE WHEN `+ok+` THEN at2 END, CASE WHEN `+ok+` THEN NULL ELSE at2 END`+from_+` ORDER BY i`,
		`INSERT INTO events (id, merchant_id, livemode, type, object_type, object_id, data, created_at, dispatched_at)
		SELECT id, merchant_id, FALSE, type, 'payment_intent', object_id, data, created_at, created_at + 1000 FROM (
			SELECT i, 0 AS n, 'evt_' || s1 AS id, merchant_id, 'payment_intent.created' AS type, `+piID+` AS object_id, `+created+` AS data, at AS created_at`+fromE+`
			UNION ALL
			SELECT i, 1, 'evt_' || s2, merchant_id, CASE WHEN `+ok+` THEN 'payment_intent.succeeded' ELSE 'payment_intent.canceled' END, `+piID+`, `+final+`, at2`+fromE+`
		) e ORDER BY i, n`,
		`INSERT INTO webhook_deliveries (id, merchant_id, livemode, event_id, endpoint_id, status, attempt_count, created_at, updated_at)
		SELECT id, merchant_id, FALSE, event_id, endpoint_id, 'succeeded', 1, t + 1000, t + 4000 FROM (
			SELECT i, 0 AS n, 'whdel_' || s1 AS id, merchant_id, 'evt_' || s1 AS event_id, endpoint_id, at AS t`+fromD+`
			UNION ALL
			SELECT i, 1, 'whdel_' || s2, merchant_id, 'evt_' || s2, endpoint_id, at2`+fromD+`
		) d ORDER BY i, n`,
		`INSERT INTO webhook_attempts (delivery_id, livemode, attempt, at, http_status, latency_ms, response_body, created_at)
		SELECT delivery_id, FALSE, 1, t + 1500, 200, 2, '', t + 4000 FROM (
			SELECT i, 0 AS n, 'whdel_' || s1 AS delivery_id, at AS t`+fromD+`
			UNION ALL
			SELECT i, 1, 'whdel_' || s2, at2`+fromD+`
		) a ORDER BY i, n`,
		// In the primary key's order: a key's position in that B-tree is
		// as good as random by time (merchant, then key text), and
		// inserting in its order halved this statement's time on both
		// engines. The table's rows are the same; only their order on disk
		// is the key's rather than time's.
		`INSERT INTO idempotency_keys (merchant_id, livemode, principal_id, idem_key, method, path, request_hash, state,
			status_code, content_type, body, locked_until, created_at)
		SELECT merchant_id, FALSE, principal_id, 'seed-' || i || '-create', 'POST', '/v1/payment_intents', `+hash+`, 'done',
			201, 'application/json', `+blob(created)+`, at, at`+fromK+`
		UNION ALL
		SELECT merchant_id, FALSE, principal_id, 'seed-' || i || '-confirm', 'POST', '/v1/payment_intents/' || `+piID+` || '/confirm', `+hash+`, 'done',
			CASE WHEN `+ok+` THEN 200 ELSE 400 END, 'application/json', `+blob("CASE WHEN "+ok+" THEN "+final+" ELSE "+confirmErr+" END")+`, at2, at2`+fromK+`
		ORDER BY 1, 3, 4`,
		`INSERT INTO ledger_transactions (id, merchant_id, livemode, kind, reference, created_at)
		SELECT 'ltx_' || s2, merchant_id, FALSE, 'payment_succeeded', `+piID+`, at2`+from_+` WHERE `+ok+` ORDER BY i`,
		// Both entries of a posting together and oldest first, as the
		// service writes them.
		`INSERT INTO ledger_entries (transaction_id, account_id, currency, amount)
		SELECT 'ltx_' || s2, CASE side WHEN 0 THEN available ELSE clearing END, 'DJF', CASE side WHEN 0 THEN amount ELSE -amount END
		`+from_+` CROSS JOIN (SELECT 0 AS side UNION ALL SELECT 1) sides WHERE `+ok+` ORDER BY i, side`,
	)
	if drop != "" {
		q = append(q, drop)
	}
	out := q[:0]
	for _, st := range q {
		if t, ok := insertTable(st); !ok || !skip[t] {
			out = append(out, st)
		}
	}
	return out
}

// databaseBytes is the database's size on disk: on PostgreSQL the tables
// of its schema with their indexes and TOAST, on SQLite the pages in use.
func databaseBytes(ctx context.Context, db *store.DB) (int64, error) {
	var n int64
	err := db.QueryRow(ctx, db.Engine().SizeQuery()).Scan(&n)
	return n, err
}

// insertTable is the table an INSERT statement fills.
func insertTable(q string) (string, bool) {
	_, after, ok := strings.Cut(q, "INSERT INTO ")
	if !ok {
		return "", false
	}
	return strings.Fields(after)[0], true
}

// seedingSession sets what a bulk load wants for the rest of tx
// (store.Engine.BulkLoad: on PostgreSQL a commit that does not wait for the
// WAL's flush, which could lose the last seeded chunk in a crash that a
// bench reseeds anyway; on SQLite a larger page cache) and returns what
// sets it back before tx commits. (SQLite's WAL mode commits without an
// fsync at payd's synchronous=NORMAL, and a seed commits once per chunk,
// so neither the journal nor synchronous is worth changing; the journal
// mode could not be changed with payd's other connections open anyway.)
func seedingSession(ctx context.Context, tx *store.Tx) (restore func() error, err error) {
	return tx.Engine().BulkLoad(ctx, tx)
}
