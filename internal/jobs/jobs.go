// Package jobs is payd's background-job runner. Jobs are rows in the jobs
// table; a runner claims ready rows with a lease (FOR UPDATE SKIP LOCKED on
// PostgreSQL, so several payd processes share the work without running a
// job twice at once; one immediate transaction at a time on SQLite), runs
// them, and records the outcome only if it still holds the lease. The lease
// is short and renewed while the job runs (a heartbeat), so a process that
// dies mid-job loses its jobs within one lease, seconds, and another picks
// them up; handlers must be idempotent (at-least-once execution).
package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// Job is a claimed job.
type Job struct {
	ID       string
	Kind     string
	Payload  json.RawMessage
	Attempts int
}

// Handler runs one job. A returned error schedules a retry with backoff.
type Handler func(ctx context.Context, job Job) error

// Runner claims and runs jobs.
type Runner struct {
	db       *store.DB
	log      *slog.Logger
	workerID string
	handlers map[string]Handler
	periodic map[string]time.Duration

	// Poll is how often the runner looks for ready jobs without a wake-up.
	Poll time.Duration
	// Lease is how long a claimed job is ours before others may take it
	// unless renewed: the runner renews the leases of its running jobs every
	// Lease/3, so only a runner that stopped (a killed process, or one cut
	// off from the database for a whole lease) loses them.
	Lease time.Duration
	// Concurrency bounds how many jobs run at once in this process.
	Concurrency int

	wake chan struct{}
	wg   sync.WaitGroup
	// held are the jobs this runner claimed and has not settled yet (run
	// and recorded, or handed back), whose leases it renews. A job whose
	// outcome could not be recorded leaves it too, so its lease runs out
	// and it runs again.
	heldMu sync.Mutex
	held   map[string]struct{}
}

// DefaultLease is a claimed job's lease: how soon another process takes over
// the jobs of one that died (a test clock's advance, a dispatch, an expiry).
const DefaultLease = 10 * time.Second

// NewRunner makes a runner over db.
func NewRunner(db *store.DB, log *slog.Logger) *Runner {
	host, _ := os.Hostname()
	return &Runner{db: db, log: log, workerID: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), ids.Secret("", 4)),
		handlers: map[string]Handler{}, periodic: map[string]time.Duration{}, held: map[string]struct{}{},
		Poll: time.Second, Lease: DefaultLease, Concurrency: 8, wake: make(chan struct{}, 1)}
}

// WorkerID identifies this runner in the jobs table.
func (r *Runner) WorkerID() string { return r.workerID }

// Handle registers the handler of a job kind.
func (r *Runner) Handle(kind string, h Handler) { r.handlers[kind] = h }

// Every registers kind as a periodic job run every interval, by one process
// at a time across all processes sharing the database.
func (r *Runner) Every(kind string, interval time.Duration, h Handler) {
	r.handlers[kind] = h
	r.periodic[kind] = interval
}

// Notify wakes the runner to look for work now.
func (r *Runner) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Enqueue adds a job in tx, to run at runAt. A non-empty uniqueKey makes the
// enqueue a no-op when a job with that key already exists.
func Enqueue(ctx context.Context, tx *store.Tx, kind string, payload any, runAt time.Time, uniqueKey string) error {
	data, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	var uk any
	if uniqueKey != "" {
		uk = uniqueKey
	}
	now := store.Micros(tx.Now())
	_, err = tx.Exec(ctx, `INSERT INTO jobs (id, kind, unique_key, payload, status, run_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, 'queued', ?, ?, ?) ON CONFLICT (unique_key) DO NOTHING`,
		ids.New("job_"), kind, uk, string(data), store.Micros(runAt), now, now)
	return err
}

// Run claims and runs jobs until ctx is done, then waits for running jobs.
func (r *Runner) Run(ctx context.Context) error {
	if err := r.schedulePeriodic(ctx); err != nil {
		return err
	}
	sem := make(chan struct{}, r.Concurrency)
	t := time.NewTimer(r.Poll)
	defer t.Stop()
	defer r.keepLeases(ctx)()
	defer r.wg.Wait()
	for {
		free := cap(sem) - len(sem)
		if free > 0 {
			claimed, err := r.claim(ctx, free)
			if err != nil && ctx.Err() == nil {
				r.log.Error("claim jobs", "err", err)
			}
			for _, j := range claimed {
				sem <- struct{}{}
				r.wg.Add(1)
				go func(j Job) {
					defer func() { <-sem; r.wg.Done() }()
					r.execute(ctx, j)
				}(j)
			}
			if len(claimed) == free {
				continue // there may be more ready right now
			}
		}
		// Sleep until the poll interval or the next queued job's time,
		// whichever comes first, so delayed jobs run on time.
		wait := r.Poll
		if next, ok := r.nextDue(ctx); ok {
			if d := time.Until(next); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-r.wake:
			if !t.Stop() {
				<-t.C
			}
		}
	}
}

// nextDue returns when the earliest queued job is due.
func (r *Runner) nextDue(ctx context.Context) (time.Time, bool) {
	var next sql.NullInt64
	if err := r.db.QueryRow(ctx, "SELECT MIN(run_at) FROM jobs WHERE status = 'queued'").Scan(&next); err != nil || !next.Valid {
		return time.Time{}, false
	}
	return store.FromMicros(next.Int64), true
}

// RunOnce claims and runs every ready job once, synchronously (for tests and
// `payd` commands).
func (r *Runner) RunOnce(ctx context.Context) (int, error) {
	if err := r.schedulePeriodic(ctx); err != nil {
		return 0, err
	}
	jobs, err := r.claim(ctx, 1000)
	if err != nil {
		return 0, err
	}
	defer r.keepLeases(ctx)()
	for _, j := range jobs {
		r.execute(ctx, j)
	}
	return len(jobs), nil
}

func (r *Runner) schedulePeriodic(ctx context.Context) error {
	for kind := range r.periodic {
		err := r.db.InTx(ctx, func(tx *store.Tx) error {
			return Enqueue(ctx, tx, kind, struct{}{}, tx.Now(), "periodic:"+kind)
		})
		if err != nil {
			return fmt.Errorf("schedule %s: %w", kind, err)
		}
	}
	return nil
}

// claim leases up to n ready jobs: queued ones whose time has come and
// running ones whose lease expired (their runner died).
func (r *Runner) claim(ctx context.Context, n int) ([]Job, error) {
	var out []Job
	err := r.db.InTx(ctx, func(tx *store.Tx) error {
		out = out[:0]
		now := store.Micros(tx.Now())
		rows, err := tx.Query(ctx, `UPDATE jobs SET status = 'running', locked_by = ?, locked_until = ?, attempts = attempts + 1, updated_at = ?
			WHERE id IN (SELECT id FROM jobs WHERE (status = 'queued' AND run_at <= ?) OR (status = 'running' AND locked_until < ?)
			ORDER BY run_at LIMIT ?`+tx.Dialect().ForUpdateSkipLocked()+`)
			RETURNING id, kind, payload, attempts`,
			r.workerID, now+r.Lease.Microseconds(), now, now, now, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var j Job
			var payload string
			if err := rows.Scan(&j.ID, &j.Kind, &payload, &j.Attempts); err != nil {
				return err
			}
			j.Payload = json.RawMessage(payload)
			out = append(out, j)
		}
		return rows.Err()
	})
	if err == nil {
		r.heldMu.Lock()
		for _, j := range out {
			r.held[j.ID] = struct{}{}
		}
		r.heldMu.Unlock()
	}
	return out, err
}

func (r *Runner) execute(ctx context.Context, j Job) {
	defer func() {
		r.heldMu.Lock()
		delete(r.held, j.ID)
		r.heldMu.Unlock()
	}()
	h := r.handlers[j.Kind]
	var err error
	if h == nil {
		err = fmt.Errorf("no handler for job kind %q in this process", j.Kind)
	} else {
		func() {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("job panicked: %v", p)
				}
			}()
			err = h(ctx, j)
		}()
	}
	if ctx.Err() != nil && err != nil {
		// Shutting down cut the job short: give it back at once, due now,
		// so another runner (or this process after a restart) runs it
		// without waiting for the lease to run out.
		if err := r.release(context.WithoutCancel(ctx), j); err != nil {
			r.log.Error("release job", "job_id", j.ID, "err", err)
		}
		return
	}
	if err != nil {
		r.log.Warn("job failed", "job_id", j.ID, "kind", j.Kind, "attempt", j.Attempts, "err", err)
	}
	if err := r.finish(context.WithoutCancel(ctx), j, err); err != nil {
		r.log.Error("finish job", "job_id", j.ID, "err", err)
	}
}

// keepLeases renews, every Lease/3 while this runner holds any job, the
// leases of all of them in one statement, until the returned stop is called
// (it waits for the renewer to end). A renewal that fails (the database
// away) is tried again at the next tick; a job whose lease ran out meanwhile
// may be run by another process too, which at-least-once handlers allow, and
// this runner's outcome is then not recorded (finish checks the lease).
func (r *Runner) keepLeases(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(max(r.Lease/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := r.renew(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("renew job leases", "err", err)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// renew extends the lease of every job this runner holds (none: nothing
// to do).
func (r *Runner) renew(ctx context.Context) error {
	r.heldMu.Lock()
	ids := make([]any, 0, len(r.held))
	for id := range r.held {
		ids = append(ids, id)
	}
	r.heldMu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	return r.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE jobs SET locked_until = ? WHERE locked_by = ? AND status = 'running' AND id IN (`+
			store.Placeholders(len(ids))+`)`, append([]any{store.Micros(tx.Now().Add(r.Lease)), r.workerID}, ids...)...)
		return err
	})
}

// release hands a claimed job back unfinished, without counting the attempt.
func (r *Runner) release(ctx context.Context, j Job) error {
	return r.db.InTx(ctx, func(tx *store.Tx) error {
		now := store.Micros(tx.Now())
		_, err := tx.Exec(ctx, `UPDATE jobs SET status = 'queued', run_at = ?, attempts = attempts - 1, locked_by = NULL, locked_until = NULL,
			updated_at = ? WHERE id = ? AND locked_by = ? AND status = 'running'`, now, now, j.ID, r.workerID)
		return err
	})
}

// finish records the outcome, but only while this runner still holds the lease.
func (r *Runner) finish(ctx context.Context, j Job, runErr error) error {
	return r.db.InTx(ctx, func(tx *store.Tx) error {
		now := tx.Now()
		if every, ok := r.periodic[j.Kind]; ok {
			msg := errString(runErr)
			_, err := tx.Exec(ctx, `UPDATE jobs SET status = 'queued', run_at = ?, attempts = 0, locked_by = NULL, locked_until = NULL, last_error = ?, updated_at = ?
				WHERE id = ? AND locked_by = ?`, store.Micros(now.Add(every)), msg, store.Micros(now), j.ID, r.workerID)
			return err
		}
		if runErr == nil {
			_, err := tx.Exec(ctx, `UPDATE jobs SET status = 'done', locked_by = NULL, locked_until = NULL, last_error = NULL, updated_at = ?
				WHERE id = ? AND locked_by = ?`, store.Micros(now), j.ID, r.workerID)
			return err
		}
		backoff := time.Duration(1<<min(j.Attempts, 10)) * time.Second
		_, err := tx.Exec(ctx, `UPDATE jobs SET status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
			run_at = ?, locked_by = NULL, locked_until = NULL, last_error = ?, updated_at = ? WHERE id = ? AND locked_by = ?`,
			store.Micros(now.Add(backoff)), errString(runErr), store.Micros(now), j.ID, r.workerID)
		return err
	})
}

func errString(err error) any {
	if err == nil {
		return nil
	}
	s := err.Error()
	if len(s) > 500 {
		s = s[:500]
	}
	return s
}
