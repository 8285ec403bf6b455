// Package app wires payd together: configuration from the environment, the
// database, the capabilities' services, the HTTP server and the background
// workers. Main is started on port 0 by end-to-end tests exactly as
// `payd serve` starts it.
package app

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/internal/billing"
	"github.com/payd/payd/internal/retention"
	"github.com/payd/payd/internal/tracing"
)

// Config is payd's configuration; every field has an
// environment variable and a default.
type Config struct {
	Addr                 string          // PAYD_ADDR
	DatabaseURL          string          // PAYD_DATABASE_URL
	PublicURL            string          // PAYD_PUBLIC_URL: base of redirect_urls
	SandboxTimeoutDelay  time.Duration   // PAYD_SANDBOX_TIMEOUT_DELAY
	SandboxPushDelay     time.Duration   // PAYD_SANDBOX_PUSH_DELAY
	WebhookRetrySchedule []time.Duration // PAYD_WEBHOOK_RETRY_SCHEDULE
	// PAYD_WEBHOOK_BREAKER_FAILURES consecutive failed attempts spanning at
	// least PAYD_WEBHOOK_BREAKER_PERIOD disable a webhook endpoint (0 failures
	// turns the breaker off).
	WebhookBreakerFailures int
	WebhookBreakerPeriod   time.Duration
	SanctionsList          string          // PAYD_SANCTIONS_LIST: path or https URL of sdn.csv
	P2PEKeys               string          // PAYD_P2PE_KEYS: path of the live base derivation keys
	RateLimit              float64         // PAYD_RATE_LIMIT: requests/s per key; 0 turns it off
	RateBurst              int             // PAYD_RATE_BURST
	PublicRateLimit        float64         // PAYD_PUBLIC_RATE_LIMIT: requests/s per client address on public routes; 0 turns it off
	ReconcileInterval      time.Duration   // PAYD_RECONCILE_INTERVAL
	BreakerOpen            time.Duration   // PAYD_BREAKER_OPEN
	IdempotencyLease       time.Duration   // PAYD_IDEMPOTENCY_LEASE: how long a request that called a provider holds its key
	DBMaxConns             int             // PAYD_DB_MAX_CONNS: database pool size (0: 32 on PostgreSQL, 8 on SQLite)
	SecretsKey             string          // PAYD_SECRETS_KEY: 64 hex chars, seals provider credentials
	SecretsKeyFile         string          // PAYD_SECRETS_KEY_FILE: a file holding the key, read when SecretsKey is empty
	Demo                   bool            // PAYD_DEMO: serve makes a demo merchant on an empty database (default true)
	LogLevel               string          // PAYD_LOG_LEVEL: debug, info, warn, error
	LogFormat              string          // PAYD_LOG_FORMAT: json (default) or text
	Workers                bool            // PAYD_WORKERS: run background workers in this process (default true)
	RequestLog             bool            // PAYD_REQUEST_LOG: keep recent API requests for `payd logs tail` (default true)
	BillingRetrySchedule   []time.Duration // PAYD_BILLING_RETRY_SCHEDULE: waits after each failed invoice attempt
	IntentExpiry           time.Duration   // PAYD_INTENT_EXPIRY: a requires_action intent this old is canceled (abandoned); 0 never
	CaptureWindow          time.Duration   // PAYD_CAPTURE_WINDOW: an authorisation not captured this long after it is released; 0 never
	// Tracing: OpenTelemetry traces go to the OTLP endpoint the standard
	// OTEL_* variables name (internal/tracing); false (no endpoint set)
	// keeps tracing off.
	Tracing bool
	// Retention is how long events, webhook deliveries, request logs and
	// spent idempotency keys are kept (PAYD_RETENTION_*; the zero Policy
	// means retention.DefaultPolicy).
	Retention retention.Policy
}

// ConfigFromEnv reads the configuration through getenv (os.Getenv in main).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Addr:           or(getenv("PAYD_ADDR"), "127.0.0.1:8080"),
		DatabaseURL:    or(getenv("PAYD_DATABASE_URL"), "sqlite:payd.db"),
		PublicURL:      getenv("PAYD_PUBLIC_URL"),
		SanctionsList:  getenv("PAYD_SANCTIONS_LIST"),
		P2PEKeys:       getenv("PAYD_P2PE_KEYS"),
		SecretsKey:     getenv("PAYD_SECRETS_KEY"),
		SecretsKeyFile: getenv("PAYD_SECRETS_KEY_FILE"),
		Demo:           getenv("PAYD_DEMO") != "false",
		LogLevel:       or(getenv("PAYD_LOG_LEVEL"), "info"),
		LogFormat:      or(getenv("PAYD_LOG_FORMAT"), "json"),
		Workers:        getenv("PAYD_WORKERS") != "false",
		RequestLog:     getenv("PAYD_REQUEST_LOG") != "false",
		Tracing:        tracing.Enabled(getenv),
	}
	var err error
	durations := []struct {
		name, def string
		dst       *time.Duration
	}{
		{"PAYD_SANDBOX_TIMEOUT_DELAY", "30s", &c.SandboxTimeoutDelay},
		{"PAYD_SANDBOX_PUSH_DELAY", "3s", &c.SandboxPushDelay},
		{"PAYD_RECONCILE_INTERVAL", "30s", &c.ReconcileInterval},
		{"PAYD_BREAKER_OPEN", "30s", &c.BreakerOpen},
		{"PAYD_IDEMPOTENCY_LEASE", "10s", &c.IdempotencyLease},
		{"PAYD_WEBHOOK_BREAKER_PERIOD", "6h", &c.WebhookBreakerPeriod},
		{"PAYD_INTENT_EXPIRY", "24h", &c.IntentExpiry},
		{"PAYD_CAPTURE_WINDOW", "168h", &c.CaptureWindow},
	}
	for _, d := range durations {
		if *d.dst, err = time.ParseDuration(or(getenv(d.name), d.def)); err != nil || *d.dst < 0 {
			return c, fmt.Errorf("%s: %q is not a duration such as 3s", d.name, getenv(d.name))
		}
	}
	if c.WebhookRetrySchedule, err = ParseSchedule(or(getenv("PAYD_WEBHOOK_RETRY_SCHEDULE"), "1m,5m,30m,2h,6h,12h,24h")); err != nil {
		return c, fmt.Errorf("PAYD_WEBHOOK_RETRY_SCHEDULE: %w", err)
	}
	if c.WebhookBreakerFailures, err = strconv.Atoi(or(getenv("PAYD_WEBHOOK_BREAKER_FAILURES"), "20")); err != nil || c.WebhookBreakerFailures < 0 {
		return c, fmt.Errorf("PAYD_WEBHOOK_BREAKER_FAILURES: %q is not a non-negative integer", getenv("PAYD_WEBHOOK_BREAKER_FAILURES"))
	}
	if c.BillingRetrySchedule, err = billing.ParseRetrySchedule(or(getenv("PAYD_BILLING_RETRY_SCHEDULE"), "1d,3d,5d")); err != nil {
		return c, fmt.Errorf("PAYD_BILLING_RETRY_SCHEDULE: %w", err)
	}
	if c.RateLimit, err = strconv.ParseFloat(or(getenv("PAYD_RATE_LIMIT"), "200"), 64); err != nil || c.RateLimit < 0 {
		return c, fmt.Errorf("PAYD_RATE_LIMIT: %q is not a non-negative number", getenv("PAYD_RATE_LIMIT"))
	}
	if c.RateBurst, err = strconv.Atoi(or(getenv("PAYD_RATE_BURST"), "400")); err != nil || c.RateBurst < 1 {
		return c, fmt.Errorf("PAYD_RATE_BURST: %q is not a positive integer", getenv("PAYD_RATE_BURST"))
	}
	if c.PublicRateLimit, err = strconv.ParseFloat(or(getenv("PAYD_PUBLIC_RATE_LIMIT"), "100"), 64); err != nil || c.PublicRateLimit < 0 {
		return c, fmt.Errorf("PAYD_PUBLIC_RATE_LIMIT: %q is not a non-negative number", getenv("PAYD_PUBLIC_RATE_LIMIT"))
	}
	if c.DBMaxConns, err = strconv.Atoi(or(getenv("PAYD_DB_MAX_CONNS"), "0")); err != nil || c.DBMaxConns < 0 {
		return c, fmt.Errorf("PAYD_DB_MAX_CONNS: %q is not a non-negative integer", getenv("PAYD_DB_MAX_CONNS"))
	}
	if c.Retention, err = retention.PolicyFromEnv(getenv); err != nil {
		return c, err
	}
	if !slices.Contains(LogFormats, c.LogFormat) {
		return c, fmt.Errorf("PAYD_LOG_FORMAT: %q is not json or text", c.LogFormat)
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Addr
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	return c, nil
}

// ParseSchedule parses a comma-separated list of durations ("1m,5m,30m").
func ParseSchedule(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		d, err := time.ParseDuration(part)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%q is not a duration", part)
		}
		out = append(out, d)
	}
	return out, nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
