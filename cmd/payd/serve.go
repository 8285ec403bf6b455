package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/payd/payd/internal/app"
)

func init() {
	describe("serve", usage{
		synopsis: "[--addr HOST:PORT] [--database-url URL]",
		about: "Runs the HTTP API, the sandbox hosted pages, the merchant portal and the background workers in one\n" +
			"process, applying migrations first. A database that never had a merchant gets a demo merchant once\n" +
			"the listener is up, its keys printed once (PAYD_DEMO=false turns that off). SIGHUP reloads the\n" +
			"sanctions list. While no host of the database URL accepts writes (only standbys, or down) it waits for\n" +
			"one, answering 503 database_unavailable meanwhile, instead of exiting.",
		vars: []string{"PAYD_ADDR", "PAYD_DATABASE_URL", "PAYD_PUBLIC_URL", "PAYD_SECRETS_KEY", "PAYD_SECRETS_KEY_FILE",
			"PAYD_DEMO", "PAYD_WORKERS", "PAYD_REQUEST_LOG", "PAYD_LOG_LEVEL", "PAYD_LOG_FORMAT", "PAYD_SANDBOX_TIMEOUT_DELAY", "PAYD_SANDBOX_PUSH_DELAY",
			"PAYD_WEBHOOK_RETRY_SCHEDULE", "PAYD_WEBHOOK_BREAKER_FAILURES", "PAYD_WEBHOOK_BREAKER_PERIOD",
			"PAYD_SANCTIONS_LIST", "PAYD_P2PE_KEYS", "PAYD_RATE_LIMIT", "PAYD_RATE_BURST",
			"PAYD_RECONCILE_INTERVAL", "PAYD_BREAKER_OPEN", "PAYD_IDEMPOTENCY_LEASE", "PAYD_DB_MAX_CONNS",
			"PAYD_INTENT_EXPIRY", "PAYD_CAPTURE_WINDOW", "PAYD_RETENTION_EVENTS", "PAYD_RETENTION_DELIVERIES",
			"PAYD_RETENTION_REQUEST_LOGS", "PAYD_RETENTION_IDEMPOTENCY_KEYS", "GOMEMLIMIT", "OTEL_EXPORTER_OTLP_ENDPOINT"},
	})
	describe("migrate", usage{
		synopsis: "[--database-url URL]",
		about:    "Applies the schema migrations embedded in the binary and exits (serve also applies them at start).",
		vars:     databaseVars,
	})
}

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags("serve")
	addr := fs.String("addr", "", "listen address (PAYD_ADDR)")
	db := fs.String("database-url", "", "database URL (PAYD_DATABASE_URL)")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	cfg, err := app.ConfigFromEnv(e.getenv)
	if err != nil {
		return err
	}
	if *addr != "" {
		cfg.Addr = *addr
		if e.getenv("PAYD_PUBLIC_URL") == "" {
			cfg.PublicURL = "http://" + *addr
		}
	}
	if *db != "" {
		cfg.DatabaseURL = *db
	}
	if e.getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	m := &app.Main{Config: cfg, Out: e.stdout, Logger: cfg.Logger(e.stderr)}
	if err := m.Run(ctx); err != nil {
		m.Close()
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			// Stopped while waiting for a database that accepts writes.
			return nil
		}
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			m.Logger.Info("shutting down")
			return m.Close()
		case <-hup:
			m.Reload(ctx)
		}
	}
}

// defaultMemoryLimit is the Go runtime's soft memory limit for serve when
// GOMEMLIMIT is not set. Without it the collector lets the heap grow to
// twice the live heap, which with the full sanctions index loaded (about 27
// MB of live heap) came to 94 MB resident under 16 clients on PostgreSQL;
// with it the collector runs more often as the heap nears 64 MiB and the
// process stayed at 77 MB (88 MB on SQLite, whose page caches live outside
// the Go heap; docs/performance.md, "Memory and crashes"). The limit is soft:
// it never fails an allocation, and payd's live heap stays well below it.
const defaultMemoryLimit = 64 << 20

func runMigrate(ctx context.Context, e *env, args []string) error {
	fs := newFlags("migrate")
	db := fs.String("database-url", "", "database URL (PAYD_DATABASE_URL)")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	m, err := open(ctx, e, *db)
	if err != nil {
		return err
	}
	defer m.Close()
	e.stdout.Write([]byte("migrations applied (" + m.DB.Dialect().String() + ")\n"))
	return nil
}
