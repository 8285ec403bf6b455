package keyedload

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/webhook"
)

// WaitSettled waits until no payout or intent is still on its way; past
// within it fails the test.
func WaitSettled(t *testing.T, db *store.DB, within time.Duration) {
	t.Helper()
	ctx := context.Background()
	var n int
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		err := db.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM payouts WHERE status NOT IN ('succeeded','failed','canceled'))
			+ (SELECT COUNT(*) FROM payment_intents WHERE status NOT IN ('succeeded','failed','canceled'))`).Scan(&n)
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d payouts or intents still on their way after %v (err %v)", n, within, err)
		}
	}
}

// CheckAnswers holds every key to its stored answer: each answer the client
// got (first runs and replays alike) is the stored one byte for byte, no key
// is left in flight, and one more send of every request replays it.
func CheckAnswers(t *testing.T, db *store.DB, c *Client) {
	t.Helper()
	ctx := context.Background()
	var open int
	if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM idempotency_keys WHERE state <> 'done'").Scan(&open); err != nil {
		t.Fatal(err)
	}
	if open != 0 {
		t.Errorf("%d idempotency keys left in flight", open)
	}
	answers := c.Answers()
	mismatched := 0
	for key, got := range answers {
		var status int
		var body []byte
		if err := db.QueryRow(ctx, "SELECT status_code, body FROM idempotency_keys WHERE idem_key = ? AND state = 'done'", key).Scan(&status, &body); err != nil {
			t.Errorf("key %s: no stored answer: %v", key, err)
			continue
		}
		for _, a := range got {
			if a.Status != status || !bytes.Equal(a.Body, body) {
				if mismatched++; mismatched <= 5 {
					t.Errorf("key %s: answered %d %s, stored %d %s", key, a.Status, a.Body, status, body)
				}
			}
		}
	}
	// Every request once more: the stored answer, replayed.
	c.mu.Lock()
	reqs := make(map[string]sent, len(c.requests))
	for k, v := range c.requests {
		reqs[k] = v
	}
	c.mu.Unlock()
	for key, r := range reqs {
		p := c.Fleet.Pick(nil)
		if p == nil {
			t.Fatal("replay: no process is up")
		}
		a, err := c.Once(p, key, r.path, r.body)
		if err != nil {
			t.Fatalf("replay %s: %v", key, err)
		}
		want := answers[key]
		if !a.Replayed || len(want) == 0 || a.Status != want[0].Status || !bytes.Equal(a.Body, want[0].Body) {
			if mismatched++; mismatched <= 10 {
				t.Errorf("replay of %s: %d replayed=%v %s", key, a.Status, a.Replayed, a.Body)
			}
		}
	}
	if mismatched > 0 {
		t.Errorf("%d answers differ from the stored ones", mismatched)
	}
}

// CheckEffects holds the database to exactly one effect per key: every
// acknowledged create's object is there once and no key made a second one
// (by description, which Drive sets to the key), one intent per intent key
// and one payout per payout key (and no others), each settled once, each
// event recorded once, each ledger transaction posted once, and a book that
// ledger.Verify passes (balance and one posting of each kind per source).
func CheckEffects(t *testing.T, db *store.DB, w Workload, res *Result) {
	t.Helper()
	ctx := context.Background()
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	distinct := func(m map[string]string) int {
		seen := map[string]bool{}
		for _, id := range m {
			seen[id] = true
		}
		return len(seen)
	}
	res.mu.Lock()
	defer res.mu.Unlock()
	if len(res.Intents) != w.Intents || distinct(res.Intents) != w.Intents {
		t.Errorf("%d intent keys answered with %d distinct intents, want %d", len(res.Intents), distinct(res.Intents), w.Intents)
	}
	if len(res.Payouts) != w.Payouts || distinct(res.Payouts) != w.Payouts {
		t.Errorf("%d payout keys answered with %d distinct payouts, want %d", len(res.Payouts), distinct(res.Payouts), w.Payouts)
	}
	// Every acknowledged create's object is there, once; no key made two.
	wrong := 0
	for _, kind := range []struct {
		table string
		ids   map[string]string
	}{{"payment_intents", res.Intents}, {"payouts", res.Payouts}} {
		for key, id := range kind.ids {
			byID := count("SELECT COUNT(*) FROM "+kind.table+" WHERE id = ?", id)
			byKey := count("SELECT COUNT(*) FROM "+kind.table+" WHERE description = ?", key)
			if byID != 1 || byKey > 1 {
				if wrong++; wrong <= 5 {
					t.Errorf("key %s: its answered object %s is there %d times; %d made under the key", key, id, byID, byKey)
				}
			}
		}
	}
	checks := []struct {
		what      string
		got, want int
	}{
		{"payment intents", count("SELECT COUNT(*) FROM payment_intents"), w.Intents},
		{"succeeded payment intents", count("SELECT COUNT(*) FROM payment_intents WHERE status = 'succeeded'"), w.Intents},
		{"payouts", count("SELECT COUNT(*) FROM payouts"), w.Payouts},
		{"succeeded payouts", count("SELECT COUNT(*) FROM payouts WHERE status = 'succeeded'"), w.Payouts},
		{"payment_intent.created events", count("SELECT COUNT(*) FROM events WHERE type = 'payment_intent.created'"), w.Intents},
		{"payment_intent.succeeded events", count("SELECT COUNT(*) FROM events WHERE type = 'payment_intent.succeeded'"), w.Intents},
		{"payout.created events", count("SELECT COUNT(*) FROM events WHERE type = 'payout.created'"), w.Payouts},
		{"payout.succeeded events", count("SELECT COUNT(*) FROM events WHERE type = 'payout.succeeded'"), w.Payouts},
		{"events recorded more than once", count(`SELECT COUNT(*) FROM (SELECT object_id, type FROM events
			GROUP BY object_id, type HAVING COUNT(*) > 1) d`), 0},
		{"ledger transactions recorded more than once", count(`SELECT COUNT(*) FROM (SELECT reference, kind FROM ledger_transactions
			GROUP BY reference, kind HAVING COUNT(*) > 1) d`), 0},
		{"succeeded intents without exactly one ledger transaction", count(`SELECT COUNT(*) FROM payment_intents p WHERE status = 'succeeded'
			AND (SELECT COUNT(*) FROM ledger_transactions l WHERE l.reference = p.id) <> 1`), 0},
		{"payouts without their reserve and paid transactions", count(`SELECT COUNT(*) FROM payouts p
			WHERE (SELECT COUNT(*) FROM ledger_transactions l WHERE l.reference = p.id) <> 2`), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	if err := ledger.Verify(ctx, db); err != nil {
		t.Errorf("ledger: %v", err)
	}
}

// Receiver is a webhook endpoint counting deliveries by event id.
type Receiver struct {
	URL string
	mu  sync.Mutex
	got map[string]int
}

// NewReceiver starts a receiver, closed when the test ends.
func NewReceiver(t *testing.T) *Receiver {
	r := &Receiver{got: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		id := req.Header.Get(webhook.HeaderEventID)
		r.mu.Lock()
		r.got[id]++
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hook"
	return r
}

// Received returns the deliveries so far, by event id.
func (r *Receiver) Received() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := make(map[string]int, len(r.got))
	for k, v := range r.got {
		m[k] = v
	}
	return m
}

// CheckDelivered waits (up to within) until the receiver has had every
// test-mode event recorded in db since the first webhook endpoint was made,
// and fails on an event delivered that db does not have (a lost write). It
// returns the events recorded, the distinct events delivered and the
// deliveries (a retried delivery counts again: receivers de-duplicate by
// event id).
func CheckDelivered(t *testing.T, db *store.DB, r *Receiver, within time.Duration) (events, delivered, deliveries int) {
	t.Helper()
	want := map[string]bool{}
	rows, err := db.Query(context.Background(), `SELECT id FROM events WHERE livemode = ?
		AND created_at >= (SELECT MIN(created_at) FROM webhook_endpoints)`, false)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		want[id] = true
	}
	rows.Close()
	var got map[string]int
	deadline := time.Now().Add(within)
	for {
		got = r.Received()
		missing := 0
		for id := range want {
			if got[id] == 0 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%d of %d events not delivered within %v", missing, len(want), within)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var phantom []string
	for id, n := range got {
		deliveries += n
		if !want[id] {
			phantom = append(phantom, id)
		}
	}
	slices.Sort(phantom)
	if len(phantom) > 0 {
		t.Errorf("%d events delivered that the database does not have (lost writes?): %v", len(phantom), phantom[:min(5, len(phantom))])
	}
	return len(want), len(got), deliveries
}

// Summary is a one-line account of a client's sends, for the log.
func (c *Client) Summary() string {
	n503, other, _ := c.FiveCounts()
	return fmt.Sprintf("%d sends, %d lost to a dropped connection, %d answered 503, %d other 5xx, %d 409 in use, %d replayed",
		c.Tries.Load(), c.Dropped.Load(), n503, other, c.InUse.Load(), c.Replays.Load())
}
