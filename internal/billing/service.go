package billing

import (
	"context"
	"log/slog"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
)

// Config is what the billing service needs.
type Config struct {
	DB *store.DB
	// Payments creates the payment intent of each attempt; billing
	// registers its status hook on it (see Register).
	Payments *payments.Service
	// PublicURL returns the base of hosted_invoice_url (it changes once the
	// server listens on port 0).
	PublicURL func() string
	// RetrySchedule lists the waits after each failed automatic attempt
	// before the next (PAYD_BILLING_RETRY_SCHEDULE); after the last retry
	// fails the subscription is unpaid.
	RetrySchedule []time.Duration
	Logger        *slog.Logger
	// WakeJobs wakes the job runner after an advance is queued (optional).
	WakeJobs func()
	// LinkKey derives each invoice's hosted-page token (an HMAC of the
	// invoice id), so no working payment link is stored in the database.
	// payd passes a key derived from its secrets key for this purpose only
	// (secretbox.DeriveKey). Without one no link opens.
	LinkKey []byte
	// LegacyLinkKey is the key links were made with before LinkKey was
	// derived (the secrets key's text): links already sent keep opening.
	// Empty: none.
	LegacyLinkKey []byte
}

// Service runs billing. Every operation a request makes (the API's and
// the portal's) takes the request's claim, cl, and runs its statements,
// and the reads that must see them, through s.db.Within(cl): the
// request's unit of work, never one found through the context. The billing
// run, its jobs and the hosted pages have no request claim (store.NoClaim):
// each of their transactions commits on its own.
type Service struct {
	db       *store.DB
	pay      *payments.Service
	url      func() string
	schedule []time.Duration
	log      *slog.Logger
	wake     func()
	linkKey  []byte
	oldLink  []byte

	// Workers bounds how many payment attempts one billing run makes at
	// once (each is a payment intent created in its own transaction).
	Workers int
	// ChunkSize bounds how many subscriptions or invoices one transaction
	// of a billing run moves.
	ChunkSize int
	// failAfter, when set by a test, makes a billing run stop with an error
	// after that many steps (a crash in the middle of an advance).
	failAfter func() bool
}

// NewService makes the service and registers its hook on payments, so an
// invoice's payment outcome is written in the payment's transaction.
func NewService(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.WakeJobs == nil {
		cfg.WakeJobs = func() {}
	}
	if cfg.PublicURL == nil {
		cfg.PublicURL = func() string { return "" }
	}
	s := &Service{db: cfg.DB, pay: cfg.Payments, url: cfg.PublicURL, schedule: cfg.RetrySchedule, log: cfg.Logger, wake: cfg.WakeJobs, linkKey: cfg.LinkKey, oldLink: cfg.LegacyLinkKey,
		Workers: 4, ChunkSize: 250}
	if cfg.DB != nil && !cfg.DB.Engine().ConcurrentWriters() {
		s.Workers = 1 // one writer: parallel attempts only queue
	}
	cfg.Payments.OnStatusBatch(s.onIntentStatus, s.onIntentStatusMany)
	return s
}

// emit records one billing event in tx.
func emit(ctx context.Context, tx *store.Tx, merchantID string, livemode bool, typ, objectType, id string, obj any) error {
	_, err := events.Emit(ctx, tx, merchantID, livemode, typ, objectType, id, obj)
	return err
}

// emitOnClock records one billing event of a step on a test clock's time
// line: onClock is the step's time on the clock, which the event shows as
// its created_at (see stepOnClock); nil records it as emit does, on the
// real time.
func emitOnClock(ctx context.Context, tx *store.Tx, onClock *time.Time, merchantID string, livemode bool, typ, objectType, id string, obj any) error {
	if onClock == nil {
		return emit(ctx, tx, merchantID, livemode, typ, objectType, id, obj)
	}
	_, err := events.EmitMany(ctx, tx, []events.Pending{{MerchantID: merchantID, Livemode: livemode, Type: typ,
		ObjectType: objectType, ObjectID: id, Object: obj, OnClock: onClock}})
	return err
}

// stepOnClock is the time on the test clock of a billing step made at at
// by the billing run (an advance, or an automatic attempt's job) for an
// object on clock: the events of the step show it as their created_at, as
// the payment intents of the step do. For an object without a clock it is
// nil: its events keep the real time. (Requests keep the real time too:
// what a merchant does through the API happens when the request is made.)
func stepOnClock(clock *string, at time.Time) *time.Time {
	if clock == nil {
		return nil
	}
	t := at.UTC().Truncate(time.Second)
	return &t
}

// principal is the merchant and mode a background step acts for.
func principal(merchantID string, livemode bool) auth.Principal {
	return auth.Principal{ID: "billing", MerchantID: merchantID, Livemode: livemode, Kind: "secret"}
}

// nowFor returns the time a customer's billing lives on: its test clock's
// frozen time, or the real time.
func nowFor(ctx context.Context, q store.Querier, merchantID string, livemode bool, clockID *string, real time.Time) (time.Time, error) {
	if clockID == nil {
		return real, nil
	}
	c, err := loadClock(ctx, q, merchantID, livemode, *clockID)
	if err != nil {
		return time.Time{}, err
	}
	return c.clockTime(), nil
}
