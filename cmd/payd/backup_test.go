package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestBackupRestoreDrill: `payd backup` copies a SQLite database while payd
// keeps creating payments; the copy holds every payment answered before the
// backup began, its ledger verifies, and restoring it (the copy and its key
// file put back in place) gives a database `payd ledger verify` opens with
// that key and passes. A second backup to the same file is refused.
func TestBackupRestoreDrill(t *testing.T) {
	e := apptest.Start(t, storetest.SQLite)
	ctx := context.Background()
	dir := t.TempDir()
	// The running payd's key, as a key file: the backup copies it beside the copy.
	keyFile := filepath.Join(dir, "payd.key")
	if err := os.WriteFile(keyFile, []byte(e.Main.Config.SecretsKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(vars map[string]string, args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(ctx, &env{stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }}, args)
		return code, out.String() + errOut.String()
	}
	create := func() string {
		r := e.Post("/v1/payment_intents", map[string]any{"amount_minor": 1000, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"})
		if r.Status != 201 {
			t.Errorf("create: %d %s", r.Status, r.Body)
			return ""
		}
		var pi struct{ ID string }
		r.JSON(t, &pi)
		return pi.ID
	}
	var before []string
	for range 20 {
		before = append(before, create())
	}
	// Writers keep going through the backup.
	var stop atomic.Bool
	var during atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if create() != "" {
					during.Add(1)
				}
			}
		}()
	}
	backup := filepath.Join(dir, "backup.db")
	env := map[string]string{"PAYD_DATABASE_URL": e.Main.Config.DatabaseURL, "PAYD_SECRETS_KEY_FILE": keyFile}
	code, out := cli(env, "backup", "--to", backup)
	stop.Store(true)
	wg.Wait()
	if code != 0 || !strings.Contains(out, "backup written to") || !strings.Contains(out, "secrets key copied") {
		t.Fatalf("backup: exit %d\n%s", code, out)
	}
	t.Logf("%s(%d payments created meanwhile)", out, during.Load())
	if during.Load() == 0 {
		t.Fatal("no payment was created while the backup ran: the drill proves nothing about an online copy")
	}
	for _, p := range []string{backup, backup + ".key"} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, mode %v (want 0600)", p, err, fi.Mode().Perm())
		}
	}
	if code, out := cli(env, "backup", "--to", backup); code != 1 || !strings.Contains(out, "already exists") {
		t.Fatalf("a second backup over the first: exit %d\n%s", code, out)
	}

	// Restore: the copy and its key file put in place of a database.
	restored := filepath.Join(dir, "restored.db")
	for from, to := range map[string]string{backup: restored, backup + ".key": restored + ".key"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db, err := store.Open(ctx, "sqlite:"+restored)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range before {
		var n int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM payment_intents WHERE id = ?", id).Scan(&n); err != nil || n != 1 {
			t.Fatalf("payment %s answered before the backup is not in it (%d, %v)", id, n, err)
		}
	}
	if err := ledger.Verify(ctx, db); err != nil {
		t.Fatalf("the restored ledger: %v", err)
	}
	db.Close()
	// No PAYD_SECRETS_KEY: the restored key file beside the database must be the right key.
	if code, out := cli(map[string]string{}, "ledger", "verify", "--database-url", "sqlite:"+restored); code != 0 || !strings.Contains(out, "ledger balances") {
		t.Fatalf("ledger verify on the restored copy: exit %d\n%s", code, out)
	}
}

// TestBackupRefusesPostgreSQL: PostgreSQL is backed up with its own tools;
// the command says so and exits 1.
func TestBackupRefusesPostgreSQL(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), &env{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }},
		[]string{"backup", "--to", filepath.Join(t.TempDir(), "x"), "--database-url", "postgres://nobody@127.0.0.1:1/none"})
	if code != 1 || !strings.Contains(errOut.String(), "pgBackRest") {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if code := run(context.Background(), &env{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}, []string{"backup"}); code != 2 {
		t.Fatalf("backup without --to: exit %d", code)
	}
}

// TestBackupOfNoDatabase: `payd backup` of a SQLite path where no database
// is (a mistyped PAYD_DATABASE_URL) fails, naming the path, and neither
// creates an empty database there nor writes a copy of one.
func TestBackupOfNoDatabase(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo.db")
	to := filepath.Join(dir, "copy.db")
	var out, errOut bytes.Buffer
	vars := map[string]string{"PAYD_DATABASE_URL": "sqlite:" + missing}
	code := run(context.Background(), &env{stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }},
		[]string{"backup", "--to", to})
	if code == 0 || !strings.Contains(errOut.String(), missing) {
		t.Errorf("exit %d, %s%s; want a failure naming %s", code, out.String(), errOut.String(), missing)
	}
	for _, p := range []string{missing, to} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}
