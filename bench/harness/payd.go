package harness

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the schema's creation and drop

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/merchants"
)

// Database says where a started payd keeps its data; DatabaseFlags sets it.
type Database struct {
	Engine string // sqlite or postgres
	URL    string // postgres: the database a fresh schema is made in; sqlite: used only if it is a sqlite: URL
}

// DatabaseFlags registers -engine, -database-url and the shorthand -db on
// fs and returns what they set.
func DatabaseFlags(fs *flag.FlagSet) *Database {
	d := &Database{}
	fs.StringVar(&d.Engine, "engine", "sqlite", "sqlite or postgres (when payd is started here)")
	fs.StringVar(&d.URL, "database-url", os.Getenv("PAYD_TEST_DATABASE_URL"),
		"PostgreSQL URL; a fresh schema is made in it and dropped after (default $PAYD_TEST_DATABASE_URL)")
	fs.Func("db", "shorthand: a postgres:// URL means -engine postgres -database-url URL, a sqlite: URL -engine sqlite on that file", func(v string) error {
		d.URL, d.Engine = v, "sqlite"
		if strings.HasPrefix(v, "postgres") {
			d.Engine = "postgres"
		}
		return nil
	})
	return d
}

// Start is StartPayd over d.
func (d *Database) Start(ctx context.Context, opts ...Option) (*app.Main, func(), error) {
	return StartPayd(ctx, d.Engine, d.URL, opts...)
}

// Option adjusts the payd StartPayd starts.
type Option func(*startConfig)

type startConfig struct {
	logs      io.Writer
	logLevel  string
	configure []func(*app.Config)
}

// Logs sends payd's logs at level (debug, info, warn, error) to w; they are
// discarded otherwise.
func Logs(w io.Writer, level string) Option {
	return func(s *startConfig) { s.logs, s.logLevel = w, level }
}

// Configure changes payd's configuration before it starts (the defaults
// are payd's own, with the rate limit off and a random secrets key).
func Configure(f func(*app.Config)) Option {
	return func(s *startConfig) { s.configure = append(s.configure, f) }
}

// StartPayd runs payd in this process on 127.0.0.1:0 over a fresh database:
// SQLite in a temporary directory (or the file of a sqlite: dbURL), or a new
// schema of the PostgreSQL database at dbURL. cleanup closes payd and
// removes the directory or drops the schema.
func StartPayd(ctx context.Context, engine, dbURL string, opts ...Option) (m *app.Main, cleanup func(), err error) {
	s := startConfig{logs: io.Discard, logLevel: "error"}
	for _, o := range opts {
		o(&s)
	}
	cfg, err := app.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		return nil, nil, err
	}
	cfg.Addr, cfg.PublicURL, cfg.RateLimit, cfg.LogLevel = "127.0.0.1:0", "http://127.0.0.1:0", 0, s.logLevel
	cfg.SecretsKey = RandomHex(32)
	var drop func()
	switch engine {
	case "sqlite":
		if strings.HasPrefix(dbURL, "sqlite:") {
			cfg.DatabaseURL, drop = dbURL, func() {}
			break
		}
		dir, err := os.MkdirTemp("", "payd-bench-")
		if err != nil {
			return nil, nil, err
		}
		cfg.DatabaseURL, drop = "sqlite:"+filepath.Join(dir, "payd.db"), func() { os.RemoveAll(dir) }
	case "postgres":
		if dbURL == "" {
			return nil, nil, fmt.Errorf("-engine postgres needs -database-url (or PAYD_TEST_DATABASE_URL)")
		}
		if cfg.DatabaseURL, drop, err = freshSchema(ctx, dbURL); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, fmt.Errorf("-engine: unknown engine %q (sqlite or postgres)", engine)
	}
	for _, f := range s.configure {
		f(&cfg)
	}
	m = &app.Main{Config: cfg, Out: io.Discard, Logger: app.NewLogger(s.logs, s.logLevel)}
	if err := m.Run(ctx); err != nil {
		m.Close()
		drop()
		return nil, nil, err
	}
	return m, func() { m.Close(); drop() }, nil
}

// freshSchema creates a schema of its own in the PostgreSQL database at
// base, so a run never touches the database's other data, and returns the
// URL that uses it and the function that drops it.
func freshSchema(ctx context.Context, base string) (string, func(), error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("-database-url: %w", err)
	}
	schema := "bench_" + RandomHex(6)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func() {
		if _, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			fmt.Fprintf(os.Stderr, "drop schema %s: %v\n", schema, err)
		}
		admin.Close()
	}, nil
}

// NewMerchant creates a merchant (a participant bank when bic is set) in
// m's database; its SecretKeys are two test-mode principals. The admin's
// printed password is a one-time invitation: NewMerchant replaces it as the
// admin would at first sign-in, so Portal.Password signs in to every page.
func NewMerchant(ctx context.Context, m *app.Main, name, bic string) (merchants.Created, error) {
	c, err := m.Merchants.Create(ctx, merchants.CreateParams{Name: name, BIC: bic})
	if err != nil {
		return c, fmt.Errorf("create merchant %q: %w", name, err)
	}
	var admin string
	if err := m.DB.QueryRow(ctx, "SELECT id FROM users WHERE merchant_id = ?", c.MerchantID).Scan(&admin); err != nil {
		return c, fmt.Errorf("merchant %q's admin: %w", name, err)
	}
	own := "own-" + c.Portal.Password
	if err := m.Merchants.SetOwnPassword(ctx, admin, own, ""); err != nil {
		return c, fmt.Errorf("merchant %q's admin password: %w", name, err)
	}
	c.Portal.Password = own
	return c, nil
}
