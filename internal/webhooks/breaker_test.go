package webhooks_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/webhooks"
)

func withBreaker(failures int, period time.Duration) apptest.Option {
	return func(c *app.Config) { c.WebhookBreakerFailures, c.WebhookBreakerPeriod = failures, period }
}

type breakerState struct {
	status       string
	reason       sql.NullString
	failures     int
	failingSince sql.NullInt64
	disabledAt   sql.NullInt64
}

func readBreaker(t *testing.T, db *store.DB, endpointID string) breakerState {
	t.Helper()
	var b breakerState
	if err := db.QueryRow(context.Background(), `SELECT status, disabled_reason, consecutive_failures, failing_since, disabled_at
		FROM webhook_endpoints WHERE id = ?`, endpointID).Scan(&b.status, &b.reason, &b.failures, &b.failingSince, &b.disabledAt); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCircuitBreaker: an endpoint whose attempts keep failing (5 in a row
// over at least 300 ms here) is disabled by payd; the webhook_endpoint.disabled
// event is emitted once and reaches the merchant's other endpoint; the
// deliveries wait (no attempt, none failed), new events queue behind them;
// the portal shows a notice with a re-enable button, and re-enabling sends
// everything that waited.
func TestCircuitBreaker(t *testing.T) {
	t.Parallel()
	const failures, period = 5, 300 * time.Millisecond
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		db := e.Main.DB
		var healthy atomic.Bool
		flaky := newReceiver(t)
		flaky.behave = func(int, string) action {
			if healthy.Load() {
				return answer200
			}
			return answer500
		}
		watch := newReceiver(t)
		wep := createEndpoint(t, e, e.SK, watch.URL(), webhooks.EventEndpointDisabled)
		watch.setSecret(wep.Secret)
		fep := createEndpoint(t, e, e.SK, flaky.URL(), "payout.failed")
		flaky.setSecret(fep.Secret)

		var evs []string
		for i := 0; i < 10; i++ {
			evs = append(evs, trigger(t, e, e.SK, map[string]any{"event_type": "payout.failed"}).ID)
		}
		waitFor(t, 2*time.Minute, "payd to disable the failing endpoint", func() bool {
			return readBreaker(t, db, fep.ID).status == "disabled"
		})
		b := readBreaker(t, db, fep.ID)
		if b.reason.String != webhooks.DisabledRepeatedFailure || b.failures < failures || !b.failingSince.Valid || !b.disabledAt.Valid {
			t.Fatalf("breaker state %+v", b)
		}
		if span := store.FromMicros(b.disabledAt.Int64).Sub(store.FromMicros(b.failingSince.Int64)); span < period {
			t.Fatalf("disabled after failures spanning %s; the breaker needs %s", span, period)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/webhook_endpoints/" + fep.ID, Key: e.SK}); r.Status != 200 || r.Map(t)["status"] != "disabled" {
			t.Fatalf("endpoint: %d %s", r.Status, r.Body)
		}

		// Nothing is in flight once the attempts under way end; then no
		// attempt is made while it is disabled, and no delivery fails.
		inflight := func() int {
			return countRows(t, db, "SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND lease IS NOT NULL", fep.ID)
		}
		attempts := func() int {
			return countRows(t, db, `SELECT COUNT(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = ?`, fep.ID)
		}
		waitFor(t, time.Minute, "attempts under way to end", func() bool { return inflight() == 0 })
		n0 := attempts()
		late := trigger(t, e, e.SK, map[string]any{"event_type": "payout.failed"}).ID
		evs = append(evs, late)
		waitFor(t, time.Minute, "the new event's delivery to be queued", func() bool {
			return countRows(t, db, "SELECT COUNT(*) FROM webhook_deliveries WHERE event_id = ? AND endpoint_id = ?", late, fep.ID) == 1
		})
		time.Sleep(2 * time.Second) // several retry gaps of the schedule
		if n := attempts(); n != n0 {
			t.Fatalf("%d attempts while the endpoint was disabled", n-n0)
		}
		if n := countRows(t, db, "SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending'", fep.ID); n != len(evs) {
			t.Fatalf("%d deliveries waiting, want %d (none failed, the new one queued)", n, len(evs))
		}

		// The event, once, to the merchant's other endpoint.
		r := e.Do(apptest.Request{Method: "GET", Path: "/v1/events?type=" + webhooks.EventEndpointDisabled, Key: e.SK})
		var list struct {
			Data []struct {
				ID   string `json:"id"`
				Data struct {
					ID     string          `json:"id"`
					Object json.RawMessage `json:"object"`
				} `json:"data"`
			} `json:"data"`
		}
		r.JSON(t, &list)
		if len(list.Data) != 1 || list.Data[0].Data.ID != fep.ID {
			t.Fatalf("webhook_endpoint.disabled events: %s", r.Body)
		}
		var obj map[string]any
		json.Unmarshal(list.Data[0].Data.Object, &obj)
		if obj["status"] != "disabled" || obj["disabled_reason"] != webhooks.DisabledRepeatedFailure || obj["url"] != flaky.URL() || obj["secret"] != nil {
			t.Fatalf("event object %v", obj)
		}
		waitFor(t, time.Minute, "the other endpoint to get the event", func() bool { return watch.acked()[list.Data[0].ID] == 1 })

		// The portal's notice, and re-enabling from it.
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		page := p.Get("/portal/test/webhook_endpoints/" + fep.ID)
		page.Contains(t, `id="endpoint-breaker"`, "payd disabled this endpoint", fmt.Sprintf("Its %d waiting deliveries", len(evs)), `id="endpoint-reenable"`)
		p.Get("/portal/test/webhook_endpoints").Contains(t, "disabled by payd (repeated failure)")
		healthy.Store(true)
		if res := p.Post("/portal/test/webhook_endpoints/"+fep.ID+"/enable", url.Values{}); res.Status != http.StatusSeeOther {
			t.Fatalf("enable: %d %s", res.Status, res.Body)
		}
		waitFor(t, time.Minute, "every waiting delivery to arrive", func() bool {
			acked := flaky.acked()
			for _, id := range evs {
				if acked[id] != 1 {
					return false
				}
			}
			return true
		})
		waitFor(t, time.Minute, "the deliveries to be recorded", func() bool {
			return countRows(t, db, "SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'succeeded'", fep.ID) == len(evs)
		})
		if b := readBreaker(t, db, fep.ID); b.status != "enabled" || b.reason.Valid || b.failures != 0 || b.failingSince.Valid {
			t.Fatalf("after re-enabling: %+v", b)
		}
		if n := countRows(t, db, "SELECT COUNT(*) FROM events WHERE type = ? AND object_id = ?", webhooks.EventEndpointDisabled, fep.ID); n != 1 {
			t.Fatalf("%d webhook_endpoint.disabled events", n)
		}
		p.Get("/portal/test/webhook_endpoints/"+fep.ID).Contains(t, `id="endpoint-status">enabled<`)
	}, withSchedule(faultSchedule), withBreaker(failures, period))
}

// TestBreakerAcrossProcesses: two delivery workers sharing the database (two
// payd processes on PostgreSQL) keep the per-endpoint cap between them for
// a receiver that answers slowly (a fast one may borrow idle slots), and
// while both record failures of one endpoint it is disabled, and its event
// emitted, exactly once.
func TestBreakerAcrossProcesses(t *testing.T) {
	// Not parallel: it emits outside a payd (events.Emit reads the
	// process-wide notifier, which starting a payd in a parallel test sets).
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			const epCap, breakAfter = 4, 12
			db, svcs := twoProcesses(t, eng, webhooks.Config{
				RetrySchedule: []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond},
				Poll:          50 * time.Millisecond, Concurrency: 32, EndpointConcurrency: epCap, BreakerFailures: breakAfter})
			var mu sync.Mutex
			cur, most := 0, 0
			rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				mu.Lock()
				cur++
				most = max(most, cur)
				mu.Unlock()
				time.Sleep(1100 * time.Millisecond) // slower than an endpoint that may borrow
				mu.Lock()
				cur--
				mu.Unlock()
				w.WriteHeader(503)
			}))
			defer rcv.Close()
			ctx := context.Background()
			owner := webhooks.Owner{MerchantID: "mer_breaker", Livemode: false}
			ep, _, err := svcs[0].CreateEndpoint(ctx, owner, webhooks.EndpointParams{URL: &rcv.URL}, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = db.InTx(ctx, func(tx *store.Tx) error {
				for j := 0; j < 40; j++ {
					if _, err := events.Emit(ctx, tx, owner.MerchantID, false, "payout.failed", "payout", fmt.Sprintf("po_%05d", j), map[string]int{"n": j}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			runCtx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			for _, s := range svcs {
				wg.Add(1)
				go func(s *webhooks.Service) { defer wg.Done(); s.Run(runCtx) }(s)
				s.Notify()
			}
			waitFor(t, 2*time.Minute, "the endpoint to be disabled", func() bool {
				return readBreaker(t, db, ep.ID).status == "disabled"
			})
			waitFor(t, time.Minute, "attempts under way to end", func() bool {
				return countRows(t, db, "SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND lease IS NOT NULL", ep.ID) == 0
			})
			stop()
			wg.Wait()
			if n := countRows(t, db, "SELECT COUNT(*) FROM events WHERE type = ? AND object_id = ?", webhooks.EventEndpointDisabled, ep.ID); n != 1 {
				t.Fatalf("%d webhook_endpoint.disabled events, want 1", n)
			}
			if b := readBreaker(t, db, ep.ID); b.failures < breakAfter {
				t.Fatalf("disabled after %d failures", b.failures)
			}
			mu.Lock()
			defer mu.Unlock()
			if most > epCap {
				t.Fatalf("%d attempts to the endpoint at once across two processes; the cap is %d", most, epCap)
			}
			t.Logf("at most %d attempts at once", most)
		})
	}
}

// TestPausedEndpointQueueIsCapped: an endpoint payd disabled keeps the
// deliveries of new events for when it is enabled again, but no more than
// MaxPendingPerEndpoint of them (a receiver that stays down cannot make its
// queue grow for as long as the merchant's events keep coming).
func TestPausedEndpointQueueIsCapped(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		db := e.Main.DB
		ep := createEndpoint(t, e, e.SK, newReceiver(t).URL(), "payout.failed")
		if _, err := db.Exec(context.Background(), `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'failing',
			disabled_at = ? WHERE id = ?`, store.Micros(db.Now()), ep.ID); err != nil {
			t.Fatal(err)
		}
		n := webhooks.MaxPendingPerEndpoint + 50
		emitEvents(t, e, e.Merchant.MerchantID, "payout.failed", n)
		deadline := time.Now().Add(60 * time.Second)
		for countRows(t, db, "SELECT COUNT(*) FROM events WHERE dispatched_at IS NULL") > 0 {
			if time.Now().After(deadline) {
				t.Fatal("events not dispatched")
			}
			time.Sleep(20 * time.Millisecond)
		}
		pending := countRows(t, db, "SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending'", ep.ID)
		if pending != webhooks.MaxPendingPerEndpoint {
			t.Fatalf("%d deliveries wait for the paused endpoint after %d events, want %d", pending, n, webhooks.MaxPendingPerEndpoint)
		}
	})
}
