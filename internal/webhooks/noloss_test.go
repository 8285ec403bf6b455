package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/webhooks"
	"github.com/payd/payd/webhook"
)

// twoProcesses runs two webhooks services over one fresh database. On
// PostgreSQL each has its own connection pool, as two payd processes would;
// SQLite (one writer at a time, where several processes are not the
// deployment payd recommends) shares one handle, which still gives two
// workers competing for the same deliveries.
func twoProcesses(t *testing.T, eng storetest.Engine, cfg webhooks.Config) (*store.DB, []*webhooks.Service) {
	t.Helper()
	url := storetest.URL(t, eng)
	var dbs []*store.DB
	for i := 0; i < 2; i++ {
		if eng == storetest.SQLite && i == 1 {
			dbs = append(dbs, dbs[0])
			break
		}
		db, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		dbs = append(dbs, db)
	}
	box, err := secretbox.New(strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	var svcs []*webhooks.Service
	for _, db := range dbs {
		c := cfg
		c.DB, c.Box = db, box
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		svcs = append(svcs, webhooks.New(c))
	}
	return dbs[0], svcs
}

// TestNoEventLost emits 10,000 events while two delivery workers (two
// processes sharing the database) deliver them to a receiver that fails at
// random (503s and dropped connections, at most three times per event). Every
// event must end acknowledged, and no event may be acknowledged twice: the
// workers never send one delivery at the same time.
//
// Under the race detector, whose instrumentation of the (transpiled) SQLite
// engine makes every statement about ten times slower, it runs 2,000 events
// so `go test -race ./...` stays quick; PAYD_NOLOSS_EVENTS overrides.
func TestNoEventLost(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 events: skipped with -short")
	}
	total := 10000
	if raceDetector {
		total = 2000
	}
	if v := os.Getenv("PAYD_NOLOSS_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n%100 != 0 {
			t.Fatalf("PAYD_NOLOSS_EVENTS=%q: want a multiple of 100", v)
		}
		total = n
	}
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			db, svcs := twoProcesses(t, eng, webhooks.Config{
				RetrySchedule: []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond, 16 * time.Millisecond},
				Poll:          50 * time.Millisecond, Concurrency: 32})
			var mu sync.Mutex
			acked := map[string]int{}
			failures := map[string]int{}
			var secret string
			badSig := 0
			rnd := rand.New(rand.NewPCG(1, 2))
			rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				d, err := webhook.Verify(secret, r.Header, body)
				if err != nil {
					badSig++
					mu.Unlock()
					w.WriteHeader(400)
					return
				}
				fail := failures[d.EventID] < 3 && rnd.IntN(10) < 3
				if fail {
					failures[d.EventID]++
				} else {
					acked[d.EventID]++
				}
				mode := rnd.IntN(2)
				mu.Unlock()
				if !fail {
					return
				}
				if mode == 0 {
					w.WriteHeader(503)
					return
				}
				if hj, ok := w.(http.Hijacker); ok {
					if c, _, err := hj.Hijack(); err == nil {
						c.(*net.TCPConn).SetLinger(0)
						c.Close()
					}
				}
			}))
			defer rcv.Close()
			ctx := context.Background()
			owner := webhooks.Owner{MerchantID: "mer_noloss", Livemode: false}
			ep, _, err := svcs[0].CreateEndpoint(ctx, owner, webhooks.EndpointParams{URL: &rcv.URL}, nil)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			secret = ep.Secret
			mu.Unlock()
			runCtx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			for _, s := range svcs {
				wg.Add(1)
				go func(s *webhooks.Service) { defer wg.Done(); s.Run(runCtx) }(s)
			}
			start := time.Now()
			emitted := make([]string, 0, total)
			for i := 0; i < total; i += 100 {
				err := db.InTx(ctx, func(tx *store.Tx) error {
					emitted = emitted[:i]
					for j := i; j < i+100; j++ {
						ev, err := events.Emit(ctx, tx, owner.MerchantID, false, "payout.succeeded", "payout", fmt.Sprintf("po_%05d", j), map[string]int{"n": j})
						if err != nil {
							return err
						}
						emitted = append(emitted, ev.ID)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				svcs[i/100%2].Notify()
			}
			waitFor(t, 5*time.Minute, "every delivery to finish", func() bool {
				var pending int
				db.QueryRow(ctx, "SELECT COUNT(*) FROM events WHERE dispatched_at IS NULL").Scan(&pending)
				var open int
				db.QueryRow(ctx, "SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'").Scan(&open)
				return pending == 0 && open == 0
			})
			elapsed := time.Since(start)
			stop()
			wg.Wait()
			var deliveries, succeeded int
			db.QueryRow(ctx, "SELECT COUNT(*), COALESCE(SUM(CASE WHEN status = 'succeeded' THEN 1 ELSE 0 END), 0) FROM webhook_deliveries").Scan(&deliveries, &succeeded)
			mu.Lock()
			defer mu.Unlock()
			if badSig > 0 {
				t.Fatalf("%d deliveries failed verification", badSig)
			}
			if deliveries != total || succeeded != total {
				t.Fatalf("%d deliveries, %d succeeded; want %d each", deliveries, succeeded, total)
			}
			failed := 0
			for _, id := range emitted {
				switch acked[id] {
				case 1:
				case 0:
					t.Fatalf("event %s was never acknowledged", id)
				default:
					t.Fatalf("event %s was acknowledged %d times: two workers sent it", id, acked[id])
				}
				failed += failures[id]
			}
			t.Logf("%d events, %d failed attempts retried, all delivered once in %s", total, failed, elapsed.Round(time.Millisecond))
		})
	}
}
