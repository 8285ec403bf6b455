// Package webhooks owns webhook endpoints, the events API and the delivery
// worker. Capabilities record events in the outbox (internal/events) in the
// same transaction as their change; the worker turns each undispatched event
// into one delivery per subscribed endpoint, posts it signed (package
// webhook at the repository root verifies it), and retries on the
// configured schedule until it succeeds or the schedule is exhausted.
//
// Deliveries are claimed with a lease, so several payd processes sharing a
// PostgreSQL database split them without sending one twice at once, and a
// process that dies mid-attempt leaves its delivery due again when the lease
// expires: delivery is at least once.
package webhooks

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
)

// Config is what the service needs.
type Config struct {
	DB     *store.DB
	Logger *slog.Logger
	// Box seals endpoint secrets (PAYD_SECRETS_KEY). Without a key, test-mode
	// secrets are sealed with a key the database keeps (see docs/webhooks.md)
	// and live endpoints cannot be created.
	Box *secretbox.Box
	// RetrySchedule lists the waits before each retry; the first attempt is
	// immediate, so n waits mean n+1 attempts.
	RetrySchedule []time.Duration
	Registry      prometheus.Registerer

	// Timeout bounds one attempt. Zero means 5 s.
	Timeout time.Duration
	// Lease is how long an in-flight attempt is this process's before
	// another may retry it. Zero means Timeout + 25 s.
	Lease time.Duration
	// Poll is how often the worker looks for work without a wake-up (events
	// committed by another process). Zero means 1 s.
	Poll time.Duration
	// Concurrency bounds the attempts in flight in this process. Zero means 32.
	Concurrency int
	// Resolve and TLSConfig replace DNS and the TLS settings (tests).
	Resolve   Resolver
	TLSConfig *tls.Config
	// NoJitter makes retries exactly on schedule (tests that measure it).
	NoJitter bool

	// EndpointConcurrency and MerchantConcurrency cap the attempts in flight
	// to one endpoint and to one merchant's endpoints, across every process
	// sharing the database. Zero means DefaultEndpointConcurrency and
	// DefaultMerchantConcurrency.
	EndpointConcurrency int
	MerchantConcurrency int
	// BreakerFailures consecutive failed attempts spanning at least
	// BreakerPeriod disable an endpoint. Zero BreakerFailures means the
	// defaults for both (DefaultBreakerFailures, DefaultBreakerPeriod); a
	// negative one turns the breaker off.
	BreakerFailures int
	BreakerPeriod   time.Duration
}

// Service is the webhooks capability.
type Service struct {
	db       *store.DB
	log      *slog.Logger
	box      *secretbox.Box
	schedule []time.Duration
	timeout  time.Duration
	lease    time.Duration
	poll     time.Duration
	conc     int
	resolve  Resolver
	noJitter bool
	clients  [2]*http.Client // [0] test mode, [1] live mode

	epConc, merchantConc int
	breakerFailures      int
	breakerPeriod        time.Duration
	fast                 fastTracker
	metrics              *metrics

	keyringOnce sync.Mutex
	keyring     *secretbox.Box

	wakeDispatch chan struct{}
	wakeDeliver  chan struct{}
	recorded     chan struct{} // attempts were recorded (their leases ended)
	// rateWake is when an endpoint's max_rate next allows an attempt it
	// held back at the last claim (micros; 0: none held back).
	rateWake atomic.Int64
	streams  *streamHub
}

// New makes the service.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Service{db: cfg.DB, log: cfg.Logger, box: cfg.Box, schedule: append([]time.Duration(nil), cfg.RetrySchedule...),
		timeout: cfg.Timeout, lease: cfg.Lease, poll: cfg.Poll, conc: cfg.Concurrency, resolve: cfg.Resolve, noJitter: cfg.NoJitter,
		wakeDispatch: make(chan struct{}, 1), wakeDeliver: make(chan struct{}, 1), recorded: make(chan struct{}, 1), streams: newStreamHub()}
	if s.timeout <= 0 {
		s.timeout = 5 * time.Second
	}
	if s.lease <= 0 {
		s.lease = s.timeout + 25*time.Second
	}
	if s.poll <= 0 {
		s.poll = time.Second
	}
	if s.conc <= 0 {
		s.conc = 32
	}
	s.epConc, s.merchantConc = cfg.EndpointConcurrency, cfg.MerchantConcurrency
	if s.epConc <= 0 {
		s.epConc = DefaultEndpointConcurrency
	}
	if s.merchantConc <= 0 {
		s.merchantConc = DefaultMerchantConcurrency
	}
	s.breakerFailures, s.breakerPeriod = cfg.BreakerFailures, cfg.BreakerPeriod
	if s.breakerFailures == 0 {
		s.breakerFailures, s.breakerPeriod = DefaultBreakerFailures, DefaultBreakerPeriod
	}
	if s.resolve == nil {
		s.resolve = defaultResolver
	}
	for i, live := range []bool{false, true} {
		s.clients[i] = newDeliveryClient(live, s.resolve, s.timeout, cfg.TLSConfig)
	}
	s.metrics = newMetrics(cfg.Registry)
	return s
}

// Notify wakes the dispatcher and the event streams: an event was committed.
// It never blocks.
func (s *Service) Notify() {
	select {
	case s.wakeDispatch <- struct{}{}:
	default:
	}
	s.streams.wake()
}

func (s *Service) wakeDelivery() {
	select {
	case s.wakeDeliver <- struct{}{}:
	default:
	}
}

func (s *Service) client(livemode bool) *http.Client {
	if livemode {
		return s.clients[1]
	}
	return s.clients[0]
}

// Run dispatches events and delivers them until ctx is done.
func (s *Service) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.runDispatcher(ctx) }()
	go func() { defer wg.Done(); s.runDeliverer(ctx) }()
	wg.Wait()
}

// Close ends the open event streams (so a server shutdown need not wait for
// them).
func (s *Service) Close() { s.streams.close() }
