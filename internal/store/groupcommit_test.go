package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// holdWriter starts a write transaction that stays open until release is
// called, so the writers started meanwhile queue behind it (on SQLite) or run
// alongside it (on PostgreSQL).
func holdWriter(t *testing.T, db *store.DB) (release func(), done <-chan error) {
	t.Helper()
	entered := make(chan struct{})
	gate := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- db.InTx(context.Background(), func(tx *store.Tx) error {
			close(entered)
			<-gate
			_, err := tx.Exec(context.Background(), "INSERT INTO gc_rows (who) VALUES ('leader')")
			return err
		})
	}()
	<-entered
	return func() { close(gate) }, errc
}

// waitQueued waits until n writers queue for SQLite's writer; on PostgreSQL,
// where nothing queues in payd, it gives the goroutines a moment to start.
func waitQueued(t *testing.T, db *store.DB, n int) {
	t.Helper()
	if db.Dialect() != store.SQLite {
		time.Sleep(50 * time.Millisecond)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for store.QueuedWriters(db) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d writers queued, want %d", store.QueuedWriters(db), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func gcTable(t *testing.T, db *store.DB) {
	t.Helper()
	if _, err := db.Exec(context.Background(), "CREATE TABLE gc_rows (who TEXT NOT NULL UNIQUE, seq INTEGER)"); err != nil {
		t.Fatal(err)
	}
}

func gcRows(t *testing.T, db *store.DB) map[string]bool {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT who FROM gc_rows")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	if err := store.AddIDs(rows, got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestGroupCommitFailingMemberRollsBackAlone queues writers behind an open
// transaction, some of which fail, panic or conflict: on SQLite they all
// share one commit, and only the failing ones lose their work and their
// AfterCommit hooks.
func TestGroupCommitFailingMemberRollsBackAlone(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		gcTable(t, db)
		if _, err := db.Exec(ctx, "INSERT INTO gc_rows (who) VALUES ('taken')"); err != nil {
			t.Fatal(err)
		}
		before := store.GroupCommits(db)
		release, leaderDone := holdWriter(t, db)
		boom := errors.New("boom")
		kinds := []string{"ok", "fail", "ok", "panic", "conflict", "ok", "fail", "ok"}
		var mu sync.Mutex
		hooks := map[string]bool{}
		errs := make([]error, len(kinds))
		var wg sync.WaitGroup
		for i, kind := range kinds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					if p := recover(); p != nil {
						errs[i] = fmt.Errorf("panicked: %v", p)
					}
				}()
				who := fmt.Sprintf("%s_%d", kind, i)
				errs[i] = db.InTx(ctx, func(tx *store.Tx) error {
					tx.AfterCommit(func() { mu.Lock(); hooks[who] = true; mu.Unlock() })
					name := who
					if kind == "conflict" {
						if _, err := tx.Exec(ctx, "INSERT INTO gc_rows (who) VALUES (?)", who+"_first"); err != nil {
							return err
						}
						name = "taken"
					}
					if _, err := tx.Exec(ctx, "INSERT INTO gc_rows (who) VALUES (?)", name); err != nil {
						return err
					}
					switch kind {
					case "fail":
						return boom
					case "panic":
						panic("member panics")
					}
					return nil
				})
			}()
			waitQueued(t, db, i+1)
		}
		release()
		if err := <-leaderDone; err != nil {
			t.Fatalf("leader: %v", err)
		}
		wg.Wait()
		got := gcRows(t, db)
		for i, kind := range kinds {
			who := fmt.Sprintf("%s_%d", kind, i)
			ok := kind == "ok"
			if ok != (errs[i] == nil) {
				t.Errorf("%s: err %v", who, errs[i])
			}
			if kind == "fail" && !errors.Is(errs[i], boom) {
				t.Errorf("%s: err %v, want its own error", who, errs[i])
			}
			if kind == "conflict" && !store.IsConflict(errs[i]) {
				t.Errorf("%s: err %v, want conflict", who, errs[i])
			}
			if got[who] != ok || got[who+"_first"] || hooks[who] != ok {
				t.Errorf("%s: row %v, first row %v, hook %v; want %v", who, got[who], got[who+"_first"], hooks[who], ok)
			}
		}
		if !got["leader"] {
			t.Error("the leader's row is missing")
		}
		if db.Dialect() == store.SQLite {
			if n := store.GroupCommits(db) - before; n != 1 {
				t.Errorf("%d commits for the leader and %d queued writers, want 1", n, len(kinds))
			}
		}
	})
}

// TestGroupCommitKeepsArrivalOrder checks that queued writers run in the order
// they arrived, each seeing the writes of those before it.
func TestGroupCommitKeepsArrivalOrder(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.SQLite {
			t.Skip("PostgreSQL runs writers concurrently: there is no queue to order")
		}
		ctx := context.Background()
		gcTable(t, db)
		release, leaderDone := holdWriter(t, db)
		var wg sync.WaitGroup
		for i := 0; i < 10; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.InTx(ctx, func(tx *store.Tx) error {
					_, err := tx.Exec(ctx, "INSERT INTO gc_rows (who, seq) SELECT ?, COALESCE(MAX(seq), 0) + 1 FROM gc_rows", fmt.Sprint(i))
					return err
				})
				if err != nil {
					t.Error(err)
				}
			}()
			waitQueued(t, db, i+1)
		}
		release()
		<-leaderDone
		wg.Wait()
		for i := 0; i < 10; i++ {
			var seq int
			if err := db.QueryRow(ctx, "SELECT seq FROM gc_rows WHERE who = ?", fmt.Sprint(i)).Scan(&seq); err != nil {
				t.Fatal(err)
			}
			if seq != i+1 {
				t.Errorf("writer %d ran as number %d", i, seq)
			}
		}
	})
}

// TestGroupCommitCancelledWhileQueued: a writer whose context ends while it
// waits leaves the queue without running; the others are unaffected, and a
// leader that panics hands the writer on.
func TestGroupCommitCancelledWhileQueued(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.SQLite {
			t.Skip("PostgreSQL runs writers concurrently: nothing waits in a queue")
		}
		ctx := context.Background()
		gcTable(t, db)
		entered := make(chan struct{})
		gate := make(chan struct{})
		leaderPanic := make(chan any, 1)
		go func() {
			defer func() { leaderPanic <- recover() }()
			db.InTx(ctx, func(tx *store.Tx) error {
				tx.Exec(ctx, "INSERT INTO gc_rows (who) VALUES ('leader')")
				close(entered)
				<-gate
				panic("leader panics")
			})
		}()
		<-entered
		cctx, cancel := context.WithCancel(ctx)
		ran := make(chan bool, 1)
		cancelled := make(chan error, 1)
		go func() {
			cancelled <- db.InTx(cctx, func(tx *store.Tx) error {
				ran <- true
				_, err := tx.Exec(cctx, "INSERT INTO gc_rows (who) VALUES ('cancelled')")
				return err
			})
		}()
		waitQueued(t, db, 1)
		after := make(chan error, 1)
		go func() {
			after <- db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, "INSERT INTO gc_rows (who) VALUES ('after')")
				return err
			})
		}()
		waitQueued(t, db, 2)
		cancel()
		if err := <-cancelled; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled writer: %v", err)
		}
		select {
		case <-ran:
			t.Fatal("the cancelled writer's function ran")
		default:
		}
		close(gate)
		if p := <-leaderPanic; p == nil {
			t.Fatal("the leader's panic was swallowed")
		}
		if err := <-after; err != nil {
			t.Fatalf("writer after the panic: %v", err)
		}
		got := gcRows(t, db)
		if got["leader"] || got["cancelled"] || !got["after"] {
			t.Fatalf("rows %v, want only 'after'", got)
		}
	})
}

// TestGroupCommitAloneNeedsNoCompany: a single writer commits at once, one
// commit per transaction.
func TestGroupCommitAloneNeedsNoCompany(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		gcTable(t, db)
		before := store.GroupCommits(db)
		for i := 0; i < 5; i++ {
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, "INSERT INTO gc_rows (who) VALUES (?)", fmt.Sprint(i))
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		if db.Dialect() == store.SQLite && store.GroupCommits(db)-before != 5 {
			t.Fatalf("%d commits for 5 sequential writers", store.GroupCommits(db)-before)
		}
	})
}

// TestGroupCommitLoserSeesTheWinner: a queued writer that fails because of an
// earlier member's write returns only once that write is committed, so the
// caller's next read (outside any transaction) sees what beat it, as it
// would have without grouping.
func TestGroupCommitLoserSeesTheWinner(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		gcTable(t, db)
		release, leaderDone := holdWriter(t, db)
		insert := func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO gc_rows (who) VALUES ('contested')")
			return err
		}
		// Which of the two wins is up to the engine (on PostgreSQL, whichever
		// inserts first); the loser's conflict must come only once the
		// winner's row is committed.
		type outcome struct {
			err  error
			seen bool
		}
		outcomes := make(chan outcome, 2)
		contend := func() {
			err := db.InTx(ctx, insert)
			outcomes <- outcome{err, store.IsConflict(err) && gcRows(t, db)["contested"]}
		}
		go contend()
		waitQueued(t, db, 1)
		go contend()
		waitQueued(t, db, 2)
		release()
		a, b := <-outcomes, <-outcomes
		if a.err != nil {
			a, b = b, a
		}
		if a.err != nil || !store.IsConflict(b.err) {
			t.Fatalf("outcomes %v and %v, want one nil and one conflict", a.err, b.err)
		}
		if !b.seen {
			t.Error("the loser returned before the winner's row was committed")
		}
		<-leaderDone
	})
}
