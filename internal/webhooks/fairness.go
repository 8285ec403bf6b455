package webhooks

import (
	"context"
	"database/sql"
	"sort"
	"sync"
	"time"

	"github.com/payd/payd/internal/store"
)

// Fair shares of the delivery slots. An attempt to an endpoint that never
// answers holds its slot for the whole attempt timeout, so without caps a
// merchant with many such deliveries would fill every slot and make every
// other merchant wait. The caps count attempts in flight across every payd
// process sharing the database (leased deliveries), not only this one's.
const (
	// DefaultEndpointConcurrency is how many attempts to one endpoint may be
	// in flight at once.
	DefaultEndpointConcurrency = 8
	// DefaultMerchantConcurrency is how many attempts to one merchant's
	// endpoints (both modes) may be in flight at once.
	DefaultMerchantConcurrency = 16
)

// claimLockID serialises claims across processes on PostgreSQL, so the
// in-flight counts a claim reads are still true when it leases (two claims
// at once could each see room for the same slot). SQLite's immediate
// transactions are already one at a time. A claim is a few short queries.
// The key is a number that earlier versions take too, so a rolling deploy
// keeps old and new processes serialised.
const claimLockID = 0x7061796477686b // "paydwhk"

// dueWork is one endpoint's share of the claim: its due deliveries and its
// attempts in flight.
type dueWork struct {
	endpointID string
	merchantID string
	due        int   // deliveries due now
	oldest     int64 // when the oldest of them was due (micros)
	inflight   int   // attempts in flight (every process)
	fast       bool  // its recent attempts all ended quickly: it may borrow idle slots
	take       int   // allotted by allocate
	maxRate    int   // the endpoint's max_rate (0: no limit)
}

// allocate shares n free slots among endpoints with due deliveries, filling
// the emptiest first: each slot goes to the merchant with the fewest
// attempts in flight (counting slots already given out in this claim, the
// longest-waiting first on a tie), and within it to its endpoint with the
// fewest; an endpoint never passes epCap in flight, a merchant never
// mCap. A merchant with a healthy receiver therefore gets a slot as soon as
// one frees, however many deliveries another merchant has waiting. Slots
// that no one can take under the caps then go to fast endpoints (see
// fastTracker), fewest in flight first: a receiver that answers in
// milliseconds is not held to the caps' pace when nobody waits, and gives
// its slots back within milliseconds when someone does. It reports whether
// due work is left over (because of n or of the caps).
func allocate(work []*dueWork, merchantInflight map[string]int, n, epCap, mCap int) (left bool) {
	type merchant struct {
		id     string
		busy   int // in flight plus taken now
		oldest int64
		eps    []*dueWork
		stuck  bool // no room left
	}
	byID := map[string]*merchant{}
	var ms []*merchant
	for _, w := range work {
		m := byID[w.merchantID]
		if m == nil {
			m = &merchant{id: w.merchantID, busy: merchantInflight[w.merchantID], oldest: w.oldest}
			byID[w.merchantID] = m
			ms = append(ms, m)
		}
		m.eps = append(m.eps, w)
		m.oldest = min(m.oldest, w.oldest)
	}
	sort.Slice(ms, func(i, j int) bool {
		return ms[i].oldest < ms[j].oldest || ms[i].oldest == ms[j].oldest && ms[i].id < ms[j].id
	})
	for n > 0 {
		var pick *merchant
		for _, m := range ms {
			if m.stuck {
				continue
			}
			if m.busy >= mCap {
				m.stuck = true
				continue
			}
			if pick == nil || m.busy < pick.busy {
				pick = m
			}
		}
		if pick == nil {
			break
		}
		var ep *dueWork
		for _, w := range pick.eps {
			if w.take >= w.due || w.inflight+w.take >= epCap {
				continue
			}
			if ep == nil || w.inflight+w.take < ep.inflight+ep.take ||
				w.inflight+w.take == ep.inflight+ep.take && w.oldest < ep.oldest {
				ep = w
			}
		}
		if ep == nil {
			pick.stuck = true
			continue
		}
		ep.take++
		pick.busy++
		n--
	}
	for n > 0 {
		var ep *dueWork
		for _, w := range work {
			if !w.fast || w.take >= w.due {
				continue
			}
			if ep == nil || w.inflight+w.take < ep.inflight+ep.take {
				ep = w
			}
		}
		if ep == nil {
			break
		}
		ep.take++
		n--
	}
	for _, w := range work {
		if w.take < w.due {
			return true
		}
	}
	return false
}

// fastAttempts is how many attempts in a row must end (with any answer, or
// a refused connection) within fastLatency for an endpoint to borrow idle
// slots beyond its cap. The caps exist because a slot is held for as long
// as an attempt lasts; an endpoint whose attempts end in milliseconds holds
// none for long, whatever it answers.
const (
	fastAttempts = 8
	fastLatency  = time.Second
	// fastTracked bounds the endpoints remembered (the map is cleared when
	// it would grow past it; endpoints then earn their place again).
	fastTracked = 10000
)

// fastTracker remembers, per endpoint, how many attempts in a row this
// process saw end within fastLatency. An endpoint that never answers or
// answers slowly is never fast, so it is held to its cap from its first
// attempt.
type fastTracker struct {
	mu     sync.Mutex
	streak map[string]int
}

func (f *fastTracker) observe(endpointID string, o outcome) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.streak == nil {
		f.streak = map[string]int{}
	}
	if o.latency >= fastLatency {
		delete(f.streak, endpointID)
		return
	}
	if _, ok := f.streak[endpointID]; !ok && len(f.streak) >= fastTracked {
		clear(f.streak)
	}
	f.streak[endpointID] = min(f.streak[endpointID]+1, fastAttempts)
}

func (f *fastTracker) fast(endpointID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streak[endpointID] >= fastAttempts
}

// dueWorkAt reads, per endpoint with due deliveries (at most limit of
// them counted: no endpoint can take more in one claim), the due
// deliveries and the attempts in flight (leases not yet expired), and the
// attempts in flight per merchant. Endpoints payd's circuit breaker
// disabled are left out: their deliveries wait, neither attempted nor failed,
// until the endpoint is enabled again (deliveries to a deleted endpoint, or
// one the merchant disabled, are still claimed, to end failed).
//
// Its cost does not grow with the number of deliveries waiting: the
// endpoints with pending deliveries are walked on the index of pending
// deliveries by endpoint (a loose index scan, one seek per endpoint), and
// each is asked for its oldest due delivery and whether it has at least
// limit due, both seeks on the same index (counted exactly only when fewer).
// The sub-selects order by (endpoint_id, next_attempt_at), the index's own
// order: ordered by next_attempt_at alone, PostgreSQL walked the index of
// due times instead, ten times slower.
func dueWorkAt(ctx context.Context, tx *store.Tx, now int64, limit int) ([]*dueWork, map[string]int, error) {
	inflight := map[string]int{}
	merchantInflight := map[string]int{}
	rows, err := tx.Query(ctx, `SELECT endpoint_id, merchant_id, COUNT(*) FROM webhook_deliveries
		WHERE lease IS NOT NULL AND status = 'pending' AND next_attempt_at > ? GROUP BY endpoint_id, merchant_id`, now)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var ep, m string
		var k int
		if err := rows.Scan(&ep, &m, &k); err != nil {
			rows.Close()
			return nil, nil, err
		}
		inflight[ep] += k
		merchantInflight[m] += k
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	limit = max(limit, 1)
	rows, err = tx.Query(ctx, `WITH RECURSIVE eps(id) AS (
			SELECT * FROM (SELECT endpoint_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1) f0
			UNION ALL
			SELECT (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.endpoint_id > eps.id
				ORDER BY d.endpoint_id LIMIT 1) FROM eps WHERE eps.id IS NOT NULL
		), due AS (
			SELECT eps.id,
				(SELECT d.next_attempt_at FROM webhook_deliveries d WHERE d.endpoint_id = eps.id AND d.status = 'pending'
					AND d.next_attempt_at <= ? ORDER BY d.endpoint_id, d.next_attempt_at LIMIT 1) AS oldest,
				(SELECT d.id FROM webhook_deliveries d WHERE d.endpoint_id = eps.id AND d.status = 'pending' AND d.next_attempt_at <= ?
					ORDER BY d.endpoint_id, d.next_attempt_at LIMIT 1 OFFSET ?) AS enough
			FROM eps WHERE eps.id IS NOT NULL
		)
		SELECT due.id, COALESCE(e.merchant_id, (SELECT d.merchant_id FROM webhook_deliveries d WHERE d.endpoint_id = due.id LIMIT 1)),
			due.oldest,
			CASE WHEN due.enough IS NOT NULL THEN ? ELSE (SELECT COUNT(*) FROM webhook_deliveries d WHERE d.endpoint_id = due.id
				AND d.status = 'pending' AND d.next_attempt_at <= ?) END,
			CASE WHEN e.id IS NOT NULL AND e.status = 'disabled' AND e.disabled_reason IS NOT NULL AND e.deleted_at IS NULL THEN 1 ELSE 0 END,
			COALESCE(e.max_rate, 0)
		FROM due LEFT JOIN webhook_endpoints e ON e.id = due.id
		WHERE due.oldest IS NOT NULL ORDER BY due.id`, now, now, limit-1, limit, now)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var work []*dueWork
	for rows.Next() {
		w := &dueWork{}
		var paused int
		if err := rows.Scan(&w.endpointID, &w.merchantID, &w.oldest, &w.due, &paused, &w.maxRate); err != nil {
			return nil, nil, err
		}
		if paused != 0 || w.due == 0 {
			continue
		}
		w.inflight = inflight[w.endpointID]
		work = append(work, w)
	}
	return work, merchantInflight, rows.Err()
}

// pausedNow re-reads the endpoints a claim is about to serve and reports
// those the breaker has disabled since dueWorkAt read them. On PostgreSQL
// the rows are locked FOR SHARE until the claim commits, so a breaker
// disabling one of them either committed before (and is seen here) or
// waits for the claim (and then finds its leases): no attempt to an endpoint
// starts after payd disabled it unless it was claimed before.
func pausedNow(ctx context.Context, tx *store.Tx, work []*dueWork) (map[string]bool, error) {
	var ids []string
	for _, w := range work {
		if w.take > 0 {
			ids = append(ids, w.endpointID)
		}
	}
	if len(ids) == 0 || !tx.Engine().ConcurrentWriters() {
		// One writer (SQLite): the claim's transaction is the only one,
		// so what dueWorkAt read still holds.
		return nil, nil
	}
	sort.Strings(ids)
	// Every row is locked, whatever its status: a filter in SQL would skip
	// (and not wait for) a row whose disabling is not committed yet.
	rows, err := tx.Query(ctx, `SELECT id, status, disabled_reason, deleted_at FROM webhook_endpoints
		WHERE id IN (`+store.Placeholders(len(ids))+`) ORDER BY id`+tx.Dialect().ForShare(), store.Args(ids)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id, status string
		var reason sql.NullString
		var deleted sql.NullInt64
		if err := rows.Scan(&id, &status, &reason, &deleted); err != nil {
			return nil, err
		}
		out[id] = status == EndpointDisabled && reason.Valid && !deleted.Valid
	}
	return out, rows.Err()
}
