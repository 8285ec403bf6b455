package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// openCached opens a SQLite file through the caching driver with one
// connection, so every statement below meets the same cache.
func openCached(t *testing.T) (*sql.DB, *sql.Conn) {
	t.Helper()
	db, err := sql.Open("payd-sqlite", "file:"+filepath.Join(t.TempDir(), "c.db")+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(context.Background(), "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)"); err != nil {
		t.Fatal(err)
	}
	return db, conn
}

// cached returns how many statements the connection keeps.
func cached(t *testing.T, conn *sql.Conn) (n int) {
	t.Helper()
	if err := conn.Raw(func(dc any) error {
		c := dc.(*cachingConn)
		c.mu.Lock()
		defer c.mu.Unlock()
		n = len(c.stmts)
		if c.lru.Len() != n {
			return fmt.Errorf("lru holds %d, map %d", c.lru.Len(), n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStatementCacheReusesAndStaysCorrect(t *testing.T) {
	ctx := context.Background()
	_, conn := openCached(t)
	ins := "INSERT INTO t (id, v) VALUES (?, ?)"
	for i := 1; i <= 5; i++ {
		if _, err := conn.ExecContext(ctx, ins, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	base := cached(t, conn)
	// A constraint failure leaves the kept statement usable.
	if _, err := conn.ExecContext(ctx, ins, 6, "v1"); err == nil {
		t.Fatal("duplicate v accepted")
	}
	if _, err := conn.ExecContext(ctx, ins, 6, "v6"); err != nil {
		t.Fatalf("insert after a failed run of the same statement: %v", err)
	}
	if got := cached(t, conn); got != base {
		t.Fatalf("the same insert run again grew the cache from %d to %d", base, got)
	}

	// The same query run while its own rows are open gets a statement of
	// its own; both read the right rows.
	q := "SELECT id, v FROM t WHERE id >= ? ORDER BY id"
	outer, err := conn.QueryContext(ctx, q, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for outer.Next() {
		var id int
		var v string
		if err := outer.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		seen++
		if v != fmt.Sprint("v", id) {
			t.Fatalf("outer row %d has v %q", id, v)
		}
		var innerID int
		if err := conn.QueryRowContext(ctx, q, id).Scan(&innerID, &v); err != nil || innerID != id {
			t.Fatalf("inner run for %d: id %d, %v", id, innerID, err)
		}
	}
	if err := outer.Close(); err != nil || seen != 6 {
		t.Fatalf("outer saw %d rows, close: %v", seen, err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, q, 4).Scan(&n, new(string)); err != nil || n != 4 {
		t.Fatalf("query after its busy run: %d, %v", n, err)
	}

	// A schema change under a kept statement: SQLite recompiles it.
	if _, err := conn.ExecContext(ctx, "ALTER TABLE t ADD COLUMN w INTEGER NOT NULL DEFAULT 7"); err != nil {
		t.Fatal(err)
	}
	all := "SELECT * FROM t WHERE id = ?"
	if err := conn.QueryRowContext(ctx, all, 2).Scan(new(int), new(string), &n); err != nil || n != 7 {
		t.Fatalf("select * after ALTER: w=%d, %v", n, err)
	}
}

func TestStatementCacheIsBounded(t *testing.T) {
	ctx := context.Background()
	_, conn := openCached(t)
	for i := 0; i < stmtCacheSize+50; i++ {
		var got int
		if err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT %d + ?", i), 1).Scan(&got); err != nil || got != i+1 {
			t.Fatalf("query %d: %d, %v", i, got, err)
		}
	}
	if n := cached(t, conn); n != stmtCacheSize {
		t.Fatalf("cache holds %d statements, want %d", n, stmtCacheSize)
	}
	// Open rows keep their statement out of eviction.
	rows, err := conn.QueryContext(ctx, "SELECT id FROM t")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < stmtCacheSize+10; i++ {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("SELECT %d", i+1000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatalf("rows of a statement the cache wanted to evict: %v", err)
	}
	if n := cached(t, conn); n > stmtCacheSize+1 {
		t.Fatalf("cache holds %d statements", n)
	}
}
