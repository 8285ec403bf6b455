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

// TestRunningJobKeepsItsLease: a job that runs for several leases keeps its
// lease (the runner renews it), so another runner polling meanwhile never
// runs it too; it runs once.
func TestRunningJobKeepsItsLease(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		db.InTx(ctx, func(tx *store.Tx) error { return jobs.Enqueue(ctx, tx, "slow", nil, tx.Now(), "") })
		var mu sync.Mutex
		runs := 0
		started := make(chan struct{})
		handler := func(first bool) jobs.Handler {
			return func(context.Context, jobs.Job) error {
				mu.Lock()
				runs++
				mu.Unlock()
				if first {
					close(started)
					time.Sleep(1200 * time.Millisecond) // four leases
				}
				return nil
			}
		}
		a, b := jobs.NewRunner(db, quiet), jobs.NewRunner(db, quiet)
		a.Lease, b.Lease = 300*time.Millisecond, 300*time.Millisecond
		a.Handle("slow", handler(true))
		b.Handle("slow", handler(false))
		done := make(chan error, 1)
		go func() { _, err := a.RunOnce(ctx); done <- err }()
		<-started
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			if _, err := b.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if runs != 1 {
			t.Fatalf("the slow job ran %d times; its lease was not kept", runs)
		}
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM jobs WHERE status = 'done'"); n != 1 {
			t.Fatalf("%d jobs done", n)
		}
	})
}

// TestDeadRunnersJobTakenOverWithinALease: a job claimed by a runner that
// then died (its lease as a claim writes it, never renewed) is run by another
// runner once DefaultLease has passed — seconds, not minutes.
func TestDeadRunnersJobTakenOverWithinALease(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		db.SetClock(func() time.Time { return now })
		db.InTx(ctx, func(tx *store.Tx) error { return jobs.Enqueue(ctx, tx, "k", nil, tx.Now(), "") })
		dead := jobs.NewRunner(db, quiet)
		if dead.Lease > 10*time.Second {
			t.Fatalf("a runner's lease is %s: a dead process's jobs would wait that long", dead.Lease)
		}
		blocked := make(chan struct{})
		dead.Handle("k", func(ctx context.Context, _ jobs.Job) error { <-blocked; return nil })
		deadCtx, kill := context.WithCancel(context.Background())
		go dead.RunOnce(deadCtx) // claims the job, then hangs in its handler
		defer close(blocked)
		for storetest.Count(t, db, "SELECT COUNT(*) FROM jobs WHERE status = 'running'") == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		kill() // its lease renewals stop: the process is gone
		ran := 0
		r := jobs.NewRunner(db, quiet)
		r.Handle("k", func(context.Context, jobs.Job) error { ran++; return nil })
		if n, _ := r.RunOnce(ctx); n != 0 {
			t.Fatal("a live lease was taken")
		}
		now = now.Add(dead.Lease + time.Millisecond)
		if n, err := r.RunOnce(ctx); err != nil || n != 1 || ran != 1 {
			t.Fatalf("after one lease: claimed %d, ran %d, %v", n, ran, err)
		}
	})
}

// TestUnsettledJobIsNotRenewedForever: a job whose outcome its runner could
// not record (the database went away as it finished) stays running under
// the runner's id; its lease must run out so that it runs again, even while
// the runner keeps busy with other jobs: the renewals keep the leases of the
// jobs the runner holds now, not of every row that bears its id.
func TestUnsettledJobIsNotRenewedForever(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := jobs.NewRunner(db, quiet)
		r.Lease, r.Poll = 300*time.Millisecond, 20*time.Millisecond
		quickRan := make(chan struct{})
		var once sync.Once
		r.Handle("quick", func(context.Context, jobs.Job) error { once.Do(func() { close(quickRan) }); return nil })
		slowWaited := make(chan bool, 1)
		r.Handle("slow", func(context.Context, jobs.Job) error {
			select {
			case <-quickRan:
				slowWaited <- true
			case <-time.After(3 * time.Second):
				slowWaited <- false
			}
			return nil
		})
		db.InTx(ctx, func(tx *store.Tx) error { return jobs.Enqueue(ctx, tx, "quick", nil, tx.Now(), "") })
		// The quick job ran under this runner's id, whose finish never
		// reached the database.
		if _, err := db.Exec(ctx, "UPDATE jobs SET status = 'running', locked_by = ?, locked_until = ?, attempts = 1",
			r.WorkerID(), store.Micros(db.Now().Add(r.Lease))); err != nil {
			t.Fatal(err)
		}
		db.InTx(ctx, func(tx *store.Tx) error { return jobs.Enqueue(ctx, tx, "slow", nil, tx.Now(), "") })
		go r.Run(ctx)
		if !<-slowWaited {
			t.Fatal("the unsettled job's lease was renewed while another job ran: it never ran again")
		}
	})
}
