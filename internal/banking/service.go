package banking

import (
	"context"
	"log/slog"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// DefaultSettleDelay is how long a transfer to a deferred-settlement
// participant stays ACSP before the background job settles it.
const DefaultSettleDelay = time.Second

// Service runs bank transfers.
type Service struct {
	db       *store.DB
	screener NameScreener
	log      *slog.Logger
	notify   func()
	delay    time.Duration
}

// Config builds a Service.
type Config struct {
	DB *store.DB
	// Screener screens debtor and creditor names; nil screens nothing.
	Screener NameScreener
	Logger   *slog.Logger
	// Notify wakes the job runner after a settlement job was queued; optional.
	Notify func()
	// SettleDelay is how long deferred settlement waits; zero means
	// DefaultSettleDelay.
	SettleDelay time.Duration
}

// NewService makes the service.
func NewService(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SettleDelay <= 0 {
		cfg.SettleDelay = DefaultSettleDelay
	}
	return &Service{db: cfg.DB, screener: cfg.Screener, log: cfg.Logger, notify: cfg.Notify, delay: cfg.SettleDelay}
}

// Get returns the transfer with this UETR as seen by one of its agents; any
// other caller gets 404, a non-participant 403.
func (s *Service) Get(ctx context.Context, p auth.Principal, uetr string) (*Transfer, error) {
	if _, err := s.Caller(ctx, p); err != nil {
		return nil, err
	}
	t, err := getTransfer(ctx, s.db, p.MerchantID, p.Livemode, uetr, false)
	if store.IsNotFound(err) {
		return nil, errs.NotFound("transfer", uetr)
	}
	return t, err
}

// NewReportID returns a fresh identifier for a status report (at most 35
// characters, as GrpHdr/MsgId allows).
func NewReportID() string { return ids.New("psr_") }

// Now is the database clock.
func (s *Service) Now() time.Time { return s.db.Now() }
