package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrBackupUnsupported is BackupTo on PostgreSQL: its backups and
// point-in-time recovery are the database's own tools (pg_basebackup,
// pgBackRest with WAL archiving), not a copy one client can take.
var ErrBackupUnsupported = errors.New("payd backup copies SQLite databases only: back PostgreSQL up with its own tools (pgBackRest or pg_basebackup with WAL archiving; see docs/operations.md)")

// BackupTo writes a consistent copy of a SQLite database to dst while others
// keep writing: SQLite's VACUUM INTO reads one snapshot (a read transaction,
// which in WAL mode never blocks the writer) and writes it as a new,
// compacted database file. The copy is made under a temporary name beside
// dst, checked (PRAGMA quick_check), synced and only then renamed to dst,
// so dst is either absent or a whole database; it is readable by its owner
// only, like the database. dst must not exist yet.
func (db *DB) BackupTo(ctx context.Context, dst string) error {
	if db.dialect != SQLite {
		return ErrBackupUnsupported
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("backup: %s already exists; payd does not overwrite a backup", dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: %w", err)
	}
	var suffix [6]byte
	rand.Read(suffix[:])
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-"+hex.EncodeToString(suffix[:]))
	// The empty file VACUUM INTO is allowed to fill is created private, so
	// the copy is never readable by others, not even for a moment.
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	f.Close()
	defer os.Remove(tmp) // gone once renamed; removes a failed copy
	// A pooled connection is a reader: the writer's connection is held
	// apart (store.Open), and no write lock is taken.
	if _, err := db.sql.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		return fmt.Errorf("backup: %w", translate(err))
	}
	if err := quickCheck(ctx, tmp); err != nil {
		return fmt.Errorf("backup: the copy failed its check: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return syncFile(filepath.Dir(dst))
}

// quickCheck opens the copy read-only and runs SQLite's quick_check on it.
func quickCheck(ctx context.Context, path string) error {
	c, err := sql.Open("payd-sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer c.Close()
	var res string
	if err := c.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&res); err != nil {
		return err
	}
	if res != "ok" {
		return errors.New(res)
	}
	return nil
}

// syncFile flushes a file or directory to stable storage.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
