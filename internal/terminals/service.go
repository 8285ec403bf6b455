package terminals

import (
	"log/slog"
	"sync/atomic"

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
}

// Service is the terminal registry and the card-present payment pipeline.
type Service struct {
	db       *store.DB
	keys     *Keys
	gateways GatewaySelector
	recorder atomic.Pointer[recorderBox]
	log      *slog.Logger
}

type recorderBox struct{ IntentRecorder }

// NewService builds the service.
func NewService(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Service{db: cfg.DB, keys: cfg.Keys, gateways: cfg.Gateways, log: cfg.Logger}
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
