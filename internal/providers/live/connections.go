// Package live holds the live provider adapters: one per provider code,
// speaking payd's provider protocol (docs/providers.md, package protocol)
// over HTTP to the base URL of the merchant's provider connection, with the
// connection's API key, a per-call timeout, an idempotency key on every
// call, retries only where a repeat cannot act twice, a circuit breaker per
// merchant and provider, and bounded concurrency per provider. Business
// logic reaches it only through the providers package's interfaces.
package live

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
)

// Connection is one merchant's connection to one provider, as configured by
// `payd provider connect`. APIKey and CallbackSecret are secrets: they are
// never logged, put in an error or answered.
type Connection struct {
	BaseURL        string
	APIKey         string
	CallbackSecret string
	Timeout        time.Duration
}

// String hides the secrets.
func (c Connection) String() string { return "Connection{" + c.BaseURL + "}" }

// GoString hides the secrets from %#v.
func (c Connection) GoString() string { return c.String() }

// DefaultTimeout is a call's timeout when the connection names none.
const DefaultTimeout = 10 * time.Second

// Lookup returns a merchant's connection to a provider (from the sealed
// provider_connections row), read through rd: the store.Work of the request
// that asks for a rail, or nil outside any request (the lookup then reads
// on its own). A merchant without one is a not-found error.
type Lookup func(ctx context.Context, rd providers.Reader, merchantID, provider string) (Connection, error)

// Config configures the live adapters.
type Config struct {
	Lookup Lookup
	// CallbackBase is payd's public URL; callbacks go to
	// CallbackBase/providers/{provider}/callbacks?merchant=<id>.
	CallbackBase func() string
	// BreakerOpen is how long a breaker stays open (PAYD_BREAKER_OPEN).
	BreakerOpen time.Duration
	// MaxInFlight bounds the calls in flight to one provider (default 64).
	MaxInFlight int
	// CacheFor is how long a connection is used before it is read again
	// (default 10 s), so `payd provider connect` takes effect without a
	// restart.
	CacheFor time.Duration
	Logger   *slog.Logger
	Registry prometheus.Registerer
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Connections are the merchants' live provider connections: it builds the
// adapters, and owns what outlives one adapter (breakers, concurrency
// limits, HTTP connection pools, the callback secrets registered).
type Connections struct {
	cfg     Config
	log     *slog.Logger
	metrics *metrics

	mu         sync.Mutex
	cache      map[connKey]cachedConn
	breakers   map[connKey]*breaker
	registered map[string]time.Time // when each connection's callback secret was last registered
	rails      map[string]*rail
}

type connKey struct{ merchantID, provider string }

type cachedConn struct {
	conn Connection
	at   time.Time
}

// rail is what one provider's calls share in this process: its HTTP
// connection pool and its concurrency slots, so a slow provider holds only
// its own.
type rail struct {
	client *http.Client
	slots  chan struct{}
}

// NewConnections makes the live side.
func NewConnections(cfg Config) *Connections {
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 64
	}
	if cfg.CacheFor <= 0 {
		cfg.CacheFor = 10 * time.Second
	}
	if cfg.BreakerOpen <= 0 {
		cfg.BreakerOpen = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CallbackBase == nil {
		cfg.CallbackBase = func() string { return "" }
	}
	return &Connections{cfg: cfg, log: cfg.Logger, metrics: newMetrics(cfg.Registry), cache: map[connKey]cachedConn{},
		breakers: map[connKey]*breaker{}, registered: map[string]time.Time{}, rails: map[string]*rail{}}
}

// connection returns a merchant's connection, read (through rd, see Lookup)
// at most CacheFor ago.
func (c *Connections) connection(ctx context.Context, rd providers.Reader, merchantID, provider string) (Connection, error) {
	k := connKey{merchantID, provider}
	now := c.cfg.Now()
	c.mu.Lock()
	cc, ok := c.cache[k]
	c.mu.Unlock()
	if ok && now.Sub(cc.at) < c.cfg.CacheFor {
		return cc.conn, nil
	}
	conn, err := c.cfg.Lookup(ctx, rd, merchantID, provider)
	if err != nil {
		if e := errs.As(err); e != nil && e.Kind == errs.KindNotFound {
			return Connection{}, &errs.Error{Kind: errs.KindUnavailable, Code: "provider_unavailable",
				Message: "the provider " + provider + " is not connected for live mode", Err: err}
		}
		return Connection{}, err
	}
	conn.BaseURL = strings.TrimRight(conn.BaseURL, "/")
	if conn.Timeout <= 0 {
		conn.Timeout = DefaultTimeout
	}
	c.mu.Lock()
	c.cache[k] = cachedConn{conn: conn, at: now}
	c.mu.Unlock()
	return conn, nil
}

// CallbackSecret returns the secret a merchant's callbacks from a provider
// are signed with.
func (c *Connections) CallbackSecret(ctx context.Context, merchantID, provider string) (string, error) {
	conn, err := c.connection(ctx, nil, merchantID, provider)
	if err != nil {
		return "", err
	}
	return conn.CallbackSecret, nil
}

// Timeout returns a merchant's call timeout for a provider (reconciliation
// waits that long before asking about an unanswered call).
func (c *Connections) Timeout(ctx context.Context, merchantID, provider string) time.Duration {
	conn, err := c.connection(ctx, nil, merchantID, provider)
	if err != nil {
		return DefaultTimeout
	}
	return conn.Timeout
}

// breaker returns the breaker of a merchant's connection to a provider.
func (c *Connections) breaker(merchantID, provider string) *breaker {
	k := connKey{merchantID, provider}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.breakers[k]
	if b == nil {
		g := c.metrics.breakers.WithLabelValues(provider)
		b = &breaker{openFor: c.cfg.BreakerOpen, trialTimeout: 30 * time.Second, onChange: func(from, to breakerState) {
			switch {
			case from == closed:
				g.Inc()
				c.log.Warn("provider circuit breaker opened", "merchant_id", merchantID, "provider", provider)
			case to == closed:
				g.Dec()
				c.log.Info("provider circuit breaker closed", "merchant_id", merchantID, "provider", provider)
			}
		}}
		c.breakers[k] = b
	}
	return b
}

// rail returns the shared HTTP pool and slots of a provider.
func (c *Connections) rail(provider string) *rail {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.rails[provider]
	if r == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = c.cfg.MaxInFlight
		t.MaxIdleConnsPerHost = c.cfg.MaxInFlight
		t.IdleConnTimeout = 90 * time.Second
		r = &rail{client: &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}, slots: make(chan struct{}, c.cfg.MaxInFlight)}
		c.rails[provider] = r
	}
	return r
}

// unavailable is the fast refusal of a call to a provider whose breaker is
// open (or whose slots are all taken).
func unavailable(provider, why string) *errs.Error {
	return &errs.Error{Kind: errs.KindUnavailable, Code: "provider_unavailable",
		Message: "the provider " + provider + " is unavailable: " + why + "; try again later"}
}

// Ready returns a 503 provider_unavailable while the merchant's breaker for
// the provider refuses calls, and an error when it is not connected; the
// registry's factories call it so a refused create writes nothing.
func (c *Connections) Ready(ctx context.Context, merchantID, provider string) error {
	_, err := c.ready(ctx, nil, merchantID, provider)
	return err
}

// ready is Ready reading the connection through rd (see Lookup); it
// returns the connection.
func (c *Connections) ready(ctx context.Context, rd providers.Reader, merchantID, provider string) (Connection, error) {
	conn, err := c.connection(ctx, rd, merchantID, provider)
	if err != nil {
		return Connection{}, err
	}
	if !c.breaker(merchantID, provider).ready(c.cfg.Now()) {
		return Connection{}, unavailable(provider, "its circuit breaker is open after repeated failures")
	}
	return conn, nil
}

// secretFingerprint names a callback secret without revealing it.
func secretFingerprint(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:8])
}

// callbackURL is where a merchant's callbacks from a provider go.
func (c *Connections) callbackURL(merchantID, provider string) string {
	return strings.TrimRight(c.cfg.CallbackBase(), "/") + "/providers/" + provider + "/callbacks?merchant=" + merchantID
}
