package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/banking"
	"github.com/payd/payd/internal/disputes"
	"github.com/payd/payd/internal/httpx"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/payouts"
	"github.com/payd/payd/internal/refunds"
	"github.com/payd/payd/internal/reports"
	"github.com/payd/payd/internal/requestlog"
	"github.com/payd/payd/internal/retention"
	"github.com/payd/payd/internal/screening"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/tracing"
	"github.com/payd/payd/internal/webhooks"
)

// Main is one payd process.
type Main struct {
	Config Config
	Logger *slog.Logger
	// Out receives what an operator must see once (the demo merchant's keys).
	Out io.Writer

	DB        *store.DB
	Registry  *prometheus.Registry
	Merchants *merchants.Service
	API       *api.Server
	// Uploads bounds the large uploads in flight in this process (per key,
	// per merchant, in total), shared by the API and the portal.
	Uploads *httpx.UploadSlots
	Jobs    *jobs.Runner

	listener  net.Listener
	server    *http.Server
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closers   []func()
	reloaders []func(context.Context)
	starters  []func(context.Context)
	listeners []func(string)
	// handler is what the server serves: nil (503 to everything) until
	// the database is open, then the API.
	handler     atomic.Pointer[api.Server]
	purgeTables []retention.Table

	// The capabilities' services, set by their wirers (wire_<name>.go) and
	// reached through the accessors there (Payouts, Banking, ...).
	sanctions   *screening.Screener
	paymentsW   *paymentsWiring
	payoutSvc   *payouts.Service
	refundSvc   *refunds.Service
	disputeSvc  *disputes.Service
	bankingSvc  *banking.Service
	terminalSvc *terminals.Service
	webhookSvc  *webhooks.Service
	providersW  *providersWiring
	reportsSvc  *reports.Service
	billingW    *billingWiring
	requestLog  *requestlog.Log
}

// Open connects to the database, applies migrations and builds the services,
// without listening or starting workers (what the CLI commands need).
func (m *Main) Open(ctx context.Context) error {
	if m.Logger == nil {
		m.Logger = m.Config.Logger(os.Stderr)
	}
	if m.Out == nil {
		m.Out = os.Stdout
	}
	db, err := store.Open(ctx, m.Config.DatabaseURL)
	if err != nil {
		return err
	}
	m.DB = db
	if m.Config.DBMaxConns > 0 {
		db.SetPoolSize(m.Config.DBMaxConns)
	}
	if err := db.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	key, source, err := resolveSecretsKey(m.Config)
	if err != nil {
		return err
	}
	if err := checkSecretsKey(ctx, db, key, source); err != nil {
		return err
	}
	m.Config.SecretsKey = key
	box, err := secretbox.New(m.Config.SecretsKey)
	if err != nil {
		return err
	}
	m.Merchants = merchants.NewService(db, box)
	m.Registry = prometheus.NewRegistry()
	m.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Registry.MustRegister(newCommitMetrics(db))
	m.Jobs = jobs.NewRunner(db, m.Logger)
	m.Uploads = httpx.NewDefaultUploadSlots()
	m.API = api.NewServer(api.Config{DB: db, Merchants: m.Merchants, Logger: m.Logger, Registry: m.Registry,
		RateLimit: m.Config.RateLimit, RateBurst: m.Config.RateBurst, PublicRateLimit: publicRate(m.Config.PublicRateLimit),
		IdempotencyLease: m.Config.IdempotencyLease, Uploads: m.Uploads})
	return m.wire(ctx)
}

// Run listens on Config.Addr (port 0 picks a free port; see Addr), opens
// everything, creates the demo merchant on a database that never had a
// merchant, and starts the background workers. It returns once the server
// is listening and serving the API.
//
// While no database accepts writes (a URL listing only standbys, a primary
// being promoted, a server still starting), Run waits for one, retrying
// every second until ctx ends; meanwhile every request is answered 503
// database_unavailable with Retry-After and /readyz answers 503, and the
// process does not exit. Any other failure to open (a wrong password, a
// missing database, a wrong secrets key) is returned at once.
func (m *Main) Run(ctx context.Context) error {
	if m.Logger == nil {
		m.Logger = m.Config.Logger(os.Stderr)
	}
	if m.Config.Tracing {
		shutdown, err := tracing.Setup(ctx, m.Logger, "")
		if err != nil {
			return err
		}
		// Closers run last to first: this one after the server and the
		// workers stopped, so their last spans are sent.
		m.closers = append([]func(){func() { shutdown(context.Background()) }}, m.closers...)
		if tracing.On() {
			m.Logger.Info("tracing on: spans go to the OTLP/HTTP endpoint of the OTEL_EXPORTER_OTLP_* variables")
		}
	}
	ln, err := net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return err
	}
	m.listener = ln
	m.warnNoSanctionsList()
	if strings.HasSuffix(m.Config.Addr, ":0") && m.Config.PublicURL == "http://"+m.Config.Addr {
		m.Config.PublicURL = "http://" + ln.Addr().String()
	}
	m.server = &http.Server{Handler: http.HandlerFunc(m.serveHTTP), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn)}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.Logger.Error("http server", "err", err)
		}
	}()
	if m.DB == nil {
		if err := m.openWhenWritable(ctx); err != nil {
			return err
		}
	}
	// A server without a secrets key (PostgreSQL with neither
	// PAYD_SECRETS_KEY nor PAYD_SECRETS_KEY_FILE; SQLite always has its key
	// file) could seal nothing, and the keys derived from it (hosted
	// invoice links) would not exist: it does not start
	// (the key is known once the database is open: SQLite's key file).
	if m.Config.SecretsKey == "" {
		return errors.New("no secrets key: payd serve on PostgreSQL needs PAYD_SECRETS_KEY or PAYD_SECRETS_KEY_FILE " +
			"(64 hex characters, e.g. openssl rand -hex 32; every process sharing the database needs the same key)")
	}
	m.publicURLChanged()
	m.handler.Store(m.API)
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	if m.requestLog != nil && m.Config.RequestLog {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.requestLog.Run(bg)
		}()
	}
	if m.Config.Workers {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.Jobs.Run(bg)
		}()
		m.startWorkers(bg)
	}
	if err := m.ensureDemoMerchant(ctx); err != nil {
		return err
	}
	m.warnWithoutSynchronousStandby(ctx)
	m.Logger.Info("payd listening", "addr", ln.Addr().String(), "engine", m.DB.Dialect().String(), "public_url", m.Config.PublicURL)
	return nil
}

// Addr is the address the server listens on.
func (m *Main) Addr() string {
	if m.listener == nil {
		return ""
	}
	return m.listener.Addr().String()
}

// URL is the base URL of the running server.
func (m *Main) URL() string { return "http://" + m.Addr() }

// Close stops the server gracefully, then the workers, then the database.
func (m *Main) Close() error {
	if m.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		m.server.Shutdown(ctx)
		cancel()
	}
	if m.cancel != nil {
		m.cancel()
	}
	m.wg.Wait()
	for i := len(m.closers) - 1; i >= 0; i-- {
		m.closers[i]()
	}
	if m.DB != nil {
		return m.DB.Close()
	}
	return nil
}

// ensureDemoMerchant gives a database that never had a merchant a demo
// merchant and prints its keys once, so `go run ./cmd/payd serve` is usable
// at once. Run calls it only once its listener is up, so a serve that cannot
// listen leaves the database untouched; PAYD_DEMO=false turns it off.
func (m *Main) ensureDemoMerchant(ctx context.Context) error {
	if !m.Config.Demo {
		return nil
	}
	c, made, err := m.Merchants.CreateDemo(ctx)
	if err != nil || !made {
		return err
	}
	fmt.Fprintf(m.Out, `
  payd: a demo merchant was created on this empty database. Its keys are shown once:

    merchant          %s
    secret key        %s
    second secret key %s   (another principal, for four-eyes approvals)
    publishable key   %s
    portal            %s/portal  %s / %s
                      (a one-time password: the first sign-in chooses the admin's own)

`, c.MerchantID, c.SecretKeys[0], c.SecretKeys[1], c.PublishableKey, m.Config.PublicURL, c.Portal.Email, c.Portal.Password)
	m.Logger.Info("demo merchant created", "merchant_id", c.MerchantID)
	return nil
}

// publicRate maps PAYD_PUBLIC_RATE_LIMIT (0: off) to the API's setting
// (negative: off).
func publicRate(v float64) float64 {
	if v == 0 {
		return -1
	}
	return v
}
