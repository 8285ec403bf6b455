package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestSQLiteFilesArePrivate: a new SQLite database, its WAL and its shared-
// memory file are readable by their owner only, whatever the umask.
func TestSQLiteFilesArePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payd.db")
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
}

func TestSQLitePath(t *testing.T) {
	cases := map[string]string{
		"sqlite:payd.db":                 "payd.db",
		"sqlite:///var/lib/payd.db?x=1":  "/var/lib/payd.db",
		"data/payd.db":                   "data/payd.db",
		"sqlite::memory:":                "",
		"sqlite:file:x?mode=memory":      "",
		"postgres://u@h/db":              "",
		"sqlite:file:/tmp/a.db?cache=sh": "/tmp/a.db",
	}
	for in, want := range cases {
		if got := SQLitePath(in); got != want {
			t.Errorf("SQLitePath(%q) = %q, want %q", in, got, want)
		}
	}
}
