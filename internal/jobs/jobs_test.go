package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestSharedRunnersRunEachJobOnce starts three runners over one database (as
// three payd processes would) and checks every job ran exactly once.
func TestSharedRunnersRunEachJobOnce(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		const n = 300
		var mu sync.Mutex
		ran := map[int]int{}
		done := make(chan struct{})
		handler := func(ctx context.Context, j jobs.Job) error {
			var p struct{ N int }
			json.Unmarshal(j.Payload, &p)
			mu.Lock()
			ran[p.N]++
			total := 0
			for _, c := range ran {
				total += c
			}
			mu.Unlock()
			if total == n {
				close(done)
			}
			return nil
		}
		for i := 0; i < n; i++ {
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				return jobs.Enqueue(ctx, tx, "count", map[string]int{"N": i}, tx.Now(), "")
			}); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for w := 0; w < 3; w++ {
			r := jobs.NewRunner(db, quiet)
			r.Poll = 10 * time.Millisecond
			r.Handle("count", handler)
			wg.Add(1)
			go func() { defer wg.Done(); r.Run(ctx) }()
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("jobs did not all run")
		}
		cancel()
		wg.Wait()
		for i := 0; i < n; i++ {
			if ran[i] != 1 {
				t.Fatalf("job %d ran %d times", i, ran[i])
			}
		}
		var left int
		db.QueryRow(context.Background(), "SELECT COUNT(*) FROM jobs WHERE status <> 'done'").Scan(&left)
		if left != 0 {
			t.Fatalf("%d jobs not done", left)
		}
	})
}

func TestFailedJobIsRetriedAndUniqueKeyDedupes(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for i := 0; i < 2; i++ {
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				return jobs.Enqueue(ctx, tx, "flaky", nil, tx.Now(), "only-once")
			}); err != nil {
				t.Fatal(err)
			}
		}
		calls := 0
		r := jobs.NewRunner(db, quiet)
		r.Handle("flaky", func(ctx context.Context, j jobs.Job) error {
			calls++
			return errors.New("provider down")
		})
		if n, err := r.RunOnce(ctx); err != nil || n != 1 {
			t.Fatalf("RunOnce = %d, %v; want one job (the unique key dedupes)", n, err)
		}
		var status, lastErr string
		var attempts int
		var runAt int64
		db.QueryRow(ctx, "SELECT status, attempts, last_error, run_at FROM jobs").Scan(&status, &attempts, &lastErr, &runAt)
		if status != "queued" || attempts != 1 || lastErr != "provider down" || runAt <= store.Micros(db.Now()) {
			t.Fatalf("after failure: %s %d %q %d", status, attempts, lastErr, runAt)
		}
		if n, _ := r.RunOnce(ctx); n != 0 {
			t.Fatal("a backed-off job ran early")
		}
	})
}

func TestExpiredLeaseIsReclaimed(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		db.InTx(ctx, func(tx *store.Tx) error { return jobs.Enqueue(ctx, tx, "k", nil, tx.Now(), "") })
		// A runner that claims and then "dies": simulate with a lease in the past.
		db.Exec(ctx, "UPDATE jobs SET status = 'running', locked_by = 'dead', locked_until = ?", store.Micros(db.Now().Add(-time.Second)))
		ran := 0
		r := jobs.NewRunner(db, quiet)
		r.Handle("k", func(context.Context, jobs.Job) error { ran++; return nil })
		if _, err := r.RunOnce(ctx); err != nil || ran != 1 {
			t.Fatalf("ran=%d err=%v", ran, err)
		}
	})
}

// TestDelayedJobRunsOnTime: a job due in 150 ms runs then, not at the next
// one-second poll.
func TestDelayedJobRunsOnTime(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ran := make(chan time.Time, 1)
		r := jobs.NewRunner(db, quiet)
		r.Poll = 5 * time.Second
		r.Handle("later", func(context.Context, jobs.Job) error { ran <- time.Now(); return nil })
		go r.Run(ctx)
		time.Sleep(50 * time.Millisecond)
		start := time.Now()
		db.InTx(ctx, func(tx *store.Tx) error {
			return jobs.Enqueue(ctx, tx, "later", nil, tx.Now().Add(150*time.Millisecond), "")
		})
		r.Notify()
		select {
		case at := <-ran:
			if d := at.Sub(start); d < 100*time.Millisecond || d > 2*time.Second {
				t.Fatalf("ran after %v", d)
			}
		case <-time.After(4 * time.Second):
			t.Fatal("delayed job did not run before the poll interval")
		}
	})
}
