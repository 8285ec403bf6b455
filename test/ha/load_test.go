package ha

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/testutil"
	"github.com/payd/payd/webhook"
)

const secretsKey = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"

// workload is the keyed requests of a scenario: intents created then
// confirmed (two requests each) and payouts created (one).
type workload struct{ intents, payouts int }

func (w workload) requests() int { return 2*w.intents + w.payouts }

func size() workload {
	if *long {
		return workload{intents: 500, payouts: 500}
	}
	return workload{intents: 40, payouts: 40}
}

// fleet is three `payd serve` processes on one database of the topology,
// a merchant with a funded sandbox balance, and a webhook endpoint whose
// receiver records every delivery.
type fleet struct {
	t      *testing.T
	tp     *topology
	dbName string
	procs  []*testutil.Process
	apiKey string
	hooks  *receiver
	c      *client
}

func startFleet(t *testing.T, tp *topology, dbName string, extraEnv ...string) *fleet {
	t.Helper()
	start := time.Now()
	tp.createDB(dbName)
	bin := testutil.SharedPayd(t)
	t.Logf("payd built in %v", time.Since(start).Round(time.Millisecond))
	env := append([]string{"PAYD_DATABASE_URL=" + tp.url(dbName), "PAYD_SECRETS_KEY=" + secretsKey, "PAYD_RATE_LIMIT=0",
		"PAYD_PUBLIC_RATE_LIMIT=0", "PAYD_DB_MAX_CONNS=12", "PAYD_LOG_LEVEL=warn", "PAYD_SANCTIONS_LIST=", "PAYD_DEMO=false",
		"PAYD_SANDBOX_TIMEOUT_DELAY=50ms", "PAYD_WEBHOOK_RETRY_SCHEDULE=1s,1s,2s,2s,5s,5s,10s,30s"}, extraEnv...)
	f := &fleet{t: t, tp: tp, dbName: dbName}
	for range 3 {
		f.procs = append(f.procs, testutil.NewServer(t, bin, env...))
	}
	var m struct {
		SecretKeys []string `json:"secret_keys"`
	}
	if err := json.Unmarshal(f.procs[0].Run("merchant", "create", "--name", "HA test", "--json"), &m); err != nil || len(m.SecretKeys) == 0 {
		t.Fatalf("merchant create: %v", err)
	}
	f.apiKey = m.SecretKeys[0]
	t.Logf("database made and migrated in %v", time.Since(start).Round(time.Millisecond))
	errc := make(chan error, len(f.procs))
	for _, p := range f.procs {
		go func() { errc <- p.TryServe() }()
	}
	for range f.procs {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	// A primary with a synchronous standby: no warning that answered
	// payments can be lost (internal/app tests the warning itself).
	for i, p := range f.procs {
		if lines := p.LogLines("answered payments can be lost"); len(lines) > 0 {
			t.Errorf("payd %d warned at start on a primary with a synchronous standby: %s", i, lines[0])
		}
	}
	t.Cleanup(func() {
		for _, p := range f.procs {
			p.Kill()
		}
		if t.Failed() {
			for i, p := range f.procs {
				t.Logf("--- payd %d (started %d times)\n%s", i, p.Starts(), p.Tail())
			}
		}
	})
	f.c = newClient(t, f.procs, f.apiKey)
	f.hooks = newReceiver(t)
	a := f.c.post("endpoint", "/v1/webhook_endpoints", map[string]any{"url": f.hooks.url, "enabled_events": []string{"*"}})
	if a.status != 201 {
		t.Fatalf("webhook endpoint: %d %s", a.status, a.body)
	}
	if a := f.c.post("topup", "/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 10_000_000}); a.status != 201 {
		t.Fatalf("top-up: %d %s", a.status, a.body)
	}
	f.c.reset()
	t.Logf("three payd processes serving in %v", time.Since(start).Round(time.Millisecond))
	return f
}

// receiver is a webhook endpoint counting deliveries by event id.
type receiver struct {
	url string
	mu  sync.Mutex
	got map[string]int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{got: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		id := req.Header.Get(webhook.HeaderEventID)
		r.mu.Lock()
		r.got[id]++
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hook"
	return r
}

func (r *receiver) received() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := make(map[string]int, len(r.got))
	for k, v := range r.got {
		m[k] = v
	}
	return m
}

// answer is one HTTP answer.
type answer struct {
	status int
	body   []byte
}

func (a answer) code() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(a.body, &e)
	return e.Error.Code
}

// attempt is one send of a request: when it left, when it was answered (or
// failed), and the status (0: no answer).
type attempt struct {
	sent, done time.Time
	status     int
}

// client sends keyed requests as a careful merchant does: each retried with
// its key, on the next process, until it gets an answer that is not a
// failure of payd's (no connection, 5xx, 409 while the key is in use).
type client struct {
	t      *testing.T
	procs  []*testutil.Process
	apiKey string
	http   *http.Client
	rr     atomic.Uint64

	mu       sync.Mutex
	answers  map[string]answer // the final answer, by Idempotency-Key
	attempts []attempt
	fives    map[int]int // 5xx answers by status
	samples  []string    // the first 5xx answers other than 503, for the log
	answered atomic.Int64
}

func newClient(t *testing.T, procs []*testutil.Process, apiKey string) *client {
	c := &client{t: t, procs: procs, apiKey: apiKey,
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	c.reset()
	return c
}

// reset forgets what was sent so far (the set-up's requests).
func (c *client) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answers, c.attempts, c.fives, c.samples = map[string]answer{}, nil, map[int]int{}, nil
	c.answered.Store(0)
}

func (c *client) post(key, path string, body any) answer {
	raw, _ := json.Marshal(body)
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); {
		p := c.procs[int(c.rr.Add(1))%len(c.procs)]
		at := attempt{sent: time.Now()}
		a, err := c.once(p.URL, key, path, raw)
		at.done, at.status = time.Now(), a.status
		c.mu.Lock()
		c.attempts = append(c.attempts, at)
		if a.status >= 500 {
			c.fives[a.status]++
			if a.status != 503 && len(c.samples) < 5 {
				c.samples = append(c.samples, fmt.Sprintf("POST %s (key %s) at %s: %d %s", path, key,
					at.sent.Format("15:04:05.000"), a.status, a.body))
			}
		}
		c.mu.Unlock()
		switch {
		case err != nil:
			time.Sleep(20 * time.Millisecond)
			continue
		case a.status >= 500:
			time.Sleep(50 * time.Millisecond)
			continue
		case a.status == http.StatusConflict && a.code() == "idempotency_key_in_use":
			time.Sleep(25 * time.Millisecond)
			continue
		}
		c.mu.Lock()
		c.answers[key] = a
		c.mu.Unlock()
		c.answered.Add(1)
		return a
	}
	c.t.Errorf("POST %s (key %s): no answer within 90 s", path, key)
	return answer{}
}

func (c *client) once(base, key, path string, raw []byte) (answer, error) {
	req, err := http.NewRequest("POST", base+path, bytes.NewReader(raw))
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
	return answer{status: resp.StatusCode, body: b}, err
}

// firstWriteAfter is how long after at the first send that left after at
// was answered 2xx.
func (c *client) firstWriteAfter(at time.Time) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first time.Time
	for _, a := range c.attempts {
		if a.status/100 == 2 && !a.sent.Before(at) && (first.IsZero() || a.done.Before(first)) {
			first = a.done
		}
	}
	return first.Sub(at), !first.IsZero()
}

// fiveCounts returns the 503 answers and the other 5xx answers.
func (c *client) fiveCounts() (n503, other int, samples string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for s, n := range c.fives {
		if s == 503 {
			n503 += n
		} else {
			other += n
		}
	}
	return n503, other, strings.Join(c.samples, "\n")
}

// result is what a run created, by the key that created it.
type result struct {
	mu      sync.Mutex
	intents map[string]string // create key → intent id
	payouts map[string]string // create key → payout id
	acked   int               // requests answered 2xx
}

// drive sends w's requests from clients concurrent senders, keys prefixed
// with prefix. The last third of the requests waits for hold (when not
// nil), so a disturbance meets a run that is still going.
func (f *fleet) drive(prefix string, w workload, clients int, hold <-chan struct{}) *result {
	t, c := f.t, f.c
	res := &result{intents: map[string]string{}, payouts: map[string]string{}}
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
			for o := range ops {
				if o.payout {
					key := fmt.Sprintf("%spayout-%d", prefix, o.i)
					a := c.post(key, "/v1/payouts", map[string]any{"amount": 100 + o.i%37, "currency": "DJF",
						"provider": "wallet_b", "recipient_msisdn": "+25377123456", "description": key})
					res.record(t, "payout", key, a, 201, res.payouts)
					continue
				}
				key := fmt.Sprintf("%spi-%d", prefix, o.i)
				a := c.post(key, "/v1/payment_intents", map[string]any{"amount": 500 + o.i%91, "currency": "DJF",
					"provider": "bank_a", "customer_msisdn": "77123456", "description": key})
				id := res.record(t, "intent", key, a, 201, res.intents)
				if id == "" {
					continue
				}
				a = c.post("confirm-"+key, "/v1/payment_intents/"+id+"/confirm", map[string]string{"otp": "123456"})
				var pi struct{ Status string }
				if json.Unmarshal(a.body, &pi); a.status != 200 || pi.Status != "succeeded" {
					t.Errorf("confirm %s: %d %s", key, a.status, a.body)
					continue
				}
				res.mu.Lock()
				res.acked++
				res.mu.Unlock()
			}
		}()
	}
	n := max(w.intents, w.payouts)
	for i := range n {
		if hold != nil && i == n-n/3 {
			<-hold
		}
		if i < w.intents {
			ops <- op{i: i}
		}
		if i < w.payouts {
			ops <- op{payout: true, i: i}
		}
	}
	close(ops)
	wg.Wait()
	return res
}

// record notes a create's answer: the created object's id under its key.
func (r *result) record(t *testing.T, what, key string, a answer, want int, into map[string]string) string {
	var obj struct{ ID string }
	if json.Unmarshal(a.body, &obj); a.status != want || obj.ID == "" {
		t.Errorf("%s %s: %d %s", what, key, a.status, a.body)
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	into[key] = obj.ID
	r.acked++
	return obj.ID
}

// check holds the database (on whichever member is the primary now) to
// exactly one effect per answered key, every answer to its stored one, the
// processes to one start each, `payd ledger verify` to a pass, and the
// webhook endpoint to every event delivered (de-duplicated by event id).
func (f *fleet) check(w workload, res *result) {
	t := f.t
	t.Helper()
	db := f.tp.admin(f.dbName)
	for i, p := range f.procs {
		if !p.Running() || p.Starts() != 1 {
			t.Errorf("payd %d: running %v, started %d times (want running, started once)", i, p.Running(), p.Starts())
		}
	}
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	waitFor(t, 30*time.Second, "every payment and payout to settle", func() error {
		if n := count(`SELECT (SELECT COUNT(*) FROM payouts WHERE status NOT IN ('succeeded','failed','canceled'))
			+ (SELECT COUNT(*) FROM payment_intents WHERE status NOT IN ('succeeded','failed','canceled'))`); n > 0 {
			return fmt.Errorf("%d still on their way", n)
		}
		return nil
	})
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
	// Every acknowledged create's object is on the primary, once.
	missing := 0
	for _, ids := range []map[string]string{res.intents, res.payouts} {
		for key, id := range ids {
			if n := count(`SELECT (SELECT COUNT(*) FROM payment_intents WHERE id = $1 AND description = $2)
				+ (SELECT COUNT(*) FROM payouts WHERE id = $1)`, id, key); n != 1 {
				if missing++; missing <= 5 {
					t.Errorf("key %s: its answered object %s is on the primary %d times", key, id, n)
				}
			}
		}
	}
	checks := []struct {
		what      string
		got, want int
	}{
		{"payment intents", count("SELECT COUNT(*) FROM payment_intents"), w.intents},
		{"succeeded payment intents", count("SELECT COUNT(*) FROM payment_intents WHERE status = 'succeeded'"), w.intents},
		{"intents made under one key twice", count(`SELECT COUNT(*) FROM (SELECT description FROM payment_intents
			GROUP BY description HAVING COUNT(*) > 1) d`), 0},
		{"payouts", count("SELECT COUNT(*) FROM payouts"), w.payouts},
		{"succeeded payouts", count("SELECT COUNT(*) FROM payouts WHERE status = 'succeeded'"), w.payouts},
		{"payment_intent.succeeded events", count("SELECT COUNT(*) FROM events WHERE type = 'payment_intent.succeeded'"), w.intents},
		{"payout.succeeded events", count("SELECT COUNT(*) FROM events WHERE type = 'payout.succeeded'"), w.payouts},
		{"events recorded more than once", count(`SELECT COUNT(*) FROM (SELECT object_id, type FROM events
			GROUP BY object_id, type HAVING COUNT(*) > 1) d`), 0},
		{"ledger transactions recorded more than once", count(`SELECT COUNT(*) FROM (SELECT reference, kind FROM ledger_transactions
			GROUP BY reference, kind HAVING COUNT(*) > 1) d`), 0},
		{"idempotency keys left in flight", count("SELECT COUNT(*) FROM idempotency_keys WHERE state <> 'done'"), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	// Every answer is the one stored under its key.
	f.c.mu.Lock()
	answers := maps(f.c.answers)
	f.c.mu.Unlock()
	differ := 0
	for key, a := range answers {
		var status int
		var body []byte
		err := db.QueryRow("SELECT status_code, body FROM idempotency_keys WHERE idem_key = $1 AND state = 'done'", key).Scan(&status, &body)
		if err != nil || status != a.status || !bytes.Equal(body, a.body) {
			if differ++; differ <= 5 {
				t.Errorf("key %s: answered %d %s, stored %d %s (%v)", key, a.status, a.body, status, body, err)
			}
		}
	}
	t.Logf("effects checked")
	// payd ledger verify (which also finds doubled effects) exits 0.
	out := f.procs[0].Run("ledger", "verify")
	t.Logf("payd ledger verify: %s", bytes.TrimSpace(out))
	f.checkEvents(db)
}

func maps[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// checkEvents waits until the receiver has had every event recorded on the
// primary since the endpoint was made, and fails on an event delivered that
// the primary does not have (a write the failover lost).
func (f *fleet) checkEvents(db *sql.DB) {
	t := f.t
	t.Helper()
	want := map[string]bool{}
	rows, err := db.Query(`SELECT id FROM events WHERE livemode = FALSE
		AND created_at >= (SELECT MIN(created_at) FROM webhook_endpoints)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		want[id] = true
	}
	rows.Close()
	var got map[string]int
	deadline := time.Now().Add(60 * time.Second)
	for {
		got = f.hooks.received()
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
			t.Errorf("%d of %d events not delivered within 60 s", missing, len(want))
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var phantom []string
	deliveries := 0
	for id, n := range got {
		deliveries += n
		if !want[id] {
			phantom = append(phantom, id)
		}
	}
	slices.Sort(phantom)
	if len(phantom) > 0 {
		t.Errorf("%d events delivered that the primary does not have (lost writes?): %v", len(phantom), phantom[:min(5, len(phantom))])
	}
	t.Logf("webhooks: %d events recorded, %d distinct delivered, %d deliveries", len(want), len(got), deliveries)
}
