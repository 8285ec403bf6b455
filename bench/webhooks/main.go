// Command webhooks measures payd's webhook delivery: deliveries per second
// to a local receiver with 1 and with 50 endpoints, and the latency from an
// event's commit to the first delivery attempt on an idle queue.
//
//	go run ./bench/webhooks                       # SQLite in a temporary file
//	go run ./bench/webhooks -db postgres://...    # PostgreSQL (a fresh schema is made and dropped)
//	go run ./bench/webhooks -engine postgres      # the same, in $PAYD_TEST_DATABASE_URL
//
// It starts payd itself (app.Main on 127.0.0.1:0, workers on), records events
// through the outbox exactly as the capabilities do (events.Emit in a
// transaction), and runs a receiver on loopback that checks every signature.
// Everything is bounded: -events events per run, -samples latency samples,
// and -timeout overall.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/webhook"
)

func main() {
	db := harness.DatabaseFlags(flag.CommandLine)
	nEvents := flag.Int("events", 2000, "events per throughput run")
	endpointCounts := flag.String("endpoints", "1,50", "endpoint counts to measure")
	samples := flag.Int("samples", 200, "commit-to-first-attempt latency samples")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after this long")
	stall := flag.Int("stall", 0, "first give another merchant this many endpoints that never answer, with 300 deliveries each waiting, and measure beside it")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, db, *nEvents, *endpointCounts, *samples, *stall); err != nil {
		harness.Fatal(err)
	}
}

// receiver acknowledges every delivery after checking its signature.
type receiver struct {
	mu      sync.Mutex
	secrets map[string]string // path -> secret
	arrived map[string]time.Time
	count   atomic.Int64
	bad     atomic.Int64
	stalled atomic.Int64 // attempts at the never-answering endpoints
	wake    chan struct{}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/stall/") {
		// Never answers: payd gives up after its attempt timeout.
		rc.stalled.Add(1)
		<-r.Context().Done()
		return
	}
	body, _ := io.ReadAll(r.Body)
	now := time.Now()
	rc.mu.Lock()
	secret := rc.secrets[r.URL.Path]
	rc.mu.Unlock()
	d, err := webhook.Verify(secret, r.Header, body)
	if err != nil {
		rc.bad.Add(1)
		w.WriteHeader(400)
		return
	}
	rc.mu.Lock()
	if _, ok := rc.arrived[d.EventID]; !ok {
		rc.arrived[d.EventID] = now
	}
	rc.mu.Unlock()
	rc.count.Add(1)
	select {
	case rc.wake <- struct{}{}:
	default:
	}
}

func run(ctx context.Context, db *harness.Database, nEvents int, endpointCounts string, samples, stall int) error {
	counts, err := harness.Levels("endpoints", endpointCounts)
	if err != nil {
		return err
	}
	m, cleanup, err := db.Start(ctx)
	if err != nil {
		return err
	}
	defer cleanup()

	rc := &receiver{secrets: map[string]string{}, arrived: map[string]time.Time{}, wake: make(chan struct{}, 1)}
	srv := &http.Server{Handler: rc}
	lnAddr, err := listen(srv)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Printf("payd webhooks benchmark: engine %s, %d events per run, receiver on %s\n", db.Engine, nEvents, lnAddr)
	if stall > 0 {
		if err := stallingMerchant(ctx, m, lnAddr, stall, 300); err != nil {
			return err
		}
		fmt.Printf("  beside a merchant with %d never-answering endpoints and %d deliveries waiting\n", stall, stall*300)
	}

	for _, n := range counts {
		merchantID, err := merchantWithEndpoints(ctx, m, rc, lnAddr, n)
		if err != nil {
			return err
		}
		start := rc.count.Load()
		t0 := time.Now()
		for i := 0; i < nEvents; i += 100 {
			err := m.DB.InTx(ctx, func(tx *store.Tx) error {
				for j := i; j < min(i+100, nEvents); j++ {
					if _, err := events.Emit(ctx, tx, merchantID, false, "payout.succeeded", "payout", fmt.Sprintf("po_bench%07d", j), map[string]any{"n": j}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		want := int64(nEvents * n)
		for rc.count.Load()-start < want {
			select {
			case <-ctx.Done():
				return fmt.Errorf("timed out: %d of %d deliveries", rc.count.Load()-start, want)
			case <-rc.wake:
			case <-time.After(100 * time.Millisecond):
			}
		}
		el := time.Since(t0)
		fmt.Printf("  %2d endpoint(s): %d deliveries in %s = %.0f deliveries/s (never-answering attempts so far: %d)\n", n, want,
			el.Round(time.Millisecond), float64(want)/el.Seconds(), rc.stalled.Load())
	}

	// Latency on an idle queue: one event at a time, one endpoint.
	merchantID, err := merchantWithEndpoints(ctx, m, rc, lnAddr, 1)
	if err != nil {
		return err
	}
	var lat []time.Duration
	for i := 0; i < samples; i++ {
		time.Sleep(20 * time.Millisecond) // idle: the worker is asleep
		var id string
		t0 := time.Now()
		err := m.DB.InTx(ctx, func(tx *store.Tx) error {
			ev, err := events.Emit(ctx, tx, merchantID, false, "payment_intent.succeeded", "payment_intent", fmt.Sprintf("pi_lat%05d", i), map[string]any{"n": i})
			id = ev.ID
			return err
		})
		if err != nil {
			return err
		}
		for {
			rc.mu.Lock()
			at, ok := rc.arrived[id]
			rc.mu.Unlock()
			if ok {
				lat = append(lat, at.Sub(t0))
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-rc.wake:
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	l := loadgen.Sorted(lat)
	pct := func(p float64) time.Duration { return l.Percentile(p).Round(10 * time.Microsecond) }
	fmt.Printf("  commit -> first attempt (idle queue, %d samples): p50 %s  p90 %s  p99 %s  max %s\n",
		len(l), pct(50), pct(90), pct(99), pct(100))
	if b := rc.bad.Load(); b > 0 {
		return fmt.Errorf("%d deliveries failed signature verification", b)
	}
	return nil
}

func listen(srv *http.Server) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go srv.Serve(ln)
	return ln.Addr().String(), nil
}

// merchantWithEndpoints makes a merchant with n test-mode endpoints on the
// receiver (paths /hooks/<merchant>/<i>), through the API.
func merchantWithEndpoints(ctx context.Context, m *app.Main, rc *receiver, rcvAddr string, n int) (string, error) {
	c, err := harness.NewMerchant(ctx, m, "Bench", "")
	if err != nil {
		return "", err
	}
	api := harness.API{Base: m.URL(), Key: c.SecretKeys[0]}
	for i := range n {
		path := fmt.Sprintf("/hooks/%s/%d", c.MerchantID, i)
		var ep struct{ Secret string }
		if err := api.Post("/v1/webhook_endpoints", map[string]any{"url": "http://" + rcvAddr + path, "enabled_events": []string{"*"}}, 201, &ep); err != nil {
			return "", fmt.Errorf("create endpoint: %w", err)
		}
		rc.mu.Lock()
		rc.secrets[path] = ep.Secret
		rc.mu.Unlock()
	}
	return c.MerchantID, nil
}

// stallingMerchant makes a merchant with n endpoints that never answer and
// perEndpoint deliveries waiting for each (events through the outbox).
func stallingMerchant(ctx context.Context, m *app.Main, rcvAddr string, n, perEndpoint int) error {
	c, err := harness.NewMerchant(ctx, m, "Stalling", "")
	if err != nil {
		return err
	}
	api := harness.API{Base: m.URL(), Key: c.SecretKeys[0]}
	for i := range n {
		url := fmt.Sprintf("http://%s/stall/%s/%d", rcvAddr, c.MerchantID, i)
		if err := api.Post("/v1/webhook_endpoints", map[string]any{"url": url, "enabled_events": []string{"payout.failed"}}, 201, nil); err != nil {
			return fmt.Errorf("create endpoint: %w", err)
		}
	}
	for i := 0; i < perEndpoint; i += 100 {
		err := m.DB.InTx(ctx, func(tx *store.Tx) error {
			for j := i; j < min(i+100, perEndpoint); j++ {
				if _, err := events.Emit(ctx, tx, c.MerchantID, false, "payout.failed", "payout", fmt.Sprintf("po_stall%07d", j), map[string]any{"n": j}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	// Wait until they are dispatched, so they are due before anyone else's.
	for {
		var k int
		if err := m.DB.QueryRow(ctx, "SELECT COUNT(*) FROM webhook_deliveries WHERE merchant_id = ?", c.MerchantID).Scan(&k); err != nil {
			return err
		}
		if k == n*perEndpoint {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
