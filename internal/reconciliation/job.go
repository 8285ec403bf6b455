package reconciliation

import (
	"context"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/store"
)

// JobKind is the periodic job that settles what live providers left open.
const JobKind = "provider_reconcile"

// OpenIntent is a live payment intent still waiting for its provider.
type OpenIntent struct {
	ID         string
	MerchantID string
	Provider   string
	Status     string // processing or requires_action
	UpdatedAt  time.Time
	attempts   int // questions asked before
}

// IntentReconciler is the payment side of reconciliation (payments.Service
// through the wiring).
type IntentReconciler interface {
	// ReconcileIntent asks the provider where the intent stands and records
	// the answer (a compare-and-set: settled at most once whoever else
	// answers); it returns the intent's status afterwards.
	ReconcileIntent(ctx context.Context, id string) (string, error)
}

// batch bounds the intents one run asks about.
const batch = 500

// minTimeout is the shortest wait before an unanswered intent is asked about.
const minTimeout = time.Second

// maxBackoff bounds the wait between two questions about an intent still
// waiting for its customer.
const maxBackoff = time.Hour

// Run is the job: one pass over the open live intents. An intent is asked
// about once its provider's timeout has passed since it last changed (an
// intent processing because a call is in flight is left to that call); one
// still waiting for its customer afterwards is asked again with a doubling
// backoff (provider_checks).
func (s *Service) Run(ctx context.Context, _ jobs.Job) error {
	if err := s.runCards(ctx); err != nil {
		return err
	}
	if err := s.runSettlements(ctx); err != nil {
		return err
	}
	if s.cfg.Intents == nil {
		return nil
	}
	now := s.cfg.DB.Now()
	// Forget the backoff of intents settled meanwhile (by a callback).
	if _, err := s.cfg.DB.Exec(ctx, `DELETE FROM provider_checks WHERE NOT EXISTS (SELECT 1 FROM payment_intents p
		WHERE p.id = provider_checks.object_id AND p.status IN ('processing', 'requires_action'))`); err != nil {
		return err
	}
	open, err := s.openIntents(ctx, now)
	if err != nil {
		return err
	}
	for _, in := range open {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if now.Sub(in.UpdatedAt) < s.cfg.Timeout(ctx, in.MerchantID, in.Provider) {
			continue
		}
		attempts := in.attempts
		status, err := s.cfg.Intents.ReconcileIntent(ctx, in.ID)
		if err != nil {
			s.cfg.Counted("payment_intent", "error")
			kind := errs.KindInternal
			if e := errs.As(err); e != nil {
				kind = e.Kind
			}
			s.cfg.Logger.Warn("reconciliation: provider not answered", "payment_intent", in.ID, "provider", in.Provider,
				"merchant_id", in.MerchantID, "err", err, "kind", kind)
			if err := s.later(ctx, in, attempts, now); err != nil {
				return err
			}
			continue
		}
		s.cfg.Counted("payment_intent", status)
		if status == "processing" || status == "requires_action" {
			if err := s.later(ctx, in, attempts, now); err != nil {
				return err
			}
			continue
		}
		s.cfg.Logger.Info("reconciliation: settled", "payment_intent", in.ID, "provider", in.Provider, "status", status)
	}
	return nil
}

const openIntentsQuery = `SELECT p.id, p.merchant_id, p.provider, p.status, p.updated_at, COALESCE(c.attempts, 0)
		FROM payment_intents p LEFT JOIN provider_checks c ON c.object_id = p.id
		WHERE p.livemode = TRUE AND p.status IN ('processing', 'requires_action') AND p.updated_at < ?
		AND (c.next_check_at IS NULL OR c.next_check_at <= ?)
		ORDER BY p.updated_at LIMIT ?`

// openIntents lists the live intents processing or requires_action that
// changed at least minTimeout ago and are due to be asked about, oldest
// first. It reads payment_intents (the payments capability's table) and
// changes nothing there: the answer is recorded by the payments service.
// The conditions on livemode and status are written out (not arguments) so
// that both engines read through payment_intents_open, the partial index of
// exactly these intents (migration 2040), instead of every intent.
func (s *Service) openIntents(ctx context.Context, now time.Time) ([]OpenIntent, error) {
	rows, err := s.cfg.DB.Query(ctx, openIntentsQuery, store.Micros(now.Add(-minTimeout)), store.Micros(now), batch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OpenIntent
	for rows.Next() {
		var in OpenIntent
		var updated int64
		if err := rows.Scan(&in.ID, &in.MerchantID, &in.Provider, &in.Status, &updated, &in.attempts); err != nil {
			return nil, err
		}
		in.UpdatedAt = store.FromMicros(updated)
		out = append(out, in)
	}
	return out, rows.Err()
}

// later records when an intent still open may be asked about again: the
// interval, doubling per question, at most an hour.
func (s *Service) later(ctx context.Context, in OpenIntent, attempts int, now time.Time) error {
	wait := s.cfg.Interval
	for i := 0; i < attempts && wait < maxBackoff; i++ {
		wait *= 2
	}
	wait = min(wait, maxBackoff)
	_, err := s.cfg.DB.Exec(ctx, `INSERT INTO provider_checks (object_id, merchant_id, livemode, attempts, next_check_at, created_at)
		VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT (object_id) DO UPDATE SET attempts = provider_checks.attempts + 1, next_check_at = excluded.next_check_at`,
		in.ID, in.MerchantID, true, store.Micros(now.Add(wait)), store.Micros(now))
	return err
}

// OpenAuthorization is a live terminal payment still waiting for its card
// gateway's answer.
type OpenAuthorization struct {
	ID         string // tpay_...
	MerchantID string
	UpdatedAt  time.Time
}

// CardReconciler is the card-present side of reconciliation
// (terminals.Service through the wiring).
type CardReconciler interface {
	// OpenAuthorizations lists the live terminal payments still waiting
	// for their authorisation's answer that last changed before olderThan.
	OpenAuthorizations(ctx context.Context, olderThan time.Time) ([]OpenAuthorization, error)
	// ReconcileAuthorization asks the card gateway about one by its
	// reference (never authorising) and records the answer once; it
	// returns the terminal payment's status afterwards.
	ReconcileAuthorization(ctx context.Context, id string) (string, error)
}

// CardGatewayProvider is the provider whose connection serves the card
// gateway; its timeout is how long an authorisation is left to its call.
const CardGatewayProvider = "wallet_a"

// runCards asks the card gateway about every live terminal payment left
// authorizing longer than the gateway's timeout (a call still in flight is
// left to its request). One that stays unknown (the gateway does not answer,
// or has no record while a retry may still come) is asked again next run.
func (s *Service) runCards(ctx context.Context) error {
	if s.cfg.Cards == nil {
		return nil
	}
	return s.askGateway(ctx, gatewayPass{
		list: s.cfg.Cards.OpenAuthorizations, settle: s.cfg.Cards.ReconcileAuthorization,
		object: "terminal_payment", logKey: "terminal_payment", unsettled: "authorizing", failure: "reconciliation: card gateway not answered",
	})
}

// gatewayPass is one of reconciliation's passes over calls to the card
// gateway whose answers were never recorded.
type gatewayPass struct {
	list   func(ctx context.Context, olderThan time.Time) ([]OpenAuthorization, error)
	settle func(ctx context.Context, id string) (string, error)
	// object names the rows in metrics, logKey their ids in logs;
	// unsettled is the status a row keeps while the gateway's answer is
	// still unknown (not logged as settled), failure the warning when the
	// gateway could not be asked.
	object, logKey, unsettled, failure string
}

// askGateway settles every call p lists that has waited longer than the
// card gateway's timeout for its merchant; one that fails is asked about
// again next run.
func (s *Service) askGateway(ctx context.Context, p gatewayPass) error {
	now := s.cfg.DB.Now()
	open, err := p.list(ctx, now.Add(-minTimeout))
	if err != nil {
		return err
	}
	for _, o := range open {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if now.Sub(o.UpdatedAt) < s.cfg.Timeout(ctx, o.MerchantID, CardGatewayProvider) {
			continue
		}
		status, err := p.settle(ctx, o.ID)
		if err != nil {
			s.cfg.Counted(p.object, "error")
			s.cfg.Logger.Warn(p.failure, p.logKey, o.ID, "merchant_id", o.MerchantID, "err", err)
			continue
		}
		s.cfg.Counted(p.object, status)
		if status != p.unsettled {
			s.cfg.Logger.Info("reconciliation: settled", p.logKey, o.ID, "status", status)
		}
	}
	return nil
}

// OpenSettlement is a live intent whose held card authorisation's capture
// or release was sent to the card gateway without its answer recorded.
//
// It has an authorisation's fields (the intent's pi_ id in ID).
type OpenSettlement = OpenAuthorization

// SettlementReconciler is the manual-capture side of reconciliation
// (payments.Service through the wiring).
type SettlementReconciler interface {
	// OpenSettlements lists the captures and releases in flight that last
	// changed before olderThan.
	OpenSettlements(ctx context.Context, olderThan time.Time) ([]OpenSettlement, error)
	// ReconcileSettlement asks the card gateway where the authorisation
	// stands and records it once (sending the capture or release again,
	// under its own key, when it never arrived); it returns the intent's
	// status afterwards.
	ReconcileSettlement(ctx context.Context, id string) (string, error)
}

// runSettlements finishes every capture or release of a live held
// authorisation left in flight longer than the gateway's timeout (a call
// still running is left to its request). One still open is asked about
// again next run: a release is sent until the gateway confirms it.
func (s *Service) runSettlements(ctx context.Context) error {
	if s.cfg.Settlements == nil {
		return nil
	}
	return s.askGateway(ctx, gatewayPass{
		list: s.cfg.Settlements.OpenSettlements, settle: s.cfg.Settlements.ReconcileSettlement,
		object: "payment_intent_settlement", logKey: "payment_intent", failure: "reconciliation: card gateway capture or release not settled",
	})
}
