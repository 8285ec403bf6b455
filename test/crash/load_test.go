package crash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
)

// fleet is the payd processes serving one database.
type fleet struct {
	procs []*proc
	rr    atomic.Uint64
	// restart is held while killAll's goroutine starts the processes
	// again, so that two restarts never race to start the same process.
	restart sync.Mutex
}

// pick returns a process that is up, another than avoid when there is one;
// nil when none is up.
func (f *fleet) pick(avoid *proc) *proc {
	n := len(f.procs)
	start := int(f.rr.Add(1))
	var fallback *proc
	for i := 0; i < n; i++ {
		p := f.procs[(start+i)%n]
		if !p.up.Load() {
			continue
		}
		if p != avoid {
			return p
		}
		fallback = p
	}
	return fallback
}

// answer is one HTTP answer a client received.
type answer struct {
	status   int
	body     []byte
	replayed bool
}

func (a answer) code() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(a.body, &e)
	return e.Error.Code
}

// sent is an idempotent request as the client sends it, every time.
type sent struct {
	path string
	body []byte
}

// client sends idempotent requests the way a careful merchant does: each
// with its key, retried with the same key on another process until it gets
// an answer that is not a failure of payd's (no connection, 5xx, 409 while
// the first run still holds the key).
type client struct {
	t      *testing.T
	f      *fleet
	apiKey string
	http   *http.Client
	// patience bounds the retries of one request.
	patience time.Duration

	mu       sync.Mutex
	requests map[string]sent
	answers  map[string][]answer // every final answer, by Idempotency-Key

	tries, dropped, fives, inUse, replays atomic.Int64
	answered                              atomic.Int64
	fiveMu                                sync.Mutex
	fiveSamples                           []string // the first 5xx answers, with who answered, for the log
}

// maxFiveSamples is how many 5xx answers a client keeps for the log.
const maxFiveSamples = 5

func newClient(t *testing.T, f *fleet, apiKey string) *client {
	return &client{t: t, f: f, apiKey: apiKey, patience: 90 * time.Second,
		http:     &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		requests: map[string]sent{}, answers: map[string][]answer{}}
}

// post sends one idempotent request until it is answered; ok is false when
// it never was (patience ran out).
func (c *client) post(key, path string, body any) (answer, bool) {
	raw, _ := json.Marshal(body)
	c.mu.Lock()
	c.requests[key] = sent{path, raw}
	c.mu.Unlock()
	var last *proc
	deadline := time.Now().Add(c.patience)
	for time.Now().Before(deadline) {
		p := c.f.pick(last)
		if p == nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		last = p
		c.tries.Add(1)
		a, err := c.once(p, key, path, raw)
		switch {
		case err != nil:
			c.dropped.Add(1) // the process died (or was never up): another one
			continue
		case a.status >= 500:
			c.fives.Add(1)
			c.fiveMu.Lock()
			if len(c.fiveSamples) < maxFiveSamples {
				c.fiveSamples = append(c.fiveSamples, fmt.Sprintf("%s answered POST %s (key %s, send %d): %d %s",
					p.name, path, key, c.tries.Load(), a.status, a.body))
			}
			c.fiveMu.Unlock()
			time.Sleep(10 * time.Millisecond)
			continue
		case a.status == http.StatusConflict && a.code() == "idempotency_key_in_use":
			c.inUse.Add(1)
			time.Sleep(25 * time.Millisecond)
			continue
		}
		if a.replayed {
			c.replays.Add(1)
		}
		c.mu.Lock()
		c.answers[key] = append(c.answers[key], a)
		c.mu.Unlock()
		c.answered.Add(1)
		return a, true
	}
	c.t.Errorf("%s %s (key %s): no answer within %v", "POST", path, key, c.patience)
	return answer{}, false
}

// fiveAnswers returns the 5xx answers kept, each followed by the log lines of
// every process about its request id (the cause of an internal error is
// logged there, never answered).
func (c *client) fiveAnswers() string {
	c.fiveMu.Lock()
	defer c.fiveMu.Unlock()
	var b strings.Builder
	for _, s := range c.fiveSamples {
		b.WriteString("\n" + s + logLines(c.f, s))
	}
	return b.String()
}

func (c *client) once(p *proc, key, path string, raw []byte) (answer, error) {
	req, err := http.NewRequest("POST", p.url+path, bytes.NewReader(raw))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{status: resp.StatusCode, body: b, replayed: resp.Header.Get("Idempotent-Replayed") == "true"}, nil
}

// get reads a resource from any process that is up.
func (c *client) get(path string, v any) error {
	for deadline := time.Now().Add(c.patience); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		p := c.f.pick(nil)
		if p == nil {
			continue
		}
		req, _ := http.NewRequest("GET", p.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
		resp, err := c.http.Do(req)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return json.Unmarshal(b, v)
	}
	return fmt.Errorf("GET %s: no process answered", path)
}

// workload is how many of each operation a run makes: intents are created
// then confirmed (two keyed requests each), payouts created (one).
type workload struct {
	intents, payouts int
	// live: payment intents on a live rail (push approval, no confirm).
	live     bool
	provider string
}

func (w workload) requests() int {
	if w.live {
		return w.intents
	}
	return 2*w.intents + w.payouts
}

// result is what a run created, by the key that created it.
type result struct {
	intents map[string]string // create key → intent id
	payouts map[string]string // create key → payout id
}

// drive runs the workload with clients concurrent senders.
//
// When hold is not nil, the last sixth of the workload is sent only once hold
// is closed (chaos: after its last kill), so a fast run cannot end before
// the kills it is meant to meet.
func drive(t *testing.T, c *client, w workload, clients int, hold <-chan struct{}) result {
	res := result{intents: map[string]string{}, payouts: map[string]string{}}
	var mu sync.Mutex
	type op struct {
		payout bool
		i      int
	}
	ops := make(chan op)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// create posts a keyed create until answered and records the
			// created object's id under its key in into.
			create := func(what, key, path string, body any, into map[string]string) (string, bool) {
				a, ok := c.post(key, path, body)
				if !ok {
					return "", false
				}
				var obj struct{ ID string }
				if json.Unmarshal(a.body, &obj); a.status != 201 || obj.ID == "" {
					t.Errorf("%s %s: %d %s", what, key, a.status, a.body)
					return "", false
				}
				mu.Lock()
				into[key] = obj.ID
				mu.Unlock()
				return obj.ID, true
			}
			for o := range ops {
				if o.payout {
					key := fmt.Sprintf("payout-%d", o.i)
					create("payout", key, "/v1/payouts", map[string]any{"amount": 100 + o.i%37, "currency": "DJF",
						"provider": "wallet_b", "recipient_msisdn": "+25377123456", "description": key}, res.payouts)
					continue
				}
				key := fmt.Sprintf("pi-%d", o.i)
				body := map[string]any{"amount": 500 + o.i%91, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456",
					"description": key}
				if w.live {
					body["provider"], body["customer_msisdn"] = w.provider, "+25377123123"
				}
				id, ok := create("intent", key, "/v1/payment_intents", body, res.intents)
				if !ok || w.live {
					continue
				}
				a, ok := c.post("confirm-"+key, "/v1/payment_intents/"+id+"/confirm", map[string]string{"otp": "123456"})
				if !ok {
					continue
				}
				var pi struct{ Status string }
				if json.Unmarshal(a.body, &pi); a.status != 200 || pi.Status != "succeeded" {
					t.Errorf("confirm %s: %d %s", key, a.status, a.body)
				}
			}
		}()
	}
	// Interleave the two kinds so kills land on both.
	n := max(w.intents, w.payouts)
	for i := 0; i < n; i++ {
		if hold != nil && i == n-n/6 {
			<-hold
		}
		if i < w.intents {
			ops <- op{i: i}
		}
		if i < w.payouts && !w.live {
			ops <- op{payout: true, i: i}
		}
	}
	close(ops)
	wg.Wait()
	return res
}

// chaos SIGKILLs a random process that is up each time the client's
// answered requests pass one of kills random points of the run (between 5%
// and 75% of total), and starts it again at once; it returns a function
// that stops it (when ctx ends) and reports the kills made, and a channel
// closed once it has made them all (drive holds the end of the run until
// then: every point lies before the part it holds).
func chaos(ctx context.Context, t *testing.T, f *fleet, c *client, total, kills int) (func() int, <-chan struct{}) {
	points := make([]int64, kills)
	for i := range points {
		points[i] = int64(total/20 + rand.IntN(max(total*7/10, 1)))
	}
	slices.Sort(points)
	var made atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, at := range points {
			for c.answered.Load() < at {
				select {
				case <-ctx.Done():
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
			up := []*proc{}
			for _, p := range f.procs {
				if p.up.Load() {
					up = append(up, p)
				}
			}
			p := up[rand.IntN(len(up))]
			p.kill()
			made.Add(1)
			if err := p.start(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	return func() int { <-done; return int(made.Load()) }, done
}

// checkAnswers holds every key to its stored answer: each answer a client
// got (first runs and replays alike) is the stored one byte for byte, no key
// is left in flight, and one more retry of every request replays it.
func checkAnswers(t *testing.T, db *store.DB, c *client) {
	t.Helper()
	ctx := context.Background()
	var open int
	if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM idempotency_keys WHERE state <> 'done'").Scan(&open); err != nil {
		t.Fatal(err)
	}
	if open != 0 {
		t.Errorf("%d idempotency keys left in flight", open)
	}
	c.mu.Lock()
	answers := make(map[string][]answer, len(c.answers))
	for k, v := range c.answers {
		answers[k] = v
	}
	c.mu.Unlock()
	mismatched := 0
	for key, got := range answers {
		var status int
		var body []byte
		if err := db.QueryRow(ctx, "SELECT status_code, body FROM idempotency_keys WHERE idem_key = ? AND state = 'done'", key).Scan(&status, &body); err != nil {
			t.Errorf("key %s: no stored answer: %v", key, err)
			continue
		}
		for _, a := range got {
			if a.status != status || !bytes.Equal(a.body, body) {
				if mismatched++; mismatched <= 5 {
					t.Errorf("key %s: answered %d %s, stored %d %s", key, a.status, a.body, status, body)
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
		p := c.f.pick(nil)
		a, err := c.once(p, key, r.path, r.body)
		if err != nil {
			t.Fatalf("replay %s: %v", key, err)
		}
		want := answers[key]
		if !a.replayed || len(want) == 0 || a.status != want[0].status || !bytes.Equal(a.body, want[0].body) {
			if mismatched++; mismatched <= 10 {
				t.Errorf("replay of %s: %d replayed=%v %s", key, a.status, a.replayed, a.body)
			}
		}
	}
	if mismatched > 0 {
		t.Errorf("%d answers differ from the stored ones", mismatched)
	}
}

// checkEffects holds the database to exactly one effect per key: one
// intent per create key and one payout per payout key (and no others), each
// settled once, each event once, and a balanced book.
func checkEffects(t *testing.T, db *store.DB, w workload, res result) {
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
	if len(res.intents) != w.intents || distinct(res.intents) != w.intents {
		t.Errorf("%d intent keys answered with %d distinct intents, want %d", len(res.intents), distinct(res.intents), w.intents)
	}
	if len(res.payouts) != w.payouts || distinct(res.payouts) != w.payouts {
		t.Errorf("%d payout keys answered with %d distinct payouts, want %d", len(res.payouts), distinct(res.payouts), w.payouts)
	}
	checks := []struct {
		what      string
		got, want int
	}{
		{"payment intents", count("SELECT COUNT(*) FROM payment_intents"), w.intents},
		{"succeeded payment intents", count("SELECT COUNT(*) FROM payment_intents WHERE status = 'succeeded'"), w.intents},
		{"payouts", count("SELECT COUNT(*) FROM payouts"), w.payouts},
		{"succeeded payouts", count("SELECT COUNT(*) FROM payouts WHERE status = 'succeeded'"), w.payouts},
		{"payment_intent.created events", count("SELECT COUNT(*) FROM events WHERE type = 'payment_intent.created'"), w.intents},
		{"payment_intent.succeeded events", count("SELECT COUNT(*) FROM events WHERE type = 'payment_intent.succeeded'"), w.intents},
		{"payout.created events", count("SELECT COUNT(*) FROM events WHERE type = 'payout.created'"), w.payouts},
		{"payout.succeeded events", count("SELECT COUNT(*) FROM events WHERE type = 'payout.succeeded'"), w.payouts},
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

// waitSettled waits until no payout or intent is still on its way.
func waitSettled(t *testing.T, db *store.DB, within time.Duration) {
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

func sumLogs(f *fleet) string {
	var b strings.Builder
	for _, p := range f.procs {
		fmt.Fprintf(&b, "--- %s (started %d times)\n%s\n", p.name, p.Starts(), p.Tail())
	}
	return b.String()
}
