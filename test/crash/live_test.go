package crash

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sim"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
	"github.com/payd/payd/internal/testutil/keyedload"
)

// provider is the simulator behind a recorder that counts, per provider
// idempotency key, the payments and payouts it made, the answers it
// replayed and the status questions it answered, and that can kill every
// payd process after the simulator has acted on a first request of one kind
// (crashKind) but before payd hears the answer.
type provider struct {
	sim *sim.Sim
	url string

	crashKind string           // payments, payouts or cards
	crashAt   func(n int) bool // asked with the count of first requests of crashKind
	crash     func()           // kills the payd processes

	mu      sync.Mutex
	kinds   map[string]*tally // payments, payouts, cards
	crashes int
	crashed []string // the provider keys of the requests payd died waiting for
}

// tally is what the provider did for one kind of movement.
type tally struct {
	created  map[string]int // provider key → movements made under it
	replayed map[string]int // provider key → answers replayed under it
	asked    map[string]int // reference → status questions answered 200
	refused  int            // requests refused (a duplicate reference, ...)
	firsts   int
}

func startProvider(t *testing.T, cfg sim.Config) *provider {
	p := &provider{sim: sim.New(cfg), kinds: map[string]*tally{}}
	for _, k := range []string{"payments", "payouts", "cards", "captures"} {
		p.kinds[k] = &tally{created: map[string]int{}, replayed: map[string]int{}, asked: map[string]int{}}
	}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	p.url = srv.URL
	p.sim.SetPublicURL(p.url)
	t.Cleanup(func() {
		srv.Close()
		p.sim.Close()
	})
	return p
}

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	kind := movement(r.URL.Path)
	if kind == "" {
		p.sim.Handler().ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	p.sim.Handler().ServeHTTP(rec, r)
	key := r.Header.Get(protocol.HeaderIdempotencyKey)
	crash := false
	p.mu.Lock()
	k := p.kinds[kind]
	switch {
	case r.Method == "GET":
		if ref := r.URL.Query().Get("reference"); ref != "" && rec.Code == http.StatusOK {
			k.asked[ref]++
		}
	case done(kind, rec.Code) && rec.Header().Get(protocol.HeaderReplayed) == "true":
		k.replayed[key]++
	case done(kind, rec.Code):
		k.created[key]++
		k.firsts++
		if kind == p.crashKind && p.crashAt != nil && p.crashAt(k.firsts) {
			crash = true
			p.crashes++
			p.crashed = append(p.crashed, key)
		}
	default:
		k.refused++
	}
	p.mu.Unlock()
	if crash {
		// The provider has acted and stored its answer; payd dies before
		// it hears it.
		p.crash()
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// done reports whether a provider's status code answers a request of kind
// that it acted on: 201 for what it creates, 200 for a capture.
func done(kind string, code int) bool {
	if kind == "captures" {
		return code == http.StatusOK
	}
	return code == http.StatusCreated
}

// movement returns payments or payouts for a rail's /{provider}/v1/payments
// or /{provider}/v1/payouts (where payments are initiated and payouts sent,
// and both are asked about by reference), cards for the card gateway's
// /wallet_a/v1/card_authorizations, captures for a capture of one of its
// authorisations, else "".
func movement(path string) string {
	if path == "/wallet_a/v1/card_authorizations" {
		return "cards"
	}
	if strings.HasPrefix(path, "/wallet_a/v1/card_authorizations/") && strings.HasSuffix(path, "/capture") {
		return "captures"
	}
	for _, r := range []string{"bank_a", "bank_b", "wallet_a", "wallet_b", "wallet_c", "wallet_d"} {
		for _, k := range []string{"payments", "payouts"} {
			if path == "/"+r+"/v1/"+k {
				return k
			}
		}
	}
	return ""
}

// killAll kills every process of the fleet at once, and starts them again
// in the background (restarting.Wait waits for that). The kill does not
// wait for an earlier crash's restart (it runs inside the provider's
// handler, which must not be held); restarts run one at a time, and each
// starts only the processes that are down, so two crashes close together
// never start one process twice.
func killAll(t *testing.T, f *keyedload.Fleet, restarting *sync.WaitGroup) {
	for _, p := range f.Procs {
		p.Kill()
	}
	restarting.Add(1)
	go func() {
		defer restarting.Done()
		f.Restart.Lock()
		defer f.Restart.Unlock()
		for _, p := range f.Procs {
			if p.Running() {
				continue // an earlier restart started it after this kill
			}
			if err := p.Start(); err != nil {
				t.Error(err)
			}
		}
	}()
}

// crashRun drives w with 8 clients while the provider kills every payd
// process at crashes first requests of kind spread evenly over the run (and
// the processes start again); it returns what the run created and how long
// it took, once every intent and payout in db has settled.
func crashRun(t *testing.T, cl *cluster, db *store.DB, prov *provider, kind string, w keyedload.Workload, crashes int) (*keyedload.Result, time.Duration) {
	total := w.Intents
	if kind == "payouts" {
		total = w.Payouts
	}
	every := max(total/(crashes+1), 1)
	var restarting sync.WaitGroup
	prov.mu.Lock()
	prov.crashKind = kind
	prov.crashAt = func(n int) bool { return n%every == 0 && n/every <= crashes }
	prov.crash = func() { killAll(t, cl.f, &restarting) }
	prov.mu.Unlock()
	start := time.Now()
	res := keyedload.Drive(t, cl.c, w, 8, nil, 6)
	restarting.Wait()
	elapsed := time.Since(start)
	keyedload.WaitSettled(t, db, 60*time.Second)
	return res, elapsed
}

// logFives logs the client's sends lost to a kill and fails the test on
// any 5xx answer (a killed process drops its connections and answers
// nothing; a 5xx came from a surviving process), each with its log lines.
func logFives(t *testing.T, c *keyedload.Client) {
	t.Logf("%d sends lost to a kill, %d answered 5xx", c.Dropped.Load(), c.Fives.Load())
	if n := c.Fives.Load(); n > 0 {
		t.Errorf("%d answers were 5xx:%s", n, c.FiveAnswers())
	}
}

// onceEach fails the test unless the provider made one movement under each
// of want provider keys and refused none.
func (k *tally) onceEach(t *testing.T, what string, want int) {
	t.Helper()
	for key, n := range k.created {
		if n != 1 {
			t.Errorf("provider key %s: %d %s made", key, n, what)
		}
	}
	if len(k.created) != want {
		t.Errorf("the provider made %s under %d keys, want %d", what, len(k.created), want)
	}
	if k.refused != 0 {
		t.Errorf("the provider refused %d %s requests (a second one for one object, under another key?)", k.refused, what)
	}
}

// goLive connects the providers of the simulator prov to the cluster's
// merchant (a timeout of 2 s each) and makes the cluster's client use a new
// live key.
func goLive(t *testing.T, cl *cluster, prov *provider, rails ...string) {
	t.Helper()
	p0 := cl.f.Procs[0]
	p0.Run("merchant", "kyc", "--merchant", cl.mid, "--status", "approved")
	for _, rail := range rails {
		cfg, _ := json.Marshal(map[string]string{"base_url": prov.url + "/" + rail, "api_key": "sk_sim_crash",
			"callback_secret": "cbsec_crash_0123456789abcdef", "timeout": "2s"})
		file := filepath.Join(t.TempDir(), rail+".json")
		if err := os.WriteFile(file, cfg, 0o600); err != nil {
			t.Fatal(err)
		}
		p0.Run("provider", "connect", "--merchant", cl.mid, "--provider", rail, "--config", file)
	}
	var key struct{ Secret string }
	if err := json.Unmarshal(p0.Run("key", "create", "--merchant", cl.mid, "--mode", "live", "--json"), &key); err != nil || key.Secret == "" {
		t.Fatalf("live key: %v", err)
	}
	cl.c.APIKey = key.Secret
}

// front forwards the provider's callbacks to whichever payd process is up,
// waiting while none is (as a load balancer in front of payd would); it
// returns its URL and the count of callbacks payd acknowledged (2xx).
func front(t *testing.T, f *keyedload.Fleet) (string, *atomic.Int64) {
	client := &http.Client{Timeout: 10 * time.Second}
	acked := &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			p := f.Pick(nil)
			if p == nil {
				continue
			}
			req, _ := http.NewRequest(r.Method, p.URL+r.URL.RequestURI(), bytes.NewReader(body))
			req.Header = r.Header.Clone()
			resp, err := client.Do(req)
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				acked.Add(1)
			}
			for k, v := range resp.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(resp.StatusCode)
			w.Write(b)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, acked
}

// TestKillBetweenProviderCallAndOutcome: live payment intents on a rail of
// the provider simulator, each request retried with its key until answered,
// while every payd process is killed at the moment the provider has created
// a payment and before payd hears of it. The retry resumes from the intent's
// recovery point and asks the provider again under the same provider key,
// which answers without charging again: one charge at the provider per
// Idempotency-Key, settled once.
func TestKillBetweenProviderCallAndOutcome(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			n := 3
			if engine == storetest.SQLite {
				n = 1
			}
			w, crashes := keyedload.Workload{Intents: 200, Live: true, Provider: "wallet_c"}, 5
			if !*full {
				w.Intents, crashes = 30, 2
			}
			// Push approvals come after the dead run's lease has run out,
			// so the retry that resumes it asks the provider before any
			// callback tells.
			prov := startProvider(t, sim.Config{PushDelay: 4 * time.Second})
			f := &keyedload.Fleet{}
			callbacks, _ := front(t, f)
			// A short lease, so a retry takes over a dead run's key
			// within seconds (above the provider timeout of 2 s).
			cl := startClusterOn(t, engine, n, f, "PAYD_IDEMPOTENCY_LEASE=3s", "PAYD_PUBLIC_URL="+callbacks)
			goLive(t, cl, prov, w.Provider)

			db := cl.db(t)
			res, elapsed := crashRun(t, cl, db, prov, "payments", w, crashes)
			logFives(t, cl.c)
			prov.mu.Lock()
			defer prov.mu.Unlock()
			k := prov.kinds["payments"]
			k.onceEach(t, "payments", w.Intents)
			resumed := len(k.replayed)
			t.Logf("%d live intents in %v: %d crashes after the provider acted, %d provider keys asked again (replayed), %d refused, %d sends, %d 409 while a dead run held its key",
				w.Intents, elapsed.Round(time.Millisecond), prov.crashes, resumed, k.refused, cl.c.Tries.Load(), cl.c.InUse.Load())
			if prov.crashes != crashes {
				t.Errorf("%d crashes, want %d", prov.crashes, crashes)
			}
			if resumed == 0 {
				t.Error("no retry resumed a crashed run by asking the provider again under its key")
			}
			keyedload.CheckAnswers(t, db, cl.c)
			keyedload.CheckEffects(t, db, keyedload.Workload{Intents: w.Intents}, &keyedload.Result{Intents: res.Intents, Payouts: map[string]string{}})
		})
	}
}

// TestKillBetweenPayoutSendAndOutcome: live payouts to a rail of the
// provider simulator, each request retried with its key until answered,
// while every payd process is killed at the moment the rail has paid a
// payout and before payd hears of it. The killed request's retry answers
// the payout as it stands (processing); once the dead claim's lease runs
// out, a dispatcher asks the rail what became of the payout under its
// provider key and records the payment, and the rail's callback (sent late,
// about when the lease runs out) finds it recorded or records it itself,
// whichever comes first: one payment at the provider per payout, each
// payout succeeded once with one payout.succeeded and one paid posting,
// and a balanced book.
func TestKillBetweenPayoutSendAndOutcome(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			n := 3
			if engine == storetest.SQLite {
				n = 1
			}
			w, crashes := keyedload.Workload{Payouts: 200}, 5
			if !*full {
				w.Payouts, crashes = 30, 2
			}
			// Callbacks come 8 s late: about when a dead claim's lease (the
			// rail's timeout of 2 s and 5 s) runs out and a dispatcher asks.
			prov := startProvider(t, sim.Config{PushDelay: 100 * time.Millisecond, LateCallbacks: true, LateDelay: 8 * time.Second})
			f := &keyedload.Fleet{}
			callbacks, acked := front(t, f)
			cl := startClusterOn(t, engine, n, f, "PAYD_IDEMPOTENCY_LEASE=3s", "PAYD_PUBLIC_URL="+callbacks,
				"PAYD_RECONCILE_INTERVAL=500ms", "PAYD_SANCTIONS_LIST="+testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv"))
			goLive(t, cl, prov, "wallet_c", "wallet_b")

			// Live money comes from a live payment (a wallet_c push); the
			// payouts go out on wallet_b.
			a, ok := cl.c.Post("fund", "/v1/payment_intents", map[string]any{"amount": 100_000, "currency": "DJF",
				"provider": "wallet_c", "customer_msisdn": "+25377123123", "description": "funding"})
			var pi struct{ ID, Status string }
			if json.Unmarshal(a.Body, &pi); !ok || a.Status != 201 || pi.ID == "" {
				t.Fatalf("funding payment: %d %s", a.Status, a.Body)
			}
			for deadline := time.Now().Add(30 * time.Second); pi.Status != "succeeded"; time.Sleep(50 * time.Millisecond) {
				if err := cl.c.Get("/v1/payment_intents/"+pi.ID, &pi); err != nil {
					t.Fatal(err)
				}
				if time.Now().After(deadline) {
					t.Fatalf("funding payment %s after 30 s", pi.Status)
				}
			}

			db := cl.db(t)
			res, elapsed := crashRun(t, cl, db, prov, "payouts", w, crashes)
			logFives(t, cl.c)
			// Every callback (the payment's and each payout's) acknowledged:
			// the late ones for the payouts recorded before them included.
			for deadline := time.Now().Add(60 * time.Second); acked.Load() < int64(1+w.Payouts); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d callbacks acknowledged, want %d", acked.Load(), 1+w.Payouts)
				}
			}

			prov.mu.Lock()
			defer prov.mu.Unlock()
			k := prov.kinds["payouts"]
			k.onceEach(t, "payouts", w.Payouts)
			asked, resumed := 0, 0
			for _, n := range k.asked {
				asked += n
			}
			for _, key := range prov.crashed {
				if k.asked[key] > 0 {
					resumed++
				}
			}
			t.Logf("%d live payouts in %v: %d crashes after the rail paid (%d of those payouts asked about after), %d status questions about %d payouts, %d sends replayed, %d refused, %d sends, %d 409 while a dead run held its key, %d callbacks acknowledged",
				w.Payouts, elapsed.Round(time.Millisecond), prov.crashes, resumed, asked, len(k.asked), len(k.replayed), k.refused, cl.c.Tries.Load(),
				cl.c.InUse.Load(), acked.Load())
			if prov.crashes != crashes {
				t.Errorf("%d crashes, want %d", prov.crashes, crashes)
			}
			// The rail's payout key is the payout's reference (its id).
			if resumed == 0 {
				t.Errorf("no dispatcher asked the rail about the %d payouts whose send payd died waiting for", len(prov.crashed))
			}
			keyedload.CheckAnswers(t, db, cl.c)
			keyedload.CheckEffects(t, db, keyedload.Workload{Intents: 1, Payouts: w.Payouts}, &keyedload.Result{Intents: map[string]string{"fund": pi.ID}, Payouts: res.Payouts})
		})
	}
}
