package webhooks_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/webhooks"
)

// faultSchedule is long enough for a test to bring a receiver back between
// attempts, short enough to keep the test quick.
var faultSchedule = []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond}

func withSchedule(s []time.Duration) apptest.Option {
	return func(c *app.Config) { c.WebhookRetrySchedule = s }
}

// attemptTimes reads the attempts' start times from the database (the API
// shows seconds; the schedule is in milliseconds).
func attemptTimes(t *testing.T, db *store.DB, deliveryID string) []time.Time {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT at FROM webhook_attempts WHERE delivery_id = ? ORDER BY id", deliveryID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var at int64
		rows.Scan(&at)
		out = append(out, store.FromMicros(at))
	}
	return out
}

func failedAttempts(t *testing.T, db *store.DB, eventID string) int {
	var n int
	db.QueryRow(context.Background(), `SELECT COUNT(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
		WHERE d.event_id = ? AND a.error IS NOT NULL`, eventID).Scan(&n)
	return n
}

// TestReceiverFaults: a receiver that is down, answers 500, answers after
// 6 s, or closes the connection is retried on the schedule and finally gets
// the event once it recovers; one that never recovers ends failed after the
// last retry.
func TestReceiverFaults(t *testing.T) {
	t.Parallel() // mostly waiting (retry schedules, a 6 s answer, process starts)
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		cases := []struct {
			name     string
			behave   func(n int, id string) action
			down     bool // the receiver is not listening until 2 attempts failed
			attempts int  // attempts until the delivery ends
			final    string
			errPart  string // in the failed attempts' error
		}{
			{name: "down", down: true, attempts: 3, final: "succeeded", errPart: "connection refused"},
			{name: "answers 500", behave: func(n int, _ string) action {
				if n <= 2 {
					return answer500
				}
				return answer200
			}, attempts: 3, final: "succeeded", errPart: "HTTP 500"},
			{name: "answers after 6s", behave: func(n int, _ string) action {
				if n == 1 {
					return answerLate
				}
				return answer200
			}, attempts: 2, final: "succeeded", errPart: "no answer within 5s"},
			{name: "closes the connection", behave: func(n int, _ string) action {
				if n <= 2 {
					return hangUp
				}
				return answer200
			}, attempts: 3, final: "succeeded", errPart: "connection was closed"},
			{name: "never recovers", behave: func(int, string) action { return answer500 },
				attempts: len(faultSchedule) + 1, final: "failed", errPart: "HTTP 500"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				m, err := e.Main.Merchants.Create(ctx, merchants.CreateParams{Name: "Fault " + c.name})
				if err != nil {
					t.Fatal(err)
				}
				key := m.SecretKeys[0]
				rc := newReceiver(t)
				rc.behave = c.behave
				var addr string
				url := rc.URL()
				if c.down {
					ln, err := net.Listen("tcp", "127.0.0.1:0")
					if err != nil {
						t.Fatal(err)
					}
					addr = ln.Addr().String()
					ln.Close()
					url = "http://" + addr + "/hooks"
				}
				r := e.Do(apptest.Request{Method: "POST", Path: "/v1/webhook_endpoints", Key: key,
					Body: map[string]any{"url": url, "enabled_events": []string{"payout.failed"}}})
				if r.Status != 201 {
					t.Fatalf("create endpoint: %d %s", r.Status, r.Body)
				}
				var ep endpointJSON
				r.JSON(t, &ep)
				rc.setSecret(ep.Secret)
				ev := trigger(t, e, key, map[string]any{"event_type": "payout.failed"})
				if c.down {
					waitFor(t, 10*time.Second, "two refused attempts", func() bool { return failedAttempts(t, e.Main.DB, ev.ID) >= 2 })
					ln, err := net.Listen("tcp", addr)
					if err != nil {
						t.Fatalf("reopen %s: %v", addr, err)
					}
					srv := &http.Server{Handler: http.HandlerFunc(rc.serve)}
					go srv.Serve(ln)
					t.Cleanup(func() { srv.Close() })
				}
				ds := waitDelivered(t, e, key, ev.ID, 30*time.Second)
				if len(ds) != 1 {
					t.Fatalf("%d deliveries", len(ds))
				}
				d := ds[0]
				if d.Status != c.final || len(d.Attempts) != c.attempts || d.NextAttemptAt != nil {
					t.Fatalf("delivery %s after %d attempts, want %s after %d: %+v", d.Status, len(d.Attempts), c.final, c.attempts, d)
				}
				for i, a := range d.Attempts {
					last := i == len(d.Attempts)-1
					if last && c.final == "succeeded" {
						if a.Error != nil || a.HTTPStatus == nil || *a.HTTPStatus != 200 {
							t.Fatalf("last attempt %+v", a)
						}
						continue
					}
					if a.Error == nil || !strings.Contains(*a.Error, c.errPart) {
						t.Fatalf("attempt %d error %v, want it to say %q", i+1, a.Error, c.errPart)
					}
				}
				// Retried on schedule: each retry waits at least its entry.
				times := attemptTimes(t, e.Main.DB, d.ID)
				for i := 1; i < len(times); i++ {
					if gap := times[i].Sub(times[i-1]); gap < faultSchedule[i-1] {
						t.Errorf("retry %d came %s after the attempt before, schedule says %s", i, gap, faultSchedule[i-1])
					}
				}
				if c.final == "succeeded" {
					for _, g := range rc.requests() {
						if g.Verified != nil {
							t.Errorf("a delivery failed verification: %v", g.Verified)
						}
					}
					if rc.acked()[ev.ID] < 1 {
						t.Fatal("the receiver never acknowledged the event")
					}
				}
			})
		}
	}, withSchedule(faultSchedule))
}

// TestSandboxWebhookFail: the first attempt of each delivery about an object
// made under sandbox_webhook_fail is recorded failed without sending, then
// the retry delivers it.
func TestSandboxWebhookFail(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		rc := newReceiver(t)
		register(t, e, e.SK, rc)
		// What the payments capability does for an intent created under the
		// scenario: mark it and emit its event in the same transaction.
		pi := map[string]any{"id": "pi_WEBHOOKFAIL1", "object": "payment_intent", "status": "succeeded", "amount_minor": 700, "currency": "DJF"}
		var ev events.Event
		err := e.Main.DB.InTx(ctx, func(tx *store.Tx) error {
			if err := events.MarkWebhookFail(ctx, tx, "pi_WEBHOOKFAIL1"); err != nil {
				return err
			}
			var err error
			ev, err = events.Emit(ctx, tx, e.Merchant.MerchantID, false, "payment_intent.succeeded", "payment_intent", "pi_WEBHOOKFAIL1", pi)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		check := func(eventID string) {
			t.Helper()
			ds := waitDelivered(t, e, e.SK, eventID, 20*time.Second)
			if len(ds) != 1 || ds[0].Status != "succeeded" || len(ds[0].Attempts) != 2 {
				t.Fatalf("deliveries %+v", ds)
			}
			first := ds[0].Attempts[0]
			if first.Error == nil || *first.Error != webhooks.FailFirstMessage || first.HTTPStatus != nil {
				t.Fatalf("first attempt %+v", first)
			}
			n := 0
			for _, g := range rc.requests() {
				if g.EventID == eventID {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("the receiver got %d requests for %s, want 1 (the first attempt is not sent)", n, eventID)
			}
		}
		check(ev.ID)
		// A triggered event about the same object behaves the same, and
		// carries the object's latest state.
		tr := trigger(t, e, e.SK, map[string]any{"event_type": "payment_intent.succeeded", "related_object_id": "pi_WEBHOOKFAIL1"})
		if tr.Data.ID != "pi_WEBHOOKFAIL1" || tr.Data.Object["amount_minor"] != float64(700) {
			t.Fatalf("triggered event %+v", tr)
		}
		check(tr.ID)
		// An unmarked object is delivered at the first attempt.
		other := trigger(t, e, e.SK, map[string]any{"event_type": "payment_intent.succeeded"})
		if ds := waitDelivered(t, e, e.SK, other.ID, 20*time.Second); len(ds[0].Attempts) != 1 {
			t.Fatalf("unmarked: %+v", ds)
		}
	})
}
