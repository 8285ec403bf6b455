package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestMigrationWaitsOutLiveLocks: during a rolling upgrade a migration meets
// the serving processes' transactions. On PostgreSQL a migration whose table
// another session holds longer than the migration's lock wait gives up that
// attempt (nothing of it stays) and is tried again, so it applies once the
// other session lets go; a migration that fails for anything else fails at
// once, unrecorded, on both engines.
func TestMigrationWaitsOutLiveLocks(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.Exec(ctx, "CREATE TABLE migrate_lock_probe (id BIGINT PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
		recorded := func(v int) bool {
			var n int
			if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM schema_migrations WHERE version = ?", v).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n == 1
		}
		bad := store.Migration{Version: 990001, Name: "990001_bad", SQL: "ALTER TABLE no_such_table ADD COLUMN x BIGINT"}
		began := time.Now()
		if err := store.ApplyMigration(ctx, db, bad); err == nil {
			t.Fatal("a migration of a missing table applied")
		}
		if d := time.Since(began); d > time.Second || recorded(bad.Version) {
			t.Fatalf("a failing migration took %v (retried?) or was recorded", d)
		}
		if db.Dialect() != store.Postgres {
			return // SQLite's migrator holds the one writer: no session can hold a table
		}
		// Another session holds the table for longer than a migration's lock
		// wait, and a reader comes after the migration. The migration's wait
		// for its exclusive lock queues the reader behind it; bounded, it
		// lets the reader through after one lock wait instead of holding it
		// until the other session ends, and the migration applies once that
		// session lets go.
		holder, err := db.SQL().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := holder.ExecContext(ctx, "LOCK TABLE migrate_lock_probe IN ACCESS SHARE MODE"); err != nil {
			t.Fatal(err)
		}
		hold := 6 * time.Second
		go func() { time.Sleep(hold); holder.Rollback() }()
		m := store.Migration{Version: 990002, Name: "990002_add_column", SQL: "ALTER TABLE migrate_lock_probe ADD COLUMN note TEXT"}
		began = time.Now()
		migrated := make(chan error, 1)
		go func() { migrated <- store.ApplyMigration(ctx, db, m) }()
		time.Sleep(300 * time.Millisecond)
		var rows int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM migrate_lock_probe").Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(began); d > hold-2*time.Second {
			t.Errorf("a reader behind the waiting migration answered after %v; the other session held the table for %v", d, hold)
		}
		if err := <-migrated; err != nil {
			t.Fatalf("migration against a held table: %v", err)
		}
		if d := time.Since(began); d < hold {
			t.Fatalf("applied after %v while the table was held for %v", d, hold)
		}
		if !recorded(m.Version) {
			t.Fatal("the migration applied but is not recorded")
		}
		if _, err := db.Exec(ctx, "INSERT INTO migrate_lock_probe (id, note) VALUES (1, 'x')"); err != nil {
			t.Fatalf("the column the migration added: %v", err)
		}
	})
}
