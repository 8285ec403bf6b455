package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/retention"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestRetentionJob: payd serve runs the retention job with the configured
// policy: once the clock passes an event's horizon (and the event has been
// dispatched), the job deletes it; the merchant's ledger is untouched.
func TestRetentionJob(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		db := e.Main.DB
		var id string
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			ev, err := events.Emit(ctx, tx, e.Merchant.MerchantID, true, "payment_intent.succeeded", "payment_intent", "pi_1", map[string]any{"id": "pi_1"})
			id = ev.ID
			return err
		}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the event dispatched", func() bool {
			return storetest.Count(t, db, "SELECT COUNT(*) FROM events WHERE id = ? AND dispatched_at IS NOT NULL", id) == 1
		})
		// Eight days on, past the configured seven.
		later := time.Now().Add(8 * 24 * time.Hour)
		db.SetClock(func() time.Time { return later })
		// Due now (once its first run, at start, has finished).
		waitFor(t, "the retention job queued", func() bool {
			r, err := db.Exec(ctx, "UPDATE jobs SET run_at = ? WHERE kind = 'retention' AND status = 'queued'", store.Micros(later))
			if err != nil {
				t.Fatal(err)
			}
			n, _ := r.RowsAffected()
			return n == 1
		})
		e.Main.Jobs.Notify()
		waitFor(t, "the retention job to delete the event", func() bool {
			return storetest.Count(t, db, "SELECT COUNT(*) FROM events WHERE id = ?", id) == 0
		})
		// The run logs what it removed once it has returned.
		waitFor(t, "the retention line in the logs", func() bool { return strings.Contains(e.Logs.String(), `"msg":"retention"`) })
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	}, func(c *app.Config) {
		c.Retention = retention.Policy{Events: 7 * 24 * time.Hour, Deliveries: 7 * 24 * time.Hour, RequestLogs: 30 * 24 * time.Hour,
			IdempotencyKeys: 24 * time.Hour}
	})
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
