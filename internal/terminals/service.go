package terminals

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/store"
)

// Config is what the terminals service is built from.
type Config struct {
	DB       *store.DB
	Keys     *Keys
	Gateways GatewaySelector
	// Recorder records outcomes as payment intents; until one is set (see
	// SetRecorder) card-present payments answer 503.
	Recorder IntentRecorder
	Logger   *slog.Logger
	// Holds reports whether an idempotent request in flight holds ref at a
	// recovery point (idempotency.Holds, handed over by the wiring), run in
	// the transaction that would decide about ref. Nil: none ever does.
	Holds func(ctx context.Context, tx *store.Tx, ref string, now time.Time) (bool, error)
}

// Service is the terminal registry and the card-present payment pipeline.
type Service struct {
	db       *store.DB
	keys     *Keys
	gateways GatewaySelector
	recorder atomic.Pointer[recorderBox]
	log      *slog.Logger
	holds    func(ctx context.Context, tx *store.Tx, ref string, now time.Time) (bool, error)
}

type recorderBox struct{ IntentRecorder }

// NewService builds the service.
func NewService(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Holds == nil {
		cfg.Holds = func(context.Context, *store.Tx, string, time.Time) (bool, error) { return false, nil }
	}
	s := &Service{db: cfg.DB, keys: cfg.Keys, gateways: cfg.Gateways, log: cfg.Logger, holds: cfg.Holds}
	s.SetRecorder(cfg.Recorder)
	return s
}

// SetRecorder installs the payment intent recorder (the payments service),
// for wiring where it is built after this service. Call it before serving.
func (s *Service) SetRecorder(r IntentRecorder) {
	if r == nil {
		s.recorder.Store(nil)
		return
	}
	s.recorder.Store(&recorderBox{r})
}

// Recorder returns the installed payment intent recorder, or nil.
func (s *Service) Recorder() IntentRecorder {
	if b := s.recorder.Load(); b != nil {
		return b.IntentRecorder
	}
	return nil
}

// errNotWired is the answer while no recorder is installed.
var errNotWired = &errs.Error{Kind: errs.KindUnavailable, Code: "card_present_unavailable",
	Message: "card-present payments are not available in this deployment"}
