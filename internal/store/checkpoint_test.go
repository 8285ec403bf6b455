package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckpointerBoundsTheLog: SQLite's own checkpoints are off, so the
// write-ahead log would hold every page ever written; the checkpointer
// copies it back and has it start over while writes go on, and the copied
// data reads back whole.
func TestCheckpointerBoundsTheLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := Open(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var auto int
	if err := db.sql.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("wal_autocheckpoint = %d (%v), want 0: SQLite would checkpoint inside commits", auto, err)
	}
	if _, err := db.Exec(ctx, "CREATE TABLE blobs (n INTEGER PRIMARY KEY, b BLOB NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	// 6,000 commits of a 4 KiB row each: about 50 MB of log (a row's page
	// and the table's) if nothing were copied back. Every 500 commits the
	// writes wait for the checkpointer to run a round that began after them,
	// so that the bound below holds however slow the machine is.
	const rows, every = 6000, 500
	blob := []byte(strings.Repeat("x", 4096))
	maxLog := int64(0)
	for i := range rows {
		if err := db.InTx(ctx, func(tx *Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO blobs (n, b) VALUES (?, ?)", i, blob)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path + "-wal"); err == nil {
			maxLog = max(maxLog, fi.Size())
		}
		if i%every == every-1 {
			want := db.commits.Load()
			for deadline := time.Now().Add(time.Minute); db.ckpt.covered.Load() < want; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the checkpointer ran no round in a minute after %d commits", i+1)
				}
				db.ckpt.poke()
			}
		}
	}
	t.Logf("largest log seen: %d bytes", maxLog)
	// Between two waits: 500 commits of two pages (about 4 MB) on top of
	// SQLite's threshold of 1,000 pages that the previous round may have
	// left; without the checkpointer the log would reach about 50 MB.
	const bound = 16 << 20
	if maxLog > bound {
		t.Errorf("the log grew to %d bytes, want at most %d: it was not checkpointed and restarted", maxLog, bound)
	}
	var n int
	if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM blobs WHERE length(b) = 4096").Scan(&n); err != nil || n != rows {
		t.Fatalf("%d rows read back (%v), want %d", n, err, rows)
	}
	var check string
	if err := db.sql.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	// A round with no writes going on copies everything.
	if log := db.checkpointWAL(ctx); log < 0 {
		t.Fatal("checkpoint round failed")
	}
	var busy, log, copied int
	if err := db.sql.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied); err != nil || copied != log {
		t.Fatalf("after a quiet round: %d of %d pages copied (%v)", copied, log, err)
	}
}
