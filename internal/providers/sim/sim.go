// Package sim is a simulator of the six payment rails speaking payd's
// provider protocol (docs/providers.md, package protocol): payments with an
// SMS code, hosted pages (phone and PIN, card with 3-D Secure, method
// picker), push approvals and direct charges; payouts; status queries; daily
// settlement reports; the card gateway of card-present payments
// (authorise, capture, void, refund); and signed callbacks. `payd provider-sim` serves it;
// tests start it in-process on port 0. Knobs inject what goes wrong on a
// real network: latency, 500s, calls that hang after the provider has acted,
// duplicate and late callbacks.
//
// It keeps everything in memory, per rail and API key (an API key is an
// account at the provider), and is idempotent on the Idempotency-Key header.
// It never logs an API key, callback secret, code, PIN or card number.
package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
)

// Config tunes the simulator. The zero value is a well-behaved provider
// (push approvals after 3 s).
type Config struct {
	// Latency is added to every API call (not to pages or /_sim).
	Latency time.Duration
	// ProviderLatency adds latency to one rail's API calls only.
	ProviderLatency map[string]time.Duration
	// ErrorRate is the fraction of API calls answered 500 before anything
	// is done (so a retry under the same key is safe).
	ErrorRate float64
	// TimeoutRate is the fraction of initiate, payout and refund calls, and
	// of card authorise, capture, void and refund calls, that hang after the
	// provider has recorded the payment or paid the payout (and
	// stored the answer under the idempotency key), until the caller gives
	// up or HangFor passes. Status queries still answer.
	TimeoutRate float64
	// RefundFailureRate is the fraction of refunds the provider refuses
	// (failed, refund_declined).
	RefundFailureRate float64
	// HangFor bounds a hung call (default 2 minutes).
	HangFor time.Duration
	// AnswerDelay delays the answer of every initiate, code confirmation,
	// payout and refund call after the provider has acted and sent its
	// callback, so the callback arrives before the answer (tests).
	AnswerDelay time.Duration
	// PushDelay is how long after initiation a push payment is approved
	// (default 3 s).
	PushDelay time.Duration
	// DuplicateCallbacks sends every callback twice (same event id).
	DuplicateCallbacks bool
	// LateCallbacks sends every callback LateDelay late (default 2 s).
	LateCallbacks bool
	LateDelay     time.Duration
	// DropCallbacks sends no callbacks at all (the merchant learns outcomes
	// only by asking: a test of reconciliation).
	DropCallbacks bool
	// OTPTTL is how long an SMS code is valid (default 5 minutes).
	OTPTTL time.Duration
	// PaymentTTL is how long a payment waits for its customer before it
	// fails with code expired (default 30 minutes).
	PaymentTTL time.Duration
	// PublicURL is the base of the hosted pages' URLs (default: the
	// address Serve listens on).
	PublicURL string
	// Before, when set, is called before each API call is handled, with the
	// rail and the operation (initiate, otp, status, payout, payout_status,
	// report, callback_secret, card_authorize, card_status, card_capture,
	// card_void, card_refund); tests block in it to hold a rail.
	Before func(provider, op string)
	// ReportFilter, when set, may alter a settlement report before it is
	// served (tests of the settlement reconciliation).
	ReportFilter func(provider string, r *protocol.SettlementReport)
	// CallbackClient posts the callbacks (default: 5 s timeout).
	CallbackClient *http.Client
	Logger         *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Sim is the simulator. Its Handler serves the protocol and the pages.
type Sim struct {
	cfg Config
	log *slog.Logger
	mux *http.ServeMux

	errorRate, timeoutRate atomic.Uint64 // math.Float64bits of the rates
	refundFailureRate      atomic.Uint64

	mu        sync.Mutex
	publicURL string
	accounts  map[accountKey]*account
	pages     map[string]*account // payment id → its account, for the hosted pages
	sms       []sms               // the codes "sent by SMS", newest last
	disputes  sync.Map            // dispute id → *dispute

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type accountKey struct{ provider, apiKey string }

// New makes a simulator.
func New(cfg Config) *Sim {
	if cfg.HangFor <= 0 {
		cfg.HangFor = 2 * time.Minute
	}
	if cfg.PushDelay <= 0 {
		cfg.PushDelay = 3 * time.Second
	}
	if cfg.LateDelay <= 0 {
		cfg.LateDelay = 2 * time.Second
	}
	if cfg.OTPTTL <= 0 {
		cfg.OTPTTL = 5 * time.Minute
	}
	if cfg.PaymentTTL <= 0 {
		cfg.PaymentTTL = 30 * time.Minute
	}
	if cfg.CallbackClient == nil {
		cfg.CallbackClient = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sim{cfg: cfg, log: cfg.Logger, publicURL: strings.TrimRight(cfg.PublicURL, "/"),
		accounts: map[accountKey]*account{}, pages: map[string]*account{}, ctx: ctx, cancel: cancel}
	s.SetFaults(cfg.ErrorRate, cfg.TimeoutRate)
	s.SetRefundFailureRate(cfg.RefundFailureRate)
	s.routes()
	return s
}

// SetFaults changes the error and timeout rates of a running simulator.
func (s *Sim) SetFaults(errorRate, timeoutRate float64) {
	s.errorRate.Store(math.Float64bits(errorRate))
	s.timeoutRate.Store(math.Float64bits(timeoutRate))
}

func (s *Sim) failNow() bool { return roll(math.Float64frombits(s.errorRate.Load())) }
func (s *Sim) hangNow() bool { return roll(math.Float64frombits(s.timeoutRate.Load())) }

// Handler serves the protocol, the hosted pages and /_sim.
func (s *Sim) Handler() http.Handler { return s.mux }

// SetPublicURL sets the base of the hosted pages' URLs.
func (s *Sim) SetPublicURL(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.publicURL = strings.TrimRight(u, "/")
}

func (s *Sim) base() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.publicURL
}

// Close stops the push approvals and callbacks still pending and waits for
// the callbacks being sent.
func (s *Sim) Close() {
	s.cancel()
	s.wg.Wait()
}

// Server is a simulator listening on an address.
type Server struct {
	*Sim
	URL string
	srv *http.Server
	ln  net.Listener
}

// Serve listens on addr (port 0 picks a free port) and serves the simulator
// until Shutdown. The public URL defaults to the listening address.
func Serve(addr string, cfg Config) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := New(cfg)
	url := "http://" + ln.Addr().String()
	if s.base() == "" {
		s.SetPublicURL(url)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return &Server{Sim: s, URL: url, srv: srv, ln: ln}, nil
}

// Shutdown stops listening, ends hung calls and stops the simulator.
func (s *Server) Shutdown(ctx context.Context) error {
	s.Sim.Close()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	return err
}

// knownRail reports whether the simulator serves a rail.
func knownRail(p string) bool { return providers.Known(p, providers.All) }

// newID returns prefix followed by 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// roll reports whether an event of probability p happens.
func roll(p float64) bool { return p > 0 && mrand.Float64() < p }
