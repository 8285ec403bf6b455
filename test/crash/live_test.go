package crash

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sim"
	"github.com/payd/payd/internal/store/storetest"
)

// provider is the simulator behind a recorder that counts, per provider
// idempotency key, the payments it created and the answers it replayed, and
// that can kill every payd process after the simulator has acted on an
// initiation but before payd hears the answer.
type provider struct {
	sim *sim.Sim
	srv *http.Server
	url string

	crashAt func(n int) bool // asked with the count of first initiations
	crash   func()           // kills the payd processes

	mu       sync.Mutex
	created  map[string]int // provider key → payments created under it
	replayed map[string]int // provider key → answers replayed under it
	refused  int            // initiations refused (a duplicate reference, ...)
	firsts   int
	crashes  int
}

func startProvider(t *testing.T) *provider {
	// Push approvals come after the dead run's lease has run out, so the
	// retry that resumes it asks the provider before any callback tells.
	p := &provider{sim: sim.New(sim.Config{PushDelay: 4 * time.Second}), created: map[string]int{}, replayed: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.url = "http://" + ln.Addr().String()
	p.sim.SetPublicURL(p.url)
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve)}
	go p.srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.srv.Shutdown(ctx)
		p.sim.Close()
	})
	return p
}

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != "POST" || !isInitiate(r.URL.Path) {
		p.sim.Handler().ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	p.sim.Handler().ServeHTTP(rec, r)
	key := r.Header.Get(protocol.HeaderIdempotencyKey)
	crash := false
	p.mu.Lock()
	switch {
	case rec.Code == http.StatusCreated && rec.Header().Get(protocol.HeaderReplayed) == "true":
		p.replayed[key]++
	case rec.Code == http.StatusCreated:
		p.created[key]++
		p.firsts++
		if p.crashAt != nil && p.crashAt(p.firsts) {
			crash = true
			p.crashes++
		}
	default:
		p.refused++
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

// isInitiate reports whether path is a rail's POST /{provider}/v1/payments.
func isInitiate(path string) bool {
	for _, r := range []string{"bank_a", "bank_b", "wallet_a", "wallet_b", "wallet_c", "wallet_d"} {
		if path == "/"+r+"/v1/payments" {
			return true
		}
	}
	return false
}

// front forwards the provider's callbacks to whichever payd process is up,
// waiting while none is (as a load balancer in front of payd would).
func front(t *testing.T, f *fleet) string {
	client := &http.Client{Timeout: 10 * time.Second}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			p := f.pick(nil)
			if p == nil {
				continue
			}
			req, _ := http.NewRequest(r.Method, p.url+r.URL.RequestURI(), bytes.NewReader(body))
			req.Header = r.Header.Clone()
			resp, err := client.Do(req)
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
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
	return srv.URL
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
			w, crashes := workload{intents: 200, live: true, provider: "wallet_c"}, 5
			if !*full {
				w.intents, crashes = 30, 2
			}
			prov := startProvider(t)
			f := &fleet{}
			callbacks := front(t, f)
			// A short lease, so a retry takes over a dead run's key
			// within seconds (above the provider timeout of 2 s).
			cl := startClusterOn(t, engine, n, f, "PAYD_IDEMPOTENCY_LEASE=3s", "PAYD_PUBLIC_URL="+callbacks)
			cfg, _ := json.Marshal(map[string]string{"base_url": prov.url + "/" + w.provider, "api_key": "sk_sim_crash",
				"callback_secret": "cbsec_crash_0123456789abcdef", "timeout": "2s"})
			file := filepath.Join(t.TempDir(), "conn.json")
			if err := os.WriteFile(file, cfg, 0o600); err != nil {
				t.Fatal(err)
			}
			p0 := cl.f.procs[0]
			p0.Run("merchant", "kyc", "--merchant", cl.mid, "--status", "approved")
			p0.Run("provider", "connect", "--merchant", cl.mid, "--provider", w.provider, "--config", file)
			var key struct{ Secret string }
			if err := json.Unmarshal(p0.Run("key", "create", "--merchant", cl.mid, "--mode", "live", "--json"), &key); err != nil || key.Secret == "" {
				t.Fatalf("live key: %v", err)
			}
			cl.c.apiKey = key.Secret

			every := max(w.intents/(crashes+1), 1)
			var restarting sync.WaitGroup
			prov.crashAt = func(n int) bool { return n%every == 0 && n/every <= crashes }
			prov.crash = func() {
				for _, p := range cl.f.procs {
					p.kill()
				}
				restarting.Add(1)
				go func() {
					defer restarting.Done()
					for _, p := range cl.f.procs {
						if err := p.start(); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			start := time.Now()
			res := drive(t, cl.c, w, 8)
			restarting.Wait()
			elapsed := time.Since(start)
			db := cl.db(t)
			waitSettled(t, db, 60*time.Second)

			prov.mu.Lock()
			defer prov.mu.Unlock()
			resumed := 0
			for k, n := range prov.created {
				if n != 1 {
					t.Errorf("provider key %s: %d payments created", k, n)
				}
			}
			for range prov.replayed {
				resumed++
			}
			t.Logf("%d live intents in %v: %d crashes after the provider acted, %d provider keys asked again (replayed), %d refused, %d sends, %d 409 while a dead run held its key",
				w.intents, elapsed.Round(time.Millisecond), prov.crashes, resumed, prov.refused, cl.c.tries.Load(), cl.c.inUse.Load())
			if prov.crashes != crashes {
				t.Errorf("%d crashes, want %d", prov.crashes, crashes)
			}
			if len(prov.created) != w.intents {
				t.Errorf("the provider created payments under %d keys for %d intents", len(prov.created), w.intents)
			}
			if prov.refused != 0 {
				t.Errorf("the provider refused %d initiations (a second payment for one intent?)", prov.refused)
			}
			if resumed == 0 {
				t.Error("no retry resumed a crashed run by asking the provider again under its key")
			}
			checkAnswers(t, db, cl.c)
			checkEffects(t, db, workload{intents: w.intents}, result{intents: res.intents, payouts: map[string]string{}})
		})
	}
}
