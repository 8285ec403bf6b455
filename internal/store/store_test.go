package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

func TestMigrateIsIdempotent(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("second migrate: %v", err)
		}
		n, err := db.Pending(ctx)
		if err != nil || n != 0 {
			t.Fatalf("pending = %d, %v", n, err)
		}
	})
}

func TestErrorsAreTranslated(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ins := "INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)"
		if _, err := db.Exec(ctx, ins, "mer_1", "A", 1); err != nil {
			t.Fatal(err)
		}
		_, err := db.Exec(ctx, ins, "mer_1", "B", 2)
		if !store.IsConflict(err) {
			t.Fatalf("duplicate id: got %v, want conflict", err)
		}
		var name string
		err = db.QueryRow(ctx, "SELECT name FROM merchants WHERE id = ?", "nope").Scan(&name)
		if !store.IsNotFound(err) {
			t.Fatalf("missing row: got %v", err)
		}
	})
}

func TestTxRollsBackOnError(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		boom := errors.New("boom")
		committed := false
		err := db.InTx(ctx, func(tx *store.Tx) error {
			tx.AfterCommit(func() { committed = true })
			if _, err := tx.Exec(ctx, "INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)", "mer_x", "X", 1); err != nil {
				return err
			}
			return boom
		})
		if err != boom || committed {
			t.Fatalf("err=%v committed=%v", err, committed)
		}
		var n int
		db.QueryRow(ctx, "SELECT COUNT(*) FROM merchants").Scan(&n)
		if n != 0 {
			t.Fatalf("rolled back insert left %d rows", n)
		}
	})
}

// TestCompareAndSetUnderRace checks the pattern every state machine uses: an
// UPDATE guarded by the current status lets exactly one of many racing
// writers win, on both engines.
func TestCompareAndSetUnderRace(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.Exec(ctx, "INSERT INTO merchants (id, name, kyc_status, created_at) VALUES ('mer_r', 'R', 'pending', 1)"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.InTx(ctx, func(tx *store.Tx) error {
					res, err := tx.Exec(ctx, "UPDATE merchants SET kyc_status = 'approved' WHERE id = ? AND kyc_status = 'pending'", "mer_r")
					if err != nil {
						return err
					}
					if n, _ := res.RowsAffected(); n == 1 {
						mu.Lock()
						wins++
						mu.Unlock()
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d writers won, want exactly 1", wins)
		}
	})
}

// TestAdvisoryLockHeldUntilTxEnds checks that on PostgreSQL a transaction
// holding a key keeps every other transaction from taking that key (and only
// that key) until it ends; on SQLite, taking a key is allowed and does nothing.
func TestAdvisoryLockHeldUntilTxEnds(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		take := func(ctx context.Context, key string) error {
			return db.InTx(ctx, func(tx *store.Tx) error { return tx.AdvisoryLock(ctx, key) })
		}
		if err := take(ctx, "test:a"); err != nil {
			t.Fatal(err)
		}
		if db.Dialect() != store.Postgres {
			return
		}
		held, release, done := make(chan struct{}, 1), make(chan struct{}), make(chan error, 1)
		go func() {
			done <- db.InTx(ctx, func(tx *store.Tx) error {
				if err := tx.AdvisoryLock(ctx, "test:a"); err != nil {
					return err
				}
				select {
				case held <- struct{}{}:
				default:
				}
				<-release
				return nil
			})
		}()
		<-held
		if err := take(ctx, "test:b"); err != nil {
			t.Fatalf("another key while test:a is held: %v", err)
		}
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if err := take(short, "test:a"); err == nil {
			t.Fatal("test:a taken while another transaction holds it")
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := take(ctx, "test:a"); err != nil {
			t.Fatalf("test:a after the holder committed: %v", err)
		}
	})
}

func TestRebind(t *testing.T) {
	got := store.Postgres.Rebind("SELECT * FROM t WHERE a = ? AND b = '?' AND c IN (?, ?)")
	want := "SELECT * FROM t WHERE a = $1 AND b = '?' AND c IN ($2, $3)"
	if got != want {
		t.Fatalf("got %q", got)
	}
	if store.SQLite.Rebind("a = ?") != "a = ?" {
		t.Fatal("sqlite must not rebind")
	}
}

// TestPaddedInEmptyMatchesNothing: an empty padded IN list is valid SQL on
// both engines and matches no row.
func TestPaddedInEmptyMatchesNothing(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return insertMerchant(ctx, tx, "mer_in1") }); err != nil {
			t.Fatal(err)
		}
		ph, args := store.PaddedIn([]string{})
		var n int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM merchants WHERE id IN ("+ph+")", args...).Scan(&n); err != nil || n != 0 {
			t.Fatalf("empty IN list: %d rows, %v", n, err)
		}
		ph, args = store.PaddedIn([]string{"mer_in1"})
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM merchants WHERE id IN ("+ph+")", args...).Scan(&n); err != nil || n != 1 {
			t.Fatalf("one-value IN list: %d rows, %v", n, err)
		}
	})
}

// TestAddIDs: ids read in chunks make one set; a row that does not scan as
// an id is an error.
func TestAddIDs(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.Exec(ctx, "CREATE TABLE add_ids (id TEXT PRIMARY KEY, n INTEGER)"); err != nil {
			t.Fatal(err)
		}
		for i, id := range []string{"a", "b", "c", "d"} {
			if _, err := db.Exec(ctx, "INSERT INTO add_ids (id, n) VALUES (?, ?)", id, i); err != nil {
				t.Fatal(err)
			}
		}
		set := map[string]bool{}
		for _, chunk := range [][]string{{"a", "x"}, {"c", "d"}} {
			ph, in := store.PaddedIn(chunk)
			rows, err := db.Query(ctx, "SELECT id FROM add_ids WHERE id IN ("+ph+")", in...)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.AddIDs(rows, set); err != nil {
				t.Fatal(err)
			}
		}
		if len(set) != 3 || !set["a"] || !set["c"] || !set["d"] {
			t.Fatalf("set %v, want a, c and d", set)
		}
		rows, err := db.Query(ctx, "SELECT NULL FROM add_ids")
		if err != nil {
			t.Fatal(err)
		}
		if err := store.AddIDs(rows, set); err == nil {
			t.Fatal("a NULL scanned as an id")
		}
	})
}

// TestWriterConnReplaced: on SQLite write transactions run on one connection
// kept for the writer; when the driver has given that connection up, the
// next write takes another one instead of failing from then on.
func TestWriterConnReplaced(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		store.DropWriterConn(db)
		for i, id := range []string{"mer_w1", "mer_w2"} {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, "INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)", id, "W", i)
				return err
			})
			if err != nil {
				t.Fatalf("write %d after the writer's connection was dropped: %v", i+1, err)
			}
		}
		var n int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM merchants WHERE id IN ('mer_w1', 'mer_w2')").Scan(&n); err != nil || n != 2 {
			t.Fatalf("merchants written = %d, %v; want 2", n, err)
		}
		if k := db.ConnsInUse(); k != 0 {
			t.Fatalf("%d connections held after the writes; want none", k)
		}
	})
}

func TestStrings(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for i, id := range []string{"mer_s2", "mer_s1", "mer_s3"} {
			if _, err := db.Exec(ctx, "INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)", id, "S", i); err != nil {
				t.Fatal(err)
			}
		}
		got, err := store.Strings(ctx, db, "SELECT id FROM merchants WHERE name = ? ORDER BY id", "S")
		if err != nil || strings.Join(got, ",") != "mer_s1,mer_s2,mer_s3" {
			t.Fatalf("Strings = %v, %v", got, err)
		}
		if got, err := store.Strings(ctx, db, "SELECT id FROM merchants WHERE name = ?", "none"); err != nil || len(got) != 0 {
			t.Fatalf("no rows: %v, %v", got, err)
		}
		if _, err := store.Strings(ctx, db, "SELECT id FROM no_such_table"); err == nil {
			t.Fatal("a failing query answered no error")
		}
	})
}

// TestWritesRunOnTheWritersConnection: on SQLite every write transaction
// runs on the writer's own connection, not on one of the pool's readers:
// with all eight readers held by others, writes still go through, and the
// writer's connection has made every change (SQLite's total_changes() counts
// the rows one connection changed).
func TestWritesRunOnTheWritersConnection(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.SQLite {
			return
		}
		ctx := context.Background()
		var base int64
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.QueryRow(ctx, "SELECT total_changes()").Scan(&base)
		}); err != nil {
			t.Fatal(err)
		}
		const writes = 6
		for i := range writes {
			var held []*sql.Conn
			for range 8 {
				c, err := db.SQL().Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, c)
			}
			done := make(chan error, 1)
			go func() {
				done <- db.InTx(ctx, func(tx *store.Tx) error {
					_, err := tx.Exec(ctx, "INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)", fmt.Sprintf("mer_wc%d", i), "W", i)
					return err
				})
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				err = errors.New("it waited 5 s for a connection")
			}
			for _, c := range held {
				c.Close()
			}
			if err != nil {
				t.Fatalf("write %d with the pool's readers all held: %v", i+1, err)
			}
		}
		var total int64
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.QueryRow(ctx, "SELECT total_changes()").Scan(&total)
		}); err != nil {
			t.Fatal(err)
		}
		if total-base != writes {
			t.Fatalf("the writer's connection made %d of the %d writes", total-base, writes)
		}
	})
}
