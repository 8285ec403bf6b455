package app_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// mainFor returns an unstarted Main on dbURL with env as its environment.
func mainFor(t *testing.T, dbURL string, env map[string]string, out io.Writer) *app.Main {
	t.Helper()
	cfg, err := app.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = "127.0.0.1:0"
	cfg.DatabaseURL = dbURL
	cfg.Workers = false
	return &app.Main{Config: cfg, Out: out, Logger: app.NewLogger(io.Discard, "error")}
}

// TestSecretsKeyFileBesideSQLite: with no key configured, a SQLite database
// gets <path>.key (0600) on first use, sealing works at once (provider
// connect), the next process reads the same key, and a process started with
// another key is refused with a message that says so.
func TestSecretsKeyFileBesideSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := storetest.URL(t, storetest.SQLite)
	m := mainFor(t, dbURL, nil, io.Discard)
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	keyPath := store.SQLitePath(dbURL) + ".key"
	fi, err := os.Stat(keyPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v %v, want mode 0600", keyPath, fi, err)
	}
	c, err := m.Merchants.Create(ctx, merchants.CreateParams{Name: "Key file"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := merchants.ProviderConfig{BaseURL: "https://provider.example", APIKey: "api-key-value", CallbackSecret: "callback-secret"}
	if err := m.Merchants.ConnectProvider(ctx, c.MerchantID, "bank_a", cfg); err != nil {
		t.Fatalf("provider connect with the key file: %v", err)
	}
	m.Close()

	again := mainFor(t, dbURL, nil, io.Discard)
	if err := again.Open(ctx); err != nil {
		t.Fatalf("second process: %v", err)
	}
	if got, err := again.Merchants.ProviderConnection(ctx, again.DB, c.MerchantID, "bank_a"); err != nil || got.APIKey != "api-key-value" {
		t.Fatalf("second process cannot open the sealed credentials: %+v %v", got, err)
	}
	again.Close()

	other := mainFor(t, dbURL, map[string]string{"PAYD_SECRETS_KEY": strings.Repeat("7c", 32)}, io.Discard)
	err = other.Open(ctx)
	other.Close()
	if err == nil || !strings.Contains(err.Error(), "PAYD_SECRETS_KEY") || !strings.Contains(err.Error(), "not the key this database") {
		t.Fatalf("a process with another key started: %v", err)
	}
}

// TestSecretsKeyMustMatch: on both engines the first key used is recorded by
// its check value; another key (from the variable or a file) is refused, and
// on PostgreSQL a process with no key at all is refused too.
func TestSecretsKeyMustMatch(t *testing.T) {
	t.Parallel()
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			ctx := context.Background()
			dbURL := storetest.MigratedURL(t, engine)
			key := strings.Repeat("3e", 32)
			first := mainFor(t, dbURL, map[string]string{"PAYD_SECRETS_KEY": key}, io.Discard)
			if err := first.Open(ctx); err != nil {
				t.Fatal(err)
			}
			defer first.Close()

			file := t.TempDir() + "/payd.key"
			os.WriteFile(file, []byte(key+"\n"), 0o600)
			same := mainFor(t, dbURL, map[string]string{"PAYD_SECRETS_KEY_FILE": file}, io.Discard)
			if err := same.Open(ctx); err != nil {
				t.Fatalf("the same key from a file was refused: %v", err)
			}
			same.Close()

			os.WriteFile(file, []byte(strings.Repeat("4f", 32)), 0o600)
			wrong := mainFor(t, dbURL, map[string]string{"PAYD_SECRETS_KEY_FILE": file}, io.Discard)
			err := wrong.Open(ctx)
			wrong.Close()
			if err == nil || !strings.Contains(err.Error(), "PAYD_SECRETS_KEY_FILE") {
				t.Fatalf("another key from a file: %v", err)
			}
			if engine == storetest.Postgres {
				none := mainFor(t, dbURL, nil, io.Discard)
				err := none.Open(ctx)
				none.Close()
				if err == nil || !strings.Contains(err.Error(), "none is configured") {
					t.Fatalf("a PostgreSQL process without the key: %v", err)
				}
			}
		})
	}
}

// TestDemoMerchant: the demo merchant is made once per database, by a
// running server only, never where a merchant exists, never with
// PAYD_DEMO=false, and exactly once when several servers start at once.
func TestDemoMerchant(t *testing.T) {
	t.Parallel()
	key := map[string]string{"PAYD_SECRETS_KEY": strings.Repeat("5a", 32)}
	count := func(t *testing.T, m *app.Main) int {
		n, err := m.Merchants.Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			ctx := context.Background()

			t.Run("CLI commands never make it", func(t *testing.T) {
				m := mainFor(t, storetest.MigratedURL(t, engine), key, io.Discard)
				if err := m.Open(ctx); err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				if n := count(t, m); n != 0 {
					t.Fatalf("Open made %d merchants", n)
				}
			})

			t.Run("PAYD_DEMO=false", func(t *testing.T) {
				m := mainFor(t, storetest.MigratedURL(t, engine), map[string]string{"PAYD_DEMO": "false", "PAYD_SECRETS_KEY": key["PAYD_SECRETS_KEY"]}, io.Discard)
				if err := m.Run(ctx); err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				if n := count(t, m); n != 0 {
					t.Fatalf("PAYD_DEMO=false made %d merchants", n)
				}
			})

			t.Run("not where merchants exist, then never", func(t *testing.T) {
				dbURL := storetest.MigratedURL(t, engine)
				cli := mainFor(t, dbURL, key, io.Discard)
				if err := cli.Open(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := cli.Merchants.Create(ctx, merchants.CreateParams{Name: "Existing"}); err != nil {
					t.Fatal(err)
				}
				cli.Close()
				var out bytes.Buffer
				m := mainFor(t, dbURL, key, &out)
				if err := m.Run(ctx); err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				if n := count(t, m); n != 1 || strings.Contains(out.String(), "demo merchant") {
					t.Fatalf("%d merchants, banner %q", n, out.String())
				}
			})

			t.Run("concurrent servers make one", func(t *testing.T) {
				dbURL := storetest.MigratedURL(t, engine)
				const servers = 4
				outs := make([]bytes.Buffer, servers)
				mains := make([]*app.Main, servers)
				var wg sync.WaitGroup
				for i := range mains {
					mains[i] = mainFor(t, dbURL, key, &outs[i])
					wg.Add(1)
					go func(m *app.Main) {
						defer wg.Done()
						if err := m.Run(ctx); err != nil {
							t.Error(err)
						}
					}(mains[i])
				}
				wg.Wait()
				defer func() {
					for _, m := range mains {
						m.Close()
					}
				}()
				banners := 0
				for i := range outs {
					if strings.Contains(outs[i].String(), "a demo merchant was created") {
						banners++
					}
				}
				if n := count(t, mains[0]); n != 1 || banners != 1 {
					t.Fatalf("%d merchants and %d banners after %d concurrent starts, want 1 and 1", n, banners, servers)
				}
				restarted := mainFor(t, dbURL, key, io.Discard)
				if err := restarted.Run(ctx); err != nil {
					t.Fatal(err)
				}
				defer restarted.Close()
				if n := count(t, restarted); n != 1 {
					t.Fatalf("a restart made another demo merchant: %d", n)
				}
			})
		})
	}
}

// TestServeNeedsSecretsKeyOnPostgres: payd serve on PostgreSQL with neither
// PAYD_SECRETS_KEY nor PAYD_SECRETS_KEY_FILE does not start (hosted invoice
// links would otherwise be HMACs under an empty key), saying what to set;
// with a key it starts. (Before, it started.)
func TestServeNeedsSecretsKeyOnPostgres(t *testing.T) {
	t.Parallel()
	for _, engine := range storetest.Engines() {
		if engine != storetest.Postgres {
			continue
		}
		ctx := context.Background()
		dbURL := storetest.MigratedURL(t, engine)
		none := mainFor(t, dbURL, nil, io.Discard)
		err := none.Run(ctx)
		none.Close()
		if err == nil || !strings.Contains(err.Error(), "PAYD_SECRETS_KEY") {
			t.Fatalf("serve on PostgreSQL without a secrets key: %v", err)
		}
		with := mainFor(t, dbURL, map[string]string{"PAYD_SECRETS_KEY": strings.Repeat("5a", 32)}, io.Discard)
		if err := with.Run(ctx); err != nil {
			t.Fatalf("serve with a key: %v", err)
		}
		with.Close()
	}
}

// TestSecretsKeyFileOpenToOthers: a PAYD_SECRETS_KEY_FILE readable by the
// group or others stops the start, naming the file, on both engines.
func TestSecretsKeyFileOpenToOthers(t *testing.T) {
	t.Parallel()
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			file := t.TempDir() + "/payd.key"
			os.WriteFile(file, []byte(strings.Repeat("3e", 32)+"\n"), 0o600)
			os.Chmod(file, 0o644)
			m := mainFor(t, storetest.MigratedURL(t, engine), map[string]string{"PAYD_SECRETS_KEY_FILE": file}, io.Discard)
			err := m.Open(context.Background())
			m.Close()
			if err == nil || !strings.Contains(err.Error(), file) {
				t.Fatalf("a key file of mode 0644: %v", err)
			}
		})
	}
}
