package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/webhooks"
)

// stallServer is a receiver that never answers: each request waits until
// the sender gives up (its attempt timeout) or the test ends. It counts the
// requests it got and the most the sender had in flight at once, per path
// and in all.
//
// In flight is counted from the requests' arrivals, not from the handlers
// still running: every attempt here lasts the sender's whole timeout (5 s),
// so requests that arrive within stallWindow (less than that) of each other
// were all in flight together, whereas a handler may notice its sender's
// disconnect only after the sender's next attempt has already arrived (on a
// loaded machine a whole round of 16 timed-out attempts was still counted
// when the next 16 came in).
type stallServer struct {
	srv     *httptest.Server
	stop    chan struct{}
	mu      sync.Mutex
	started int
	arrived map[string][]time.Time
}

// stallWindow is shorter than the sender's 5 s attempt timeout by a second
// of scheduling slack.
const stallWindow = 4 * time.Second

func newStallServer(t *testing.T) *stallServer {
	s := &stallServer{stop: make(chan struct{}), arrived: map[string][]time.Time{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.started++
		s.arrived[r.URL.Path] = append(s.arrived[r.URL.Path], time.Now())
		s.mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
	}))
	t.Cleanup(s.srv.Close)
	t.Cleanup(func() { close(s.stop) }) // runs first: no handler is left waiting
	return s
}

// counts returns the requests received and the most that arrived within one
// stallWindow, in all and per path.
func (s *stallServer) counts() (started, maxAll int, maxPath map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maxPath = map[string]int{}
	var all []time.Time
	for path, ts := range s.arrived {
		maxPath[path] = peakWithin(ts, stallWindow)
		all = append(all, ts...)
	}
	return s.started, peakWithin(all, stallWindow), maxPath
}

// peakWithin is the most of ts within any window shorter than w.
func peakWithin(ts []time.Time, w time.Duration) int {
	ts = append([]time.Time(nil), ts...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	peak, lo := 0, 0
	for hi := range ts {
		for ts[hi].Sub(ts[lo]) >= w {
			lo++
		}
		peak = max(peak, hi-lo+1)
	}
	return peak
}

func createEndpoint(t *testing.T, e *apptest.Env, key, url string, types ...string) endpointJSON {
	t.Helper()
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/webhook_endpoints", Key: key,
		Body: map[string]any{"url": url, "enabled_events": types}})
	if r.Status != 201 {
		t.Fatalf("create endpoint: %d %s", r.Status, r.Body)
	}
	var ep endpointJSON
	r.JSON(t, &ep)
	return ep
}

// emitEvents records n events of a merchant in one transaction each
// hundred, as capabilities do, and wakes the dispatcher.
func emitEvents(t *testing.T, e *apptest.Env, merchantID, typ string, n int) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for i := 0; i < n; i += 100 {
		var batch []string
		err := e.Main.DB.InTx(ctx, func(tx *store.Tx) error {
			batch = batch[:0]
			for j := i; j < min(n, i+100); j++ {
				ev, err := events.Emit(ctx, tx, merchantID, false, typ, "payout", fmt.Sprintf("po_fair_%s_%05d", merchantID[len(merchantID)-6:], j), map[string]int{"n": j})
				if err != nil {
					return err
				}
				batch = append(batch, ev.ID)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, batch...)
	}
	e.Main.Webhooks().Notify()
	return out
}

func countRows(t *testing.T, db *store.DB, q string, args ...any) int {
	t.Helper()
	return storetest.Count(t, db, q, args...)
}

// TestFairDeliveryAcrossMerchants is the reproduction of one merchant
// stalling delivery for all: a merchant whose ten endpoints never answer
// has 3,000 deliveries due, older than anyone else's; another merchant's
// healthy receiver must still get its 20 deliveries at once — before the
// stalling merchant has had more than a few rounds of attempts — and the
// stalling merchant never holds more than its share of the slots.
func TestFairDeliveryAcrossMerchants(t *testing.T) {
	t.Parallel() // mostly waiting on attempts that time out
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		stall := newStallServer(t)
		bad, err := e.Main.Merchants.Create(ctx, merchants.CreateParams{Name: "Stalling merchant"})
		if err != nil {
			t.Fatal(err)
		}
		const badEndpoints, badEvents = 10, 300
		for i := 0; i < badEndpoints; i++ {
			createEndpoint(t, e, bad.SecretKeys[0], fmt.Sprintf("%s/ep%d", stall.srv.URL, i), "payout.succeeded")
		}
		emitEvents(t, e, bad.MerchantID, "payout.succeeded", badEvents)
		waitFor(t, 2*time.Minute, "the stalling merchant's deliveries", func() bool {
			return countRows(t, e.Main.DB, "SELECT COUNT(*) FROM webhook_deliveries WHERE merchant_id = ?", bad.MerchantID) == badEndpoints*badEvents
		})

		rc := newReceiver(t)
		ep := createEndpoint(t, e, e.SK, rc.URL(), "payout.failed")
		rc.setSecret(ep.Secret)
		good := emitEvents(t, e, e.Merchant.MerchantID, "payout.failed", 20)

		// Wait for the healthy receiver, or for the stalling merchant to
		// have started more attempts than three rounds of its fair share:
		// on a scheduler that serves the oldest first it would start all
		// 3,000 before the healthy merchant got one.
		bound := 3 * webhooks.DefaultMerchantConcurrency
		var started int
		waitFor(t, 3*time.Minute, "the healthy receiver or the stalled one's attempts", func() bool {
			started, _, _ = stall.counts()
			return len(rc.acked()) == len(good) || started > bound
		})
		acked := rc.acked()
		if len(acked) != len(good) {
			t.Fatalf("the healthy receiver got %d of %d events while the stalling merchant's endpoints took %d attempts", len(acked), len(good), started)
		}
		for _, id := range good {
			if acked[id] != 1 {
				t.Fatalf("event %s acknowledged %d times", id, acked[id])
			}
		}
		_, maxAll, maxPath := stall.counts()
		if maxAll > webhooks.DefaultMerchantConcurrency {
			t.Fatalf("the stalling merchant held %d attempts at once; its share is %d", maxAll, webhooks.DefaultMerchantConcurrency)
		}
		for path, n := range maxPath {
			if n > webhooks.DefaultEndpointConcurrency {
				t.Fatalf("endpoint %s held %d attempts at once; the cap is %d", path, n, webhooks.DefaultEndpointConcurrency)
			}
		}
		t.Logf("healthy receiver served while the stalling merchant had started %d attempts (at most %d at once)", started, maxAll)
	})
}

// TestRedeliveryCaps: redeliver refuses with 429 and changes nothing past
// five redeliveries of one event to one endpoint in an hour, when the
// endpoint already has 1,000 deliveries waiting, and past 1,000 redelivered
// deliveries of a merchant and mode in an hour; other merchants are not
// affected.
func TestRedeliveryCaps(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		db := e.Main.DB
		rc := newReceiver(t)
		ep := createEndpoint(t, e, e.SK, rc.URL(), "payout.failed")
		rc.setSecret(ep.Secret)
		ev := trigger(t, e, e.SK, map[string]any{"event_type": "payout.failed"})
		redeliver := func(eventID, endpointID string) *apptest.Response {
			body := map[string]any{}
			if endpointID != "" {
				body["endpoint_id"] = endpointID
			}
			return e.Do(apptest.Request{Method: "POST", Path: "/v1/events/" + eventID + "/redeliver", Key: e.SK, Body: body})
		}
		deliveriesOf := func(eventID string) int {
			return countRows(t, db, "SELECT COUNT(*) FROM webhook_deliveries WHERE event_id = ?", eventID)
		}
		// The event's own delivery is made by the dispatcher in the
		// background: wait for it, so the counts below see only what the
		// redeliveries make.
		for deadline := time.Now().Add(10 * time.Second); deliveriesOf(ev.ID) == 0; {
			if time.Now().After(deadline) {
				t.Fatal("the event was never dispatched")
			}
			time.Sleep(10 * time.Millisecond)
		}
		expect429 := func(r *apptest.Response, code, param string) {
			t.Helper()
			if r.Status != http.StatusTooManyRequests || r.ErrorCode() != code {
				t.Fatalf("want 429 %s, got %d %s", code, r.Status, r.Body)
			}
			var body struct {
				Error struct {
					Param   string `json:"param"`
					Message string `json:"message"`
				} `json:"error"`
			}
			r.JSON(t, &body)
			if body.Error.Param != param || body.Error.Message == "" {
				t.Fatalf("429 %s: param %q (want %q), message %q", code, body.Error.Param, param, body.Error.Message)
			}
		}

		t.Run("per event and endpoint", func(t *testing.T) {
			for i := 0; i < webhooks.MaxRedeliveriesPerEventEndpoint; i++ {
				if r := redeliver(ev.ID, ep.ID); r.Status != 202 {
					t.Fatalf("redeliver %d: %d %s", i+1, r.Status, r.Body)
				}
			}
			before := deliveriesOf(ev.ID)
			r := redeliver(ev.ID, ep.ID)
			expect429(r, "redelivery_rate_limited", "endpoint_id")
			if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" {
				t.Fatalf("Retry-After %q", ra)
			}
			if !strings.Contains(string(r.Body), ep.ID) {
				t.Fatalf("the message does not name the endpoint: %s", r.Body)
			}
			// Without endpoint_id the same endpoint is a target: refused too.
			expect429(redeliver(ev.ID, ""), "redelivery_rate_limited", "endpoint_id")
			if n := deliveriesOf(ev.ID); n != before {
				t.Fatalf("refused redeliveries made deliveries: %d, was %d", n, before)
			}
		})

		t.Run("queue depth", func(t *testing.T) {
			full := createEndpoint(t, e, e.SK, rc.URL(), "payout.failed")
			// 1,000 deliveries waiting for it (due tomorrow, so none is sent now).
			later := store.Micros(db.Now().Add(24 * time.Hour))
			err := db.InTx(ctx, func(tx *store.Tx) error {
				for i := 0; i < webhooks.MaxPendingPerEndpoint; i += 100 {
					var sb strings.Builder
					var args []any
					for j := 0; j < 100; j++ {
						if j > 0 {
							sb.WriteString(", ")
						}
						sb.WriteString("(?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?)")
						args = append(args, fmt.Sprintf("whdel_queue%05d", i+j), e.Merchant.MerchantID, false, fmt.Sprintf("evt_queue%05d", i+j), full.ID,
							later, false, false, store.Micros(db.Now()), store.Micros(db.Now()))
					}
					if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (id, merchant_id, livemode, event_id, endpoint_id, status, attempt_count,
						next_attempt_at, fail_first, redelivery, created_at, updated_at) VALUES `+sb.String(), args...); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			ev2 := trigger(t, e, e.SK, map[string]any{"event_type": "payout.failed"})
			waitFor(t, time.Minute, "the new event's deliveries", func() bool { return deliveriesOf(ev2.ID) == 2 })
			expect429(redeliver(ev2.ID, full.ID), "endpoint_queue_full", "endpoint_id")
			if n := deliveriesOf(ev2.ID); n != 2 {
				t.Fatalf("a refused redelivery made a delivery: %d", n)
			}
			// The other endpoint still takes a redelivery of it.
			if r := redeliver(ev2.ID, ep.ID); r.Status != 202 {
				t.Fatalf("redeliver to the endpoint with room: %d %s", r.Status, r.Body)
			}
			if _, err := db.Exec(ctx, "DELETE FROM webhook_deliveries WHERE endpoint_id = ? AND id LIKE 'whdel_queue%'", full.ID); err != nil {
				t.Fatal(err)
			}
		})

		t.Run("per merchant and mode", func(t *testing.T) {
			used := countRows(t, db, "SELECT COUNT(*) FROM webhook_deliveries WHERE merchant_id = ? AND redelivery = TRUE", e.Merchant.MerchantID)
			// Redeliveries made earlier in the hour, up to the cap.
			now := store.Micros(db.Now())
			err := db.InTx(ctx, func(tx *store.Tx) error {
				for i := used; i < webhooks.MaxRedeliveriesPerMerchant; i++ {
					if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (id, merchant_id, livemode, event_id, endpoint_id, status, attempt_count,
						next_attempt_at, fail_first, redelivery, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'succeeded', 1, NULL, ?, ?, ?, ?)`,
						fmt.Sprintf("whdel_window%05d", i), e.Merchant.MerchantID, false, fmt.Sprintf("evt_window%05d", i), ep.ID, false, true, now, now); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			ev3 := trigger(t, e, e.SK, map[string]any{"event_type": "payout.failed"})
			waitFor(t, time.Minute, "the new event's deliveries", func() bool { return deliveriesOf(ev3.ID) >= 1 })
			before := deliveriesOf(ev3.ID)
			r := redeliver(ev3.ID, "")
			expect429(r, "redelivery_rate_limited", "")
			if r.Header.Get("Retry-After") == "" {
				t.Fatal("no Retry-After")
			}
			if n := deliveriesOf(ev3.ID); n != before {
				t.Fatalf("a refused redelivery made deliveries: %d, was %d", n, before)
			}
			// Another merchant's window is its own.
			other, err := e.Main.Merchants.Create(ctx, merchants.CreateParams{Name: "Other merchant"})
			if err != nil {
				t.Fatal(err)
			}
			oep := createEndpoint(t, e, other.SecretKeys[0], rc.URL(), "payout.failed")
			oev := trigger(t, e, other.SecretKeys[0], map[string]any{"event_type": "payout.failed"})
			r = e.Do(apptest.Request{Method: "POST", Path: "/v1/events/" + oev.ID + "/redeliver", Key: other.SecretKeys[0],
				Body: map[string]any{"endpoint_id": oep.ID}})
			if r.Status != 202 {
				t.Fatalf("another merchant's redeliver: %d %s", r.Status, r.Body)
			}
		})
	})
}
