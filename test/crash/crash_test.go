// Package crash drives the real payd binary through crashes: several `payd
// serve` processes on one database, idempotent requests retried with their
// keys on another process until answered, processes killed with SIGKILL and
// database connections terminated while the requests run. Afterwards every
// key must have exactly one effect, every answer must be the stored one byte
// for byte, each event must be recorded once and the ledger must balance.
//
// By default each test runs a small load, so the package fits in about a
// minute in CI; with -crash.full (go test ./test/crash -args -crash.full)
// it sends 1,000 keyed requests per engine (docs/performance.md records such
// runs).
package crash

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
	"github.com/payd/payd/internal/testutil/keyedload"
)

// full asks for the full-size runs.
var full = flag.Bool("crash.full", false, "run the crash tests at full size (1,000 keyed requests per engine)")

// size is the workload of a run: 1,000 keyed requests (350 intents created
// and confirmed, 300 payouts) with -crash.full, else 150.
func size() keyedload.Workload {
	if !*full {
		return keyedload.Workload{Intents: 50, Payouts: 50}
	}
	return keyedload.Workload{Intents: 350, Payouts: 300}
}

const secretsKey = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"

// cluster is n payd processes on one fresh database and a merchant with a
// funded sandbox balance.
type cluster struct {
	dbURL string
	f     *keyedload.Fleet
	c     *keyedload.Client
	mid   string
	keys  []string
}

func startCluster(t *testing.T, engine storetest.Engine, n int, extraEnv ...string) *cluster {
	t.Helper()
	return startClusterOn(t, engine, n, &keyedload.Fleet{}, extraEnv...)
}

// startClusterOn is startCluster filling the fleet f.
func startClusterOn(t *testing.T, engine storetest.Engine, n int, f *keyedload.Fleet, extraEnv ...string) *cluster {
	t.Helper()
	bin := testutil.SharedPayd(t)
	dbURL := storetest.URL(t, engine)
	if engine == storetest.Postgres {
		// The processes' connections carry a name of their own, so the
		// test can terminate exactly theirs on a shared server.
		dbURL += "&application_name=" + appName(t)
	}
	env := append([]string{"PAYD_DATABASE_URL=" + dbURL, "PAYD_SECRETS_KEY=" + secretsKey, "PAYD_RATE_LIMIT=0",
		"PAYD_PUBLIC_RATE_LIMIT=0", "PAYD_DB_MAX_CONNS=12", "PAYD_LOG_LEVEL=warn", "PAYD_SANCTIONS_LIST=", "PAYD_DEMO=false", "PAYD_SANDBOX_TIMEOUT_DELAY=50ms"}, extraEnv...)
	cl := &cluster{dbURL: dbURL, f: f}
	for i := range n {
		cl.f.Procs = append(cl.f.Procs, keyedload.NewProc(t, bin, "payd"+string(rune('a'+i)), env))
	}
	var m struct {
		MerchantID string   `json:"merchant_id"`
		SecretKeys []string `json:"secret_keys"`
	}
	if err := json.Unmarshal(cl.f.Procs[0].Run("merchant", "create", "--name", "Crash test", "--json"), &m); err != nil || len(m.SecretKeys) == 0 {
		t.Fatalf("merchant create: %v", err)
	}
	cl.mid, cl.keys = m.MerchantID, m.SecretKeys
	errc := make(chan error, n)
	for _, p := range cl.f.Procs {
		go func() { errc <- p.Start() }()
	}
	for range n {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range cl.f.Procs {
			p.Kill()
		}
		if t.Failed() {
			t.Logf("logs:\n%s", cl.f.Logs())
		}
	})
	cl.c = keyedload.NewClient(t, cl.f, m.SecretKeys[0])
	return cl
}

func (cl *cluster) fund(t *testing.T) {
	t.Helper()
	if a, ok := cl.c.Post("topup", "/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 10_000_000}); !ok || a.Status != 201 {
		t.Fatalf("top-up: %d %s", a.Status, a.Body)
	}
}

func (cl *cluster) db(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), cl.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func appName(t *testing.T) string {
	return "payd_crash_" + strings.ToLower(strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
}

// TestKillDuringKeyedRequests: payment intents created and confirmed and
// payouts created, each request retried with its key on another process
// until answered, while payd processes are killed with SIGKILL and started
// again: three processes on PostgreSQL, one on SQLite (whose retries wait
// for the restart).
func TestKillDuringKeyedRequests(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			n := 3
			if engine == storetest.SQLite {
				n = 1
			}
			cl := startCluster(t, engine, n)
			cl.fund(t)
			w, kills := size(), 8
			if !*full {
				kills = 3
			}
			ctx, stop := context.WithCancel(context.Background())
			killed, killing := chaos(ctx, t, cl.f, cl.c, w.Requests(), kills)
			start := time.Now()
			res := keyedload.Drive(t, cl.c, w, 12, killing, 6)
			elapsed := time.Since(start)
			stop()
			k := killed()
			for _, p := range cl.f.Procs {
				if !p.Up() {
					if err := p.Start(); err != nil {
						t.Fatal(err)
					}
				}
			}
			t.Logf("%d keyed requests in %v: %d kills, %d sends, %d lost to a kill, %d answered 5xx, %d 409 in use, %d replayed",
				w.Requests(), elapsed.Round(time.Millisecond), k, cl.c.Tries.Load(), cl.c.Dropped.Load(), cl.c.Fives.Load(),
				cl.c.InUse.Load(), cl.c.Replays.Load())
			// A killed process drops its connections; it never answers 5xx.
			// A 5xx came from a surviving process, where a retry inside
			// payd (or a replay) should have answered.
			if n := cl.c.Fives.Load(); n > 0 {
				t.Errorf("%d answers were 5xx:%s", n, cl.c.FiveAnswers())
			}
			if k != kills {
				t.Errorf("%d kills during the run, want %d", k, kills)
			}
			db := cl.db(t)
			keyedload.WaitSettled(t, db, 30*time.Second)
			keyedload.CheckAnswers(t, db, cl.c)
			keyedload.CheckEffects(t, db, w, res)
		})
	}
}

// TestBackendsTerminated: three processes on PostgreSQL while the test
// terminates all their database connections (pg_terminate_backend) every few
// hundred milliseconds. payd runs again whatever a dead connection broke
// before anything of it committed, so no request answers 5xx and no key
// stays locked (no 409).
//
// The rounds are spaced by killInterval: at least 250 ms, more where opening
// a connection is slow. Every round makes each process open its connections
// again, and a retry can only succeed on a connection that lives long enough
// to carry a request; on a machine whose PostgreSQL takes 25 ms to start a
// backend when idle (and ten times that while three processes reconnect at
// once), rounds every 250 ms end nearly every connection before it is used.
func TestBackendsTerminated(t *testing.T) {
	cl := startCluster(t, storetest.Postgres, 3)
	cl.fund(t)
	admin, err := sql.Open("pgx", os.Getenv("PAYD_TEST_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	w := size()
	every := killInterval(t, admin)
	total := 0
	res := cl.driveWhile(t, w, func(ctx context.Context) string {
		// The first round at once, on the connections the funding left in
		// the pools (a fast run may be over within one interval), then one
		// every interval until the load ends.
		for first := true; ; first = false {
			if !first {
				select {
				case <-ctx.Done():
					return fmt.Sprintf("%d backends terminated", total)
				case <-time.After(every):
				}
			}
			var n int
			if err := admin.QueryRow(`SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`,
				appName(t)).Scan(&n); err != nil {
				t.Errorf("terminate: %v", err)
				return fmt.Sprintf("%d backends terminated, then %v", total, err)
			}
			total += n
		}
	})
	if total == 0 {
		t.Error("no backend was terminated")
	}
	cl.checkRodeOut(t, w, res)
}

// driveWhile drives w's keyed requests on cl (12 clients) while disturb runs
// beside them; disturb's context ends once every request is answered, and
// what it returns describes what it did, for the log.
func (cl *cluster) driveWhile(t *testing.T, w keyedload.Workload, disturb func(ctx context.Context) string) *keyedload.Result {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	did := make(chan string)
	go func() { did <- disturb(ctx) }()
	start := time.Now()
	res := keyedload.Drive(t, cl.c, w, 12, nil, 6)
	stop()
	t.Logf("%d keyed requests in %v: %s, %d sends, %d answered 5xx, %d 409 in use", w.Requests(),
		time.Since(start).Round(time.Millisecond), <-did, cl.c.Tries.Load(), cl.c.Fives.Load(), cl.c.InUse.Load())
	return res
}

// checkRodeOut checks a run in which the processes lived and the database
// failed under them: payd ran again whatever a dead connection broke, so no
// request answered 5xx, no key stayed locked (409), every request was
// answered, and then every answer is the stored one and every key has one
// effect.
func (cl *cluster) checkRodeOut(t *testing.T, w keyedload.Workload, res *keyedload.Result) {
	t.Helper()
	if n := cl.c.Fives.Load(); n > 0 {
		t.Errorf("%d answers were 5xx:%s", n, cl.c.FiveAnswers())
	}
	if n := cl.c.InUse.Load(); n > 0 {
		t.Errorf("%d answers were 409 idempotency_key_in_use", n)
	}
	if n := cl.c.Dropped.Load(); n > 0 {
		t.Errorf("%d requests got no answer at all", n)
	}
	db := cl.db(t)
	keyedload.WaitSettled(t, db, 30*time.Second)
	keyedload.CheckAnswers(t, db, cl.c)
	keyedload.CheckEffects(t, db, w, res)
}

// killInterval is the spacing of TestBackendsTerminated's rounds: 250 ms, or
// twenty times what opening a connection and running a first statement takes
// here (the median of five), whichever is longer.
func killInterval(t *testing.T, admin *sql.DB) time.Duration {
	t.Helper()
	var took []time.Duration
	for range 5 {
		start := time.Now()
		c, err := sql.Open("pgx", os.Getenv("PAYD_TEST_DATABASE_URL"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec("SELECT 1"); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(start))
		c.Close()
	}
	slices.Sort(took)
	every := max(250*time.Millisecond, 20*took[len(took)/2])
	t.Logf("a new connection takes %v (median of five): a round every %v", took[len(took)/2].Round(time.Millisecond), every.Round(time.Millisecond))
	return every
}

// chaos SIGKILLs a random process that is up each time the client's
// answered requests pass one of kills random points of the run (between 5%
// and 75% of total), and starts it again at once; it returns a function
// that stops it (when ctx ends) and reports the kills made, and a channel
// closed once it has made them all (Drive holds the end of the run until
// then: every point lies before the part it holds).
func chaos(ctx context.Context, t *testing.T, f *keyedload.Fleet, c *keyedload.Client, total, kills int) (func() int, <-chan struct{}) {
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
			for c.Answered.Load() < at {
				select {
				case <-ctx.Done():
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
			up := f.Up()
			p := up[rand.IntN(len(up))]
			p.Kill()
			made.Add(1)
			if err := p.Start(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	return func() int { <-done; return int(made.Load()) }, done
}
