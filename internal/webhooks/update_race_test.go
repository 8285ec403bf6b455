package webhooks

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestUpdateEndpointKeepsBreakerDisable: the circuit breaker disables an
// endpoint in a transaction that commits while an edit of the same endpoint
// (its description) is under way, between the moment the edit would read the
// row and the moment it writes it. The edit must not write back the status it
// read: afterwards the endpoint is disabled with the breaker's reason, and the
// edit either succeeded on the disabled endpoint or answered a conflict.
//
// On PostgreSQL the breaker's transaction holds the row while the edit starts,
// and commits once the edit waits on that lock (seen in pg_stat_activity): with
// the row read FOR UPDATE the edit reads only after the commit; without the
// lock it would read the old status, and without the compare-and-set on the
// status write it would then undo the disable. SQLite has one writer, so there
// the edit cannot start before the breaker commits; the test then checks only
// the outcome.
func TestUpdateEndpointKeepsBreakerDisable(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		box, err := secretbox.New(strings.Repeat("ab", 32))
		if err != nil {
			t.Fatal(err)
		}
		const failures = 3
		s := New(Config{DB: db, Box: box, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			BreakerFailures: failures, BreakerPeriod: time.Minute})
		o := Owner{MerchantID: "mer_race", Livemode: false}
		u := "http://127.0.0.1:9/hooks"
		ep, _, err := s.CreateEndpoint(ctx, o, EndpointParams{URL: &u, EnabledEvents: []string{"*"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// One failure short of the breaker, failing for an hour.
		if _, err := db.Exec(ctx, "UPDATE webhook_endpoints SET consecutive_failures = ?, failing_since = ? WHERE id = ?",
			failures-1, store.Micros(time.Now().Add(-time.Hour)), ep.ID); err != nil {
			t.Fatal(err)
		}

		// The breaker records one more failed attempt and disables the
		// endpoint, then holds its transaction open until released.
		tripped := make(chan error, 1)
		commit := make(chan struct{})
		release := sync.OnceFunc(func() { close(commit) })
		defer release()
		breakerDone := make(chan error, 1)
		go func() {
			var once sync.Once
			breakerDone <- db.InTx(ctx, func(tx *store.Tx) error {
				got, err := s.countForBreaker(ctx, tx, []recordItem{{c: claimed{endpointID: ep.ID},
					o: outcome{at: time.Now(), httpStatus: 503, err: "HTTP 503", sent: true}}})
				if err == nil && len(got) != 1 {
					err = errs.Invalid("", "test", "the breaker disabled %d endpoints, want 1", len(got))
				}
				once.Do(func() { tripped <- err })
				<-commit
				return err
			})
		}()
		if err := <-tripped; err != nil {
			t.Fatal(err)
		}

		type answer struct {
			ep  Endpoint
			err error
		}
		edited := make(chan answer, 1)
		desc := "edited while the breaker trips"
		go func() {
			ep, err := s.UpdateEndpoint(ctx, store.NoClaim, o, ep.ID, EndpointParams{Description: &desc})
			edited <- answer{ep, err}
		}()
		if db.Engine().ConcurrentWriters() { // the edit waits on the row lock
			waitForLockWait(t, db)
		} else {
			select {
			case a := <-edited:
				t.Fatalf("the edit finished while the breaker's transaction was open: %+v", a)
			case <-time.After(100 * time.Millisecond):
			}
		}
		release()
		if err := <-breakerDone; err != nil {
			t.Fatal(err)
		}

		a := <-edited
		switch e := errs.As(a.err); {
		case a.err == nil:
			if a.ep.Status != EndpointDisabled {
				t.Errorf("the edit answered status %q, want disabled", a.ep.Status)
			}
		case e != nil && e.Kind == errs.KindConflict:
		default:
			t.Errorf("the edit answered %v, want success or a conflict", a.err)
		}
		var status string
		var reason sql.NullString
		if err := db.QueryRow(ctx, "SELECT status, disabled_reason FROM webhook_endpoints WHERE id = ?", ep.ID).Scan(&status, &reason); err != nil {
			t.Fatal(err)
		}
		if status != string(EndpointDisabled) || reason.String != DisabledRepeatedFailure {
			t.Fatalf("after the edit the endpoint is %s (reason %q): the breaker's disable was undone", status, reason.String)
		}
	})
}

// waitForLockWait waits until a session of db's PostgreSQL database waits
// on a row lock.
func waitForLockWait(t *testing.T, db *store.DB) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var n int
		if err := db.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%webhook_endpoints%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatal("the edit never waited on the breaker's row lock")
}
