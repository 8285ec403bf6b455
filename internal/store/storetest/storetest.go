// Package storetest gives tests a fresh, migrated database on each engine:
// SQLite in a temporary file always, and PostgreSQL in a schema of its own
// when PAYD_TEST_DATABASE_URL is set. Under CI=true a missing PostgreSQL
// fails the test instead of skipping it.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/store"
)

// A test binary that opens test databases creates merchants and portal
// users by the dozen, each with an argon2id password hash: at the real cost
// hashing was most of such a suite's time. Passwords are hashed at the
// lowest cost in these binaries; the auth package's own tests check the
// real one.
func init() { auth.UseLowHashCostForTests() }

// Engine names an engine under test.
type Engine string

// The engines every store and API test runs against.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// Engines lists the engines to run.
func Engines() []Engine { return []Engine{SQLite, Postgres} }

// ForEach runs fn as a subtest per engine, each with a fresh database.
func ForEach(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	for _, e := range Engines() {
		t.Run(string(e), func(t *testing.T) {
			fn(t, Open(t, e))
		})
	}
}

// URL returns a database URL for a fresh, empty database on engine e
// (creating a PostgreSQL schema that is dropped when the test ends).
func URL(tb testing.TB, e Engine) string {
	tb.Helper()
	switch e {
	case SQLite:
		return "sqlite:" + filepath.Join(tb.TempDir(), "payd.db")
	case Postgres:
		base := postgresBase(tb)
		schema := "t_" + randomHex(8)
		admin, err := sql.Open("pgx", base)
		if err != nil {
			tb.Fatalf("open postgres: %v", err)
		}
		defer admin.Close()
		if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
			if os.Getenv("CI") != "true" {
				tb.Skipf("PostgreSQL at PAYD_TEST_DATABASE_URL unreachable (%v): tests skipped", err)
			}
			tb.Fatalf("create schema: %v", err)
		}
		tb.Cleanup(func() {
			a, err := sql.Open("pgx", base)
			if err == nil {
				a.Exec("DROP SCHEMA " + schema + " CASCADE")
				a.Close()
			}
		})
		u, err := url.Parse(base)
		if err != nil {
			tb.Fatalf("parse PAYD_TEST_DATABASE_URL: %v", err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		// A test's database is thrown away: it need not wait for each commit's
		// WAL flush (commits stay atomic and ordered; only a PostgreSQL crash
		// could lose the last few, which no test does).
		if q.Get("synchronous_commit") == "" {
			q.Set("synchronous_commit", "off")
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	tb.Fatalf("unknown engine %q", e)
	return ""
}

// Open returns a fresh, migrated database on engine e, closed when the test ends.
func Open(tb testing.TB, e Engine) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), MigratedURL(tb, e))
	if err != nil {
		tb.Fatalf("open %s: %v", e, err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		tb.Fatalf("migrate %s: %v", e, err)
	}
	return db
}

// MigratedURL returns a database URL for a fresh database on engine e that
// already holds every migration (and nothing else). It is a copy of a
// template migrated once: a SQLite file copied, or on PostgreSQL a database
// created from a template database named after the migrations' hash. A test
// that needs an empty database (to watch migrations run) uses URL.
func MigratedURL(tb testing.TB, e Engine) string {
	tb.Helper()
	switch e {
	case SQLite:
		src, err := sqliteTemplate()
		if err != nil {
			tb.Fatalf("sqlite template: %v", err)
		}
		dst := filepath.Join(tb.TempDir(), "payd.db")
		if err := copyFile(src, dst); err != nil {
			tb.Fatalf("copy sqlite template: %v", err)
		}
		return "sqlite:" + dst
	case Postgres:
		base := postgresBase(tb)
		tmpl, err := postgresTemplate(base)
		if err != nil {
			if os.Getenv("CI") != "true" {
				tb.Skipf("PostgreSQL at PAYD_TEST_DATABASE_URL unusable (%v): tests skipped", err)
			}
			tb.Fatalf("postgres template: %v", err)
		}
		name := fmt.Sprintf("payd_t_%d_%s", os.Getpid(), randomHex(6))
		admin, err := sql.Open("pgx", base)
		if err != nil {
			tb.Fatalf("open postgres: %v", err)
		}
		defer admin.Close()
		if err := createFromTemplate(admin, name, tmpl); err != nil {
			tb.Fatalf("create database from template: %v", err)
		}
		// Dropping a database takes PostgreSQL a while; the test need not
		// wait for it. A drop cut short by the process ending is finished by
		// the next test process (dropOrphans).
		tb.Cleanup(func() { go dropDatabase(base, name) })
		u, err := url.Parse(base)
		if err != nil {
			tb.Fatalf("parse PAYD_TEST_DATABASE_URL: %v", err)
		}
		u.Path = "/" + name
		q := u.Query()
		if q.Get("synchronous_commit") == "" {
			q.Set("synchronous_commit", "off")
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	tb.Fatalf("unknown engine %q", e)
	return ""
}

// postgresBase is PAYD_TEST_DATABASE_URL, or a skip (a failure under CI=true).
func postgresBase(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv("PAYD_TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal("PAYD_TEST_DATABASE_URL is not set and CI=true: the PostgreSQL run is mandatory in CI")
		}
		tb.Skip("PostgreSQL tests skipped: set PAYD_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/payd_test?sslmode=disable to run them")
	}
	return base
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Count runs a query that returns one number (a COUNT(*)) and returns it,
// failing the test, with the query, if it cannot.
func Count(tb testing.TB, db *store.DB, q string, args ...any) int {
	tb.Helper()
	var n int
	if err := db.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}

// QueryPlan returns the plan db's engine chooses for q, one line per step
// (store.Engine.ExplainPrefix), in a transaction that discourages
// sequential scans (store.Tx.PreferIndexes): on a test's few rows a planner
// may prefer a scan of the table, and what a test checks is that an index
// serves the query at all. The transaction is rolled back, so q may write.
func QueryPlan(tb testing.TB, db *store.DB, q string, args ...any) string {
	tb.Helper()
	return QueryPlanIn(tb, db, nil, q, args...)
}

// QueryPlanIn is QueryPlan in a transaction that prepare (when not nil) has
// set up first as the code under test sets up its own (for example with
// store.Tx.PreferIndexOrder).
func QueryPlanIn(tb testing.TB, db *store.DB, prepare func(context.Context, *store.Tx) error, q string, args ...any) string {
	tb.Helper()
	var plan strings.Builder
	errPlanned := errors.New("planned")
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		ctx := context.Background()
		if err := tx.PreferIndexes(ctx); err != nil {
			return err
		}
		if prepare != nil {
			if err := prepare(ctx, tx); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, tx.Engine().ExplainPrefix(false)+q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		for rows.Next() {
			vals := make([]any, len(cols))
			for i := range vals {
				vals[i] = new(any)
			}
			if err := rows.Scan(vals...); err != nil {
				return err
			}
			for _, v := range vals {
				switch s := (*v.(*any)).(type) {
				case string:
					plan.WriteString(s + "\n")
				case []byte:
					plan.WriteString(string(s) + "\n")
				}
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return errPlanned
	})
	if !errors.Is(err, errPlanned) {
		tb.Fatalf("plan of %s: %v", q, err)
	}
	return plan.String()
}
