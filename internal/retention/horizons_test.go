package retention_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/retention"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

const day = 24 * time.Hour

// seeder writes rows of the purged tables directly, each with an id of its
// creation time (as payd's ids are) and that created_at.
type seeder struct {
	t   testing.TB
	db  *store.DB
	seq uint64
}

func (s *seeder) id(prefix string, at time.Time) string {
	s.seq++
	return ids.At(prefix, at, s.seq)
}

func (s *seeder) exec(q string, args ...any) {
	s.t.Helper()
	if _, err := s.db.Exec(context.Background(), q, args...); err != nil {
		s.t.Fatal(err)
	}
}

// event writes an event made at at, dispatched unless told otherwise.
func (s *seeder) event(merchant string, live bool, at time.Time, dispatched bool) string {
	id := s.id("evt_", at)
	var disp any
	if dispatched {
		disp = store.Micros(at)
	}
	s.exec(`INSERT INTO events (id, merchant_id, livemode, type, object_type, object_id, data, created_at, dispatched_at)
		VALUES (?, ?, ?, 'payment_intent.succeeded', 'payment_intent', ?, '{}', ?, ?)`, id, merchant, live, "pi_"+id, store.Micros(at), disp)
	return id
}

// delivery writes a delivery of event made at at, with attempts attempts.
func (s *seeder) delivery(merchant string, live bool, event string, at time.Time, status string, attempts int) string {
	id := s.id("whdel_", at)
	var next any
	if status == "pending" {
		next = store.Micros(at.Add(time.Hour))
	}
	s.exec(`INSERT INTO webhook_deliveries (id, merchant_id, livemode, event_id, endpoint_id, status, attempt_count, next_attempt_at,
		redelivery, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, merchant, live, event, "we_"+id, status, attempts, next, false, store.Micros(at), store.Micros(at))
	for i := 1; i <= attempts; i++ {
		s.exec(`INSERT INTO webhook_attempts (delivery_id, livemode, attempt, at, http_status, latency_ms, created_at)
			VALUES (?, ?, ?, ?, 500, 3, ?)`, id, live, i, store.Micros(at), store.Micros(at))
	}
	return id
}

func (s *seeder) requestLog(merchant string, live bool, at time.Time) string {
	id := s.id("rlog_", at)
	s.exec(`INSERT INTO request_logs (id, merchant_id, livemode, principal_id, method, path, status, request_id, latency_us, created_at)
		VALUES (?, ?, ?, 'key_1', 'POST', '/v1/payment_intents', 201, ?, 1000, ?)`, id, merchant, live, "req_"+id, store.Micros(at))
	return id
}

// key writes an idempotency key claimed at created whose answer was stored
// (or, in flight, whose claim lapses) at until.
func (s *seeder) key(merchant string, live bool, state string, created, until time.Time) string {
	s.seq++
	k := fmt.Sprintf("key-%d", s.seq)
	s.exec(`INSERT INTO idempotency_keys (merchant_id, livemode, principal_id, idem_key, method, path, request_hash, state,
		status_code, locked_until, created_at) VALUES (?, ?, 'key_1', ?, 'POST', '/v1/payment_intents', 'h', ?, 201, ?, ?)`,
		merchant, live, k, state, store.Micros(until), store.Micros(created))
	return k
}

func exists(t testing.TB, db *store.DB, q string, args ...any) bool {
	t.Helper()
	return storetest.Count(t, db, q, args...) > 0
}

// TestHorizonsEachTableAtItsHorizon: every table loses what is past its own
// horizon, in both modes, and keeps what is an hour short of it until the
// clock passes it; an event a delivery still needs (pending) or that was
// never dispatched stays; a merchant's money and objects are untouched.
func TestHorizonsEachTableAtItsHorizon(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Millisecond)
		db.SetClock(func() time.Time { return now })
		policy := retention.Policy{Events: 10 * day, Deliveries: 5 * day, RequestLogs: 3 * day, IdempotencyKeys: 2 * day}
		s := &seeder{t: t, db: db}
		past := func(d time.Duration) time.Time { return now.Add(-d - time.Hour) }  // an hour past a horizon
		short := func(d time.Duration) time.Time { return now.Add(-d + time.Hour) } // an hour short of it

		type row struct {
			what  string
			query string
			arg   string
			goes  bool // at now
			later bool // two hours later
		}
		var rows []row
		ev := func(what, id string, goes, later bool) {
			rows = append(rows, row{what, "SELECT COUNT(*) FROM events WHERE id = ?", id, goes, later})
		}
		del := func(what, id string, goes, later bool) {
			rows = append(rows, row{what, "SELECT COUNT(*) FROM webhook_deliveries WHERE id = ?", id, goes, later},
				row{what + "'s attempts", "SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id = ?", id, goes, later})
		}
		for _, live := range []bool{true, false} {
			mode := map[bool]string{true: "live", false: "test"}[live]
			ev(mode+" event past its horizon", s.event("mer_a", live, past(policy.Events), true), true, true)
			ev(mode+" event short of its horizon", s.event("mer_a", live, short(policy.Events), true), false, true)
			ev(mode+" event never dispatched", s.event("mer_a", live, past(policy.Events), false), false, false)
			e := s.event("mer_a", live, past(policy.Events), true)
			ev(mode+" event with a pending delivery", e, false, false)
			del(mode+" pending delivery", s.delivery("mer_a", live, e, past(policy.Events), "pending", 2), false, false)
			e = s.event("mer_a", live, past(policy.Events), true)
			ev(mode+" event with finished deliveries", e, true, true)
			// A redelivery made yesterday: kept by the delivery horizon, it
			// goes with its event.
			del(mode+" recent delivery of an old event", s.delivery("mer_a", live, e, now.Add(-day), "succeeded", 1), true, true)
			e = s.event("mer_b", live, short(policy.Events), true)
			ev(mode+" recent event with deliveries", e, false, true)
			del(mode+" failed delivery past its horizon", s.delivery("mer_b", live, e, past(policy.Deliveries), "failed", 3), true, true)
			del(mode+" succeeded delivery short of its horizon", s.delivery("mer_b", live, e, short(policy.Deliveries), "succeeded", 1), false, true)
			del(mode+" pending delivery past the delivery horizon", s.delivery("mer_b", live, s.event("mer_b", live, now, true), past(policy.Deliveries), "pending", 1), false, false)

			rl := func(what, id string, goes, later bool) {
				rows = append(rows, row{what, "SELECT COUNT(*) FROM request_logs WHERE id = ?", id, goes, later})
			}
			rl(mode+" request log past its horizon", s.requestLog("mer_a", live, past(policy.RequestLogs)), true, true)
			rl(mode+" request log short of its horizon", s.requestLog("mer_a", live, short(policy.RequestLogs)), false, true)

			key := func(what, k string, goes, later bool) {
				rows = append(rows, row{what, "SELECT COUNT(*) FROM idempotency_keys WHERE idem_key = ?", k, goes, later})
			}
			key(mode+" key answered past its horizon", s.key("mer_a", live, "done", past(policy.IdempotencyKeys), past(policy.IdempotencyKeys)), true, true)
			key(mode+" key answered short of its horizon", s.key("mer_a", live, "done", short(policy.IdempotencyKeys), short(policy.IdempotencyKeys)), false, true)
			key(mode+" key claimed long ago, answered short of its horizon", s.key("mer_a", live, "done", past(policy.IdempotencyKeys+day), short(policy.IdempotencyKeys)), false, true)
			key(mode+" key in flight whose claim lapsed past its horizon", s.key("mer_a", live, "in_flight", past(policy.IdempotencyKeys), past(policy.IdempotencyKeys)), true, true)
			key(mode+" key in flight still held", s.key("mer_a", live, "in_flight", past(policy.IdempotencyKeys), now.Add(10*time.Second)), false, false)
		}
		// A merchant's money and objects, all older than every horizon.
		old := now.Add(-400 * day)
		db.SetClock(func() time.Time { return old })
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: "mer_a", Livemode: true, Kind: "sandbox_topup", Entries: []ledger.Entry{
				{Account: ledger.AccountRef{MerchantID: "mer_a", Livemode: true, Currency: "DJF", Kind: ledger.Available}, Amount: 700},
				{Account: ledger.AccountRef{MerchantID: "mer_a", Livemode: true, Currency: "DJF", Kind: ledger.SandboxFunding}, Amount: -700}}})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		db.SetClock(func() time.Time { return now })
		s.exec("INSERT INTO merchants (id, name, created_at) VALUES ('mer_a', 'a', ?)", store.Micros(old))
		s.exec(`INSERT INTO payment_intents (id, merchant_id, livemode, status, amount_minor, currency, provider, flow, created_at, updated_at)
			VALUES (?, 'mer_a', ?, 'succeeded', 700, 'DJF', 'sandbox', 'redirect', ?, ?)`, s.id("pi_", old), true, store.Micros(old), store.Micros(old))
		merchantData := func() string {
			return fmt.Sprint(storetest.Count(t, db, "SELECT COUNT(*) FROM payment_intents"),
				storetest.Count(t, db, "SELECT COUNT(*) FROM ledger_entries"), storetest.Count(t, db, "SELECT COUNT(*) FROM ledger_transactions"))
		}
		before := merchantData()

		check := func(later bool) {
			t.Helper()
			for _, r := range rows {
				goes := r.goes
				if later {
					goes = r.later
				}
				if got := exists(t, db, r.query, r.arg); got == goes {
					t.Errorf("%s: present %v, want %v", r.what, got, !goes)
				}
			}
		}
		h := &retention.Horizons{DB: db, Policy: policy, Batch: 3}
		removed, err := h.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		check(false)
		want := retention.Removed{Events: 4, Deliveries: 4, Attempts: 8, RequestLogs: 2, IdempotencyKeys: 4}
		if removed != want {
			t.Errorf("removed %+v, want %+v", removed, want)
		}
		// Two hours on, what was an hour short is an hour past.
		later := now.Add(2 * time.Hour)
		db.SetClock(func() time.Time { return later })
		if _, err := h.Run(ctx); err != nil {
			t.Fatal(err)
		}
		check(true)
		if after := merchantData(); after != before {
			t.Errorf("intents, ledger entries, ledger transactions: %s before the purge, %s after", before, after)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}

// TestHorizonsAndTheSandboxPurge: a policy longer than the sandbox's 30 days
// keeps live events that long, while test-mode events still go at 30 days;
// the sandbox purge never touches live ones.
func TestHorizonsAndTheSandboxPurge(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		s := &seeder{t: t, db: db}
		live := s.event("mer_a", true, now.Add(-31*day), true)
		test := s.event("mer_a", false, now.Add(-31*day), true)
		h := &retention.Horizons{DB: db, Policy: retention.Policy{Events: 60 * day, Deliveries: 60 * day, IdempotencyKeys: day}}
		if _, err := h.Run(ctx); err != nil {
			t.Fatal(err)
		}
		p := retention.Purger{DB: db, Tables: []retention.Table{{Name: "events"}}}
		if _, err := p.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if !exists(t, db, "SELECT COUNT(*) FROM events WHERE id = ?", live) {
			t.Error("a live event 31 days old went under a 60-day policy")
		}
		if exists(t, db, "SELECT COUNT(*) FROM events WHERE id = ?", test) {
			t.Error("a test-mode event 31 days old stayed: the sandbox purge keeps test data 30 days")
		}
	})
}

// TestHorizonsTwoRunsAtOnce: two runs started together — one purging
// deliveries, the other events with their deliveries, both purging request
// logs and keys — remove every row exactly once between them, with no error
// and no row left, and neither waits forever on the other.
func TestHorizonsTwoRunsAtOnce(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		s := &seeder{t: t, db: db}
		const n = 600
		old := now.Add(-40 * day)
		for i := 0; i < n; i++ {
			at := old.Add(time.Duration(i) * time.Second)
			e := s.event("mer_a", i%2 == 0, at, true)
			s.delivery("mer_a", i%2 == 0, e, at, "succeeded", 1)
			s.requestLog("mer_a", i%2 == 0, at)
			s.key("mer_a", i%2 == 0, "done", at, at)
		}
		runs := []*retention.Horizons{
			{DB: db, Policy: retention.Policy{Deliveries: 30 * day, RequestLogs: 30 * day, IdempotencyKeys: day}, Batch: 50},
			{DB: db, Policy: retention.Policy{Events: 30 * day, RequestLogs: 30 * day, IdempotencyKeys: day}, Batch: 50},
		}
		results := make([]retention.Removed, len(runs))
		errs := make([]error, len(runs))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, h := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = h.Run(ctx)
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		close(start)
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			t.Fatal("the two runs did not finish within two minutes")
		}
		var total retention.Removed
		for i := range runs {
			if errs[i] != nil {
				t.Fatalf("run %d: %v", i, errs[i])
			}
			total.Events += results[i].Events
			total.Deliveries += results[i].Deliveries
			total.Attempts += results[i].Attempts
			total.RequestLogs += results[i].RequestLogs
			total.IdempotencyKeys += results[i].IdempotencyKeys
		}
		if want := (retention.Removed{Events: n, Deliveries: n, Attempts: n, RequestLogs: n, IdempotencyKeys: n}); total != want {
			t.Errorf("the two runs removed %+v between them, want %+v", total, want)
		}
		for _, table := range []string{"events", "webhook_deliveries", "webhook_attempts", "request_logs", "idempotency_keys"} {
			if left := storetest.Count(t, db, "SELECT COUNT(*) FROM "+table); left != 0 {
				t.Errorf("%d rows left in %s", left, table)
			}
		}
	})
}

// TestHorizonsReadThroughIndexes: each batch's search reads an index in the
// order of its range (so a run's cost follows what it removes, not the
// table's size), on both engines.
func TestHorizonsReadThroughIndexes(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		cut := store.Micros(time.Now())
		for _, c := range []struct {
			q    string
			args []any
			want []string // any of these index names in the plan
		}{
			{`SELECT id FROM events WHERE id > ? AND id < ? AND created_at < ? AND dispatched_at IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id AND d.status = 'pending') ORDER BY id LIMIT 500`,
				[]any{"", "evt_Z", cut}, []string{"events_pkey", "sqlite_autoindex_events_1"}},
			{`SELECT id FROM webhook_deliveries WHERE id > ? AND id < ? AND created_at < ? AND status <> 'pending' ORDER BY id LIMIT 500`,
				[]any{"", "whdel_Z", cut}, []string{"webhook_deliveries_pkey", "sqlite_autoindex_webhook_deliveries_1"}},
			{`SELECT id FROM request_logs WHERE created_at < ? ORDER BY created_at LIMIT 500`, []any{cut}, []string{"request_logs_age"}},
			{`SELECT merchant_id FROM idempotency_keys WHERE created_at < ? AND locked_until < ? ORDER BY created_at LIMIT 500`,
				[]any{cut, cut}, []string{"idempotency_keys_created"}},
		} {
			plan := storetest.QueryPlan(t, db, c.q, c.args...)
			found := false
			for _, w := range c.want {
				found = found || strings.Contains(plan, w)
			}
			if !found {
				t.Errorf("%s\nreads through none of %v:\n%s", c.q, c.want, plan)
			}
		}
	})
}
