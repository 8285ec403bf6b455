package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/store"
)

func init() {
	register(command{name: "backup", summary: "copy a SQLite database while payd runs", run: runBackup})
	describe("backup", usage{
		synopsis: "--to FILE [--database-url URL]",
		about: "Writes a consistent copy of a SQLite database to FILE while serve keeps running (SQLite's VACUUM INTO: one snapshot, " +
			"no writer blocked), checks it and only then gives it its name, readable by its owner only. The secrets key file " +
			"goes with it as FILE.key (when the key comes from PAYD_SECRETS_KEY, keep that value with the backup instead). " +
			"To restore, stop payd and copy FILE to the database's path and FILE.key to <database path>.key. " +
			"FILE must not exist. PostgreSQL is backed up with its own tools (pgBackRest); on it this command exits 1 saying so.",
		vars: databaseVars,
	})
}

// runBackup runs `payd backup --to FILE [--database-url URL]`.
func runBackup(ctx context.Context, e *env, args []string) error {
	fs := newFlags("backup")
	to := fs.String("to", "", "the file to write (must not exist)")
	dbURL := fs.String("database-url", "", "database URL (PAYD_DATABASE_URL)")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return badUsage(e, fs, "unexpected arguments")
	}
	if *to == "" {
		return badUsage(e, fs, "--to is required")
	}
	cfg, err := app.ConfigFromEnv(e.getenv)
	if err != nil {
		return err
	}
	if *dbURL != "" {
		cfg.DatabaseURL = *dbURL
	}
	path := store.SQLitePath(cfg.DatabaseURL)
	if path == "" {
		return store.ErrBackupUnsupported
	}
	// Opening a path where no database is would make an empty one there
	// (a mistyped URL), and its copy would pass for a backup.
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("backup: no database to copy: %w", err)
	}
	// The database is opened as it is: no migration runs, so a backup taken
	// by a newer binary is still the running release's schema.
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	if err := db.BackupTo(ctx, *to); err != nil {
		return err
	}
	key, err := copyKeyFile(cfg, *to+".key")
	if err != nil {
		return fmt.Errorf("the database was copied to %s, but its key was not: %w", *to, err)
	}
	fmt.Fprintf(e.stdout, "backup written to %s in %s\n", *to, time.Since(start).Round(time.Millisecond))
	fmt.Fprintln(e.stdout, key)
	return nil
}

// copyKeyFile copies the secrets key file the database is sealed with to dst
// (mode 0600) and says what it did; a key given in PAYD_SECRETS_KEY has no
// file, and a database never opened with a key has none to copy.
func copyKeyFile(cfg app.Config, dst string) (string, error) {
	src := cfg.SecretsKeyFile
	switch {
	case cfg.SecretsKey != "":
		return "the secrets key is PAYD_SECRETS_KEY's value: keep it with the backup", nil
	case src == "":
		src = store.SQLitePath(cfg.DatabaseURL) + ".key"
	}
	b, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) && cfg.SecretsKeyFile == "" {
		return "no secrets key file beside the database: nothing sealed needs one", nil
	}
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", err
	}
	return "secrets key copied to " + dst, f.Close()
}
