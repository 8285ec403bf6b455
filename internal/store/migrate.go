package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

//go:embed migrations
var migrationFS embed.FS

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the engine's migrations in version order. Each is
// written once, as migrations/NNNN_name.sql; where an engine needs other
// SQL, migrations/<engine>/NNNN_name.sql (postgres or sqlite) overrides the
// shared file for that engine, under the same name (TestMigrationOverrides
// keeps an override within the engine-specific types and marked lines).
// Each capability owns a range of numbers (see docs/architecture.md), so
// changes to one capability touch only its files.
func (d Dialect) Migrations() ([]Migration, error) {
	shared, err := readMigrations("migrations")
	if err != nil {
		return nil, err
	}
	overrides, err := readMigrations("migrations/" + d.String())
	if err != nil {
		return nil, err
	}
	byName := map[string]int{}
	for i, m := range shared {
		byName[m.Name] = i
	}
	for _, o := range overrides {
		i, ok := byName[o.Name]
		if !ok {
			return nil, fmt.Errorf("migration override %s/%s.sql has no shared migrations/%s.sql", d, o.Name, o.Name)
		}
		shared[i].SQL = o.SQL
	}
	return shared, nil
}

// readMigrations reads the NNNN_name.sql files of one folder (none when the
// folder does not exist) in version order.
func readMigrations(dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFS, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number and _", name)
		}
		body, err := fs.ReadFile(migrationFS, dir+"/"+name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(name, ".sql"), SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("two migrations numbered %d", out[i].Version)
		}
	}
	return out, nil
}

// migrationLockID is the PostgreSQL advisory lock that keeps several payd
// processes starting at once from migrating concurrently. The lock's second
// key is the hash of the schema being migrated, so databases in different
// schemas of one cluster (several environments, or parallel tests) migrate
// without waiting for each other.
const migrationLockID = 7261736 // "payd"

// Migrate applies every migration not yet recorded, each in its own
// transaction. It is safe to call from several processes at once.
func (db *DB) Migrate(ctx context.Context) error {
	migs, err := db.dialect.Migrations()
	if err != nil {
		return err
	}
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if db.dialect == Postgres {
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1, hashtext(coalesce(current_schema(), '')))", migrationLockID); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1, hashtext(coalesce(current_schema(), '')))", migrationLockID)
	} else {
		if err := db.lockWriteClean(ctx); err != nil {
			return err
		}
		defer db.unlockWrite()
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := conn.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return err
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		applied[v] = true
	}
	rows.Close()
	for _, m := range migs {
		if applied[m.Version] {
			continue
		}
		if err := db.applyRetrying(ctx, conn, m); err != nil {
			return err
		}
	}
	return nil
}

// Migration lock waits. On PostgreSQL a migration that alters a table needs
// that table's exclusive lock while the previous release's processes serve
// (a rolling upgrade): waiting for it queues every later statement on the
// table behind the migration, and a migration that locks two tables the
// serving processes also touch can deadlock with one of their transactions,
// which PostgreSQL resolves by aborting one side. So each migration's lock
// waits are bounded by migrationLockTimeout, and a migration that loses a
// deadlock or runs out of lock wait is rolled back whole (nothing of it
// stays) and tried again, up to migrationTries times with a growing pause.
const (
	migrationLockTimeout = "2s"
	migrationTries       = 10
)

// applyRetrying applies m, trying again while it fails only for lock
// contention with other sessions (lockContention).
func (db *DB) applyRetrying(ctx context.Context, conn *sql.Conn, m Migration) error {
	for attempt := 1; ; attempt++ {
		err := db.apply(ctx, conn, m)
		if err == nil || attempt == migrationTries || !lockContention(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
		}
	}
}

// lockContention reports whether err is PostgreSQL giving up a lock: a
// deadlock it broke (40P01) or a lock wait past lock_timeout (55P03).
func lockContention(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40P01" || pg.Code == "55P03")
}

// apply runs one migration in its own transaction, unless another migrator
// recorded it first.
func (db *DB) apply(ctx context.Context, conn *sql.Conn, m Migration) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if db.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '"+migrationLockTimeout+"'"); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	// Look again inside the migration's own transaction: on SQLite the
	// in-process write lock does not exclude another process (or another
	// handle) on the same file, but BEGIN IMMEDIATE does, so a version
	// another migrator applied since the read above is seen here.
	var done int
	if err := tx.QueryRowContext(ctx, db.dialect.Rebind("SELECT COUNT(*) FROM schema_migrations WHERE version = ?"), m.Version).Scan(&done); err != nil {
		tx.Rollback()
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if done > 0 {
		tx.Rollback()
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		tx.Rollback()
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if _, err := tx.ExecContext(ctx, db.dialect.Rebind("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"),
		m.Version, m.Name, Micros(db.Now())); err != nil {
		tx.Rollback()
		return fmt.Errorf("record migration %s: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migration %s: %w", m.Name, err)
	}
	return nil
}

// Pending returns how many migrations are not yet applied (for /readyz).
func (db *DB) Pending(ctx context.Context) (int, error) {
	migs, err := db.dialect.Migrations()
	if err != nil {
		return 0, err
	}
	var n int
	if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM schema_migrations").Scan(&n); err != nil {
		return len(migs), err
	}
	return len(migs) - n, nil
}
