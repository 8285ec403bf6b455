package payouts

import (
	"context"
	"errors"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/screening"
	"github.com/payd/payd/internal/store"
)

// Config is what the service needs.
type Config struct {
	DB       *store.DB
	Rails    *providers.PayoutRails
	Screener *screening.Screener // nil screens nothing (not_screened)
	Logger   *slog.Logger
	Registry prometheus.Registerer // optional

	// Workers is how many chunks are dispatched at once in this process
	// (default 4); Chunk how many payouts one claim takes (default 250);
	// Calls how many rail calls run at once within a chunk (default 32).
	Workers, Chunk, Calls int
	// Lease is how long a claim outlives the rail's longest call before
	// another dispatcher may take the payout over (default 5s).
	Lease time.Duration
	// ReconcileAfter is how long a payout whose rail gave no answer waits
	// before its status is asked (default 1s; PAYD_SANDBOX_TIMEOUT_DELAY in
	// the app). It doubles with each unanswered attempt, up to an hour.
	ReconcileAfter time.Duration
	// Poll bounds how long an idle dispatcher sleeps (default 1s).
	Poll time.Duration
}

// Service manages payouts and batches.
type Service struct {
	db       *store.DB
	rails    *providers.PayoutRails
	screener *screening.Screener
	log      *slog.Logger
	cfg      Config
	wake     *signal
	metrics  *metrics
}

// New makes the service.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Chunk <= 0 {
		cfg.Chunk = 250
	}
	if cfg.Calls <= 0 {
		cfg.Calls = 32
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 5 * time.Second
	}
	if cfg.ReconcileAfter <= 0 {
		cfg.ReconcileAfter = time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	return &Service{db: cfg.DB, rails: cfg.Rails, screener: cfg.Screener, log: cfg.Logger, cfg: cfg,
		wake: newSignal(), metrics: newMetrics(cfg.Registry)}
}

// Screen screens a recipient name against the current sanctions list.
func (s *Service) Screen(name string) screening.Result {
	start := time.Now()
	r := s.screener.Screen(name)
	s.metrics.screening.Observe(time.Since(start).Seconds())
	return r
}

// CreateParams is the body of POST /v1/payouts.
type CreateParams struct {
	Amount           *int64            `json:"amount"`
	AmountMinor      *int64            `json:"amount_minor"` // the same value under payd's general name; one of the two
	Currency         string            `json:"currency"`
	Provider         string            `json:"provider"`
	RecipientMSISDN  string            `json:"recipient_msisdn"`
	RecipientAccount string            `json:"recipient_account"`
	RecipientName    string            `json:"recipient_name"`
	Description      string            `json:"description"`
	Metadata         map[string]string `json:"metadata"`
	// Reference is optional: the key the payout is sent to its rail under
	// (unique among the merchant's single payouts); the payout id when absent.
	Reference string `json:"reference"`
	// Scenario is the X-Service-Scenario header (test mode).
	Scenario string `json:"-"`
}

// Create makes a single payout: it screens the recipient, reserves the
// amount (402 insufficient_balance when available is short, nothing
// reserved), and sends it to its rail at once unless it is held by
// screening or needs four-eyes approval. The returned payout shows the
// rail's answer; status failed means the rail refused it. cl is the
// request's idempotency claim (store.NoClaim without one): a live rail's
// call commits a recovery point on it first. Its reads and writes run in
// the request's unit of work (db.Within(cl)).
func (s *Service) Create(ctx context.Context, cl store.Claim, pr auth.Principal, in CreateParams) (*Payout, error) {
	work := s.db.Within(cl)
	pin := &payoutInput{Currency: in.Currency, Provider: in.Provider, MSISDN: in.RecipientMSISDN,
		Account: in.RecipientAccount, Name: in.RecipientName, Description: in.Description, Reference: in.Reference,
		Metadata: in.Metadata}
	amount, field, err := money.OneAmount(in.Amount, in.AmountMinor)
	if err != nil {
		return nil, err
	}
	pin.AmountField = field
	if amount != nil {
		pin.Amount, pin.AmountSet = *amount, true
	}
	pin.validate(shapeSingle, pr.Livemode, in.Scenario)
	if err := singleError(pin); err != nil {
		return nil, err
	}
	if err := s.screeningAvailable(pr.Livemode); err != nil {
		return nil, err
	}
	rail, err := s.rails.For(ctx, work, pr.MerchantID, pr.Livemode, pin.Provider)
	if err != nil {
		return nil, railUnavailable(pin.Provider, err)
	}
	if p, ok, err := s.resumed(ctx, cl, pr); ok {
		return p, err
	}
	threshold, err := merchants.ApprovalThreshold(ctx, work, pr.MerchantID, pr.Livemode)
	if err != nil {
		return nil, err
	}
	scr := screeningOf(s.Screen(pin.Name))
	p := s.newPayout(pr, pin, scr, threshold, nil)
	if p.Reference == "" {
		p.Reference = p.ID
	}
	var claimID string
	err = work.InTx(ctx, func(tx *store.Tx) error {
		now := tx.Now()
		p.CreatedAt, p.UpdatedAt = now, now
		claimID = ""
		if p.Status == Processing {
			// Cumulative four-eyes, decided while holding the merchant's
			// settings row: a concurrent payout by the same principal
			// waits here and then counts this one.
			locked, err := merchants.LockedControls(ctx, tx, p.MerchantID, p.Livemode)
			if err != nil {
				return err
			}
			if locked.Threshold != nil {
				earlier, err := recentByPrincipal(ctx, tx, p.MerchantID, p.Livemode, p.CreatedBy, now.Add(-locked.Window))
				if err != nil {
					return err
				}
				if locked.Over(earlier, p.Amount) {
					p.Status, p.NeedsApproval = RequiresApproval, true
				}
			}
		}
		if p.Status == Processing {
			claimID = ids.New("clm_")
			p.dispatchAttempts = 1
		}
		err := insertPayouts(ctx, tx, []*Payout{p}, func(*Payout) (any, any) {
			if claimID == "" {
				return nil, nil
			}
			return micros(now.Add(s.lease(p))), claimID
		})
		if store.IsConflict(err) {
			return errs.Conflict("reference_taken", "another payout already uses reference %q", clip(p.Reference))
		}
		if err != nil {
			return err
		}
		if err := reserve(ctx, tx, p.MerchantID, p.Livemode, kindReserve, p.ID, []*Payout{p}); err != nil {
			return err
		}
		return s.emitCreated(ctx, tx, []*Payout{p})
	})
	if err != nil {
		return nil, err
	}
	if claimID != "" {
		if err := s.sendInline(ctx, cl, rail, claimID, p); err != nil {
			return nil, err
		}
	}
	return s.reload(ctx, work, p)
}

// pointDispatch is the recovery point of a request that sends a single
// payout (create, approve, release): the payout and its claim committed,
// about to be sent to its rail.
const pointDispatch = "payout.dispatch"

// sendInline sends a payout the request claimed and records the answer in
// the request's unit of work. Before a call that leaves the process (a live
// rail) it commits the request's writes with a recovery point, so a crash
// during the call cannot lose the payout the rail may have paid.
//
// rail is the payout's adapter, looked up before the request wrote (nil if
// that failed): a live rail's connection is read from the database, which
// a request does not do outside its unit of work while its transaction is
// open.
func (s *Service) sendInline(ctx context.Context, cl store.Claim, rail providers.PayoutAdapter, claimID string, p *Payout) error {
	if rail != nil && providers.AnswersInProcess(rail, providers.PayoutRequest{Provider: p.Provider, Scenario: p.Scenario}) {
		s.dispatchInline(ctx, s.db.Within(cl), claimID, p)
		return nil
	}
	if err := cl.RecoveryPoint(ctx, pointDispatch, p.ID); err != nil {
		return err
	}
	s.dispatchInline(ctx, s.db.Within(cl), claimID, p)
	return nil
}

// resumed answers a request whose earlier run sent a payout and ended
// without an answer (see sendInline): the payout as it is now. The
// dispatcher asks the rail about it once its claim's lease runs out.
func (s *Service) resumed(ctx context.Context, cl store.Claim, pr auth.Principal) (*Payout, bool, error) {
	rp, ok := cl.Resuming()
	if !ok || rp.Point != pointDispatch {
		return nil, false, nil
	}
	p, err := getPayout(ctx, s.db.Within(cl), pr.MerchantID, pr.Livemode, rp.Ref, false)
	return p, true, err
}

// newPayout builds a payout from validated input: held on a screening hit,
// requires_approval over the threshold (single payouts and variant A items),
// otherwise processing (single, sent inline) or pending (batch rows).
func (s *Service) newPayout(pr auth.Principal, in *payoutInput, scr Screening, threshold *int64, batch *Batch) *Payout {
	p := &Payout{ID: ids.New("po_"), Object: "payout", Amount: in.Amount, Currency: in.Currency, Provider: in.Provider,
		RecipientMSISDN: strPtr(in.MSISDN), RecipientAccount: strPtr(in.Account), RecipientName: strPtr(in.Name),
		Description: strPtr(in.Description), Metadata: in.Metadata, Reference: in.Reference, Screening: scr,
		Livemode: pr.Livemode, MerchantID: pr.MerchantID, CreatedBy: pr.ID, Scenario: in.Scenario}
	if p.Metadata == nil {
		p.Metadata = map[string]string{}
	}
	rowOfRowsBatch := batch != nil && batch.Variant == VariantRows
	if threshold != nil && in.Amount > *threshold && !rowOfRowsBatch {
		p.NeedsApproval = true
	}
	switch {
	case scr.Status == screening.StatusHit:
		p.Status = Held
	case p.NeedsApproval:
		p.Status = RequiresApproval
	case batch != nil:
		p.Status = Pending
	default:
		p.Status = Processing
	}
	if batch != nil {
		p.BatchID = &batch.ID
		p.BatchRow = in.Row
		p.CreatedBy = batch.CreatedBy
		if batch.ApprovedBy != nil {
			p.ApprovedBy = batch.ApprovedBy // rows are covered by the batch's approval
		}
	}
	return p
}

// emitCreated records payout.created for each payout (and payout.held for
// the held ones) and marks sandbox_webhook_fail payouts.
func (s *Service) emitCreated(ctx context.Context, tx *store.Tx, ps []*Payout) error {
	pend := make([]events.Pending, 0, len(ps))
	for _, p := range ps {
		pend = append(pend, payoutEvent(p, "payout.created"))
	}
	for _, p := range ps {
		if p.Status == Held {
			pend = append(pend, payoutEvent(p, "payout.held"))
		}
		if p.Scenario == providers.SandboxWebhookFail.Name {
			if err := events.MarkWebhookFail(ctx, tx, p.ID); err != nil {
				return err
			}
		}
	}
	_, err := events.EmitMany(ctx, tx, pend)
	return err
}

func payoutEvent(p *Payout, typ string) events.Pending {
	cp := *p
	return events.Pending{MerchantID: p.MerchantID, Livemode: p.Livemode, Type: typ, ObjectType: "payout", ObjectID: p.ID, Object: &cp}
}

// reload reads a payout again (after its rail answered), through q (the
// request's Work, whose writes it must see).
func (s *Service) reload(ctx context.Context, q store.Querier, p *Payout) (*Payout, error) {
	return getPayout(ctx, q, p.MerchantID, p.Livemode, p.ID, false)
}

// Get returns one payout of the caller's merchant and mode.
func (s *Service) Get(ctx context.Context, pr auth.Principal, id string) (*Payout, error) {
	return getPayout(ctx, s.db, pr.MerchantID, pr.Livemode, id, false)
}

// List returns a page of payouts, newest first.
func (s *Service) List(ctx context.Context, pr auth.Principal, f ListParams, page pagination.Page) ([]*Payout, bool, error) {
	q := "SELECT " + payoutColumns + " FROM payouts WHERE merchant_id = ? AND livemode = ?"
	args := []any{pr.MerchantID, pr.Livemode}
	if f.Status != "" {
		q += " AND status = ?"
		args = append(args, string(f.Status))
	}
	if f.Recipient != "" {
		q += " AND (recipient_msisdn = ? OR recipient_account = ?)"
		args = append(args, f.Recipient, f.Recipient)
	}
	if f.BatchID != "" {
		q += " AND batch_id = ?"
		args = append(args, f.BatchID)
	}
	if f.Provider != "" {
		q += " AND provider = ?"
		args = append(args, f.Provider)
	}
	cond, cargs, tail := page.Clause("id")
	rows, err := s.db.Query(ctx, q+cond+tail, append(args, cargs...)...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []*Payout
	for rows.Next() {
		p, err := scanPayout(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	out, more := pagination.Finish(page, out)
	return out, more, nil
}

// Approve clears a payout that requires approval (four-eyes: the approver
// must not be its creator, 403 self_approval_not_allowed). A single payout
// is then sent at once; a batch row waits for its batch's dispatcher.
func (s *Service) Approve(ctx context.Context, cl store.Claim, pr auth.Principal, id string) (*Payout, error) {
	return s.decide(ctx, cl, pr, id, RequiresApproval, "only a payout in requires_approval can be approved",
		func(tx *store.Tx, p *Payout) (string, error) { return s.clear(ctx, tx, p, RequiresApproval, pr.ID, "") })
}

// maxReviewNote bounds a review's note.
const maxReviewNote = 500

// Review decides on a held payout: release sends it on (or to approval when
// it is over the threshold and not yet approved), reject cancels it with
// failure_code screening_rejected and releases its float. Four-eyes as
// Approve.
func (s *Service) Review(ctx context.Context, cl store.Claim, pr auth.Principal, id, decision, note string) (*Payout, error) {
	if decision != "release" && decision != "reject" {
		if decision == "" {
			return nil, errs.Missing("decision")
		}
		return nil, errs.Invalid("decision", "parameter_invalid", "decision must be release or reject")
	}
	if utf8.RuneCountInString(note) > maxReviewNote {
		return nil, errs.Invalid("note", "parameter_too_long", "note is at most %d characters", maxReviewNote)
	}
	return s.decide(ctx, cl, pr, id, Held, "only a held payout can be reviewed", func(tx *store.Tx, p *Payout) (string, error) {
		if decision == "reject" {
			return "", s.reject(ctx, tx, p, pr.ID, note)
		}
		claimID, err := s.clear(ctx, tx, p, Held, "", pr.ID)
		if err == nil {
			_, err = tx.Exec(ctx, "UPDATE payouts SET review_note = ? WHERE id = ?", store.StringPtr(strPtr(note)), p.ID)
		}
		return claimID, err
	})
}

// decide runs a four-eyes decision on payout id in one transaction: the
// payout must be in status from (else 409, saying only), and the deciding
// principal must not be its creator (403 self_approval_not_allowed); act
// moves it on and returns the dispatch claim of a single payout to send,
// which is sent once the decision has committed. It runs in the request's
// unit of work (cl).
func (s *Service) decide(ctx context.Context, cl store.Claim, pr auth.Principal, id string, from Status, only string,
	act func(tx *store.Tx, p *Payout) (string, error)) (*Payout, error) {
	if p, ok, err := s.resumed(ctx, cl, pr); ok {
		return p, err
	}
	work := s.db.Within(cl)
	// The rail a single payout is sent on is looked up before the decision
	// writes (see sendInline).
	before, err := getPayout(ctx, work, pr.MerchantID, pr.Livemode, id, false)
	if err != nil {
		return nil, err
	}
	var rail providers.PayoutAdapter
	if before.BatchID == nil {
		rail, _ = s.rails.For(ctx, work, before.MerchantID, before.Livemode, before.Provider)
	}
	var p *Payout
	var claimID string
	err = work.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if p, err = getPayout(ctx, tx, pr.MerchantID, pr.Livemode, id, true); err != nil {
			return err
		}
		if p.Status != from {
			return errs.InvalidState("payout %s is %s; %s", p.ID, p.Status, only)
		}
		if err := notSamePerson(ctx, tx, p.CreatedBy, pr.ID, "payout", p.CreatedAt); err != nil {
			return err
		}
		claimID, err = act(tx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	if claimID != "" {
		if err := s.sendInline(ctx, cl, rail, claimID, p); err != nil {
			return nil, err
		}
	}
	return s.reload(ctx, work, p)
}

// clear moves a held or approval-waiting payout on: to requires_approval
// when it still needs an approval, else to processing (single payouts,
// claimed here and sent by the caller after commit) or pending (batch rows).
// approver is set by Approve, reviewer by Review.
func (s *Service) clear(ctx context.Context, tx *store.Tx, p *Payout, from Status, approver, reviewer string) (string, error) {
	now := tx.Now()
	if approver != "" {
		p.ApprovedBy = &approver
	}
	if reviewer != "" && p.Status == Held && p.dispatchAttempts > 0 {
		p.ComplianceCleared = true // the rail held it; the merchant released it
	}
	to := Pending
	var claimID any
	var dispatchAt any = micros(now)
	switch {
	case p.NeedsApproval && p.ApprovedBy == nil:
		to, dispatchAt = RequiresApproval, nil
	case p.BatchID == nil:
		to = Processing
		id := ids.New("clm_")
		claimID = id
		dispatchAt = micros(now.Add(s.lease(p)))
	}
	res, err := tx.Exec(ctx, `UPDATE payouts SET status = ?, approved_by = ?, reviewed_by = COALESCE(?, reviewed_by),
		compliance_cleared = ?, dispatch_at = ?, claim_id = ?, dispatch_attempts = CASE WHEN ? THEN 1 ELSE 0 END, updated_at = ?
		WHERE id = ? AND `+casFrom(to, from), string(to), store.StringPtr(p.ApprovedBy), store.StringPtr(strPtr(reviewer)),
		p.ComplianceCleared, dispatchAt, claimID, claimID != nil, micros(now), p.ID)
	if err != nil {
		return "", err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return "", errs.InvalidState("payout %s changed state meanwhile; retry", p.ID)
	}
	p.Status, p.UpdatedAt = to, now
	if to == Pending {
		tx.AfterCommit(s.wake.Notify)
	}
	if claimID != nil {
		p.dispatchAttempts = 1
		return claimID.(string), nil
	}
	return "", nil
}

// reject cancels a held payout after review and releases its float.
func (s *Service) reject(ctx context.Context, tx *store.Tx, p *Payout, reviewer, note string) error {
	now := tx.Now()
	res, err := tx.Exec(ctx, `UPDATE payouts SET status = 'canceled', failure_code = 'screening_rejected', failure_message = ?,
		reviewed_by = ?, review_note = ?, dispatch_at = NULL, canceled_at = ?, updated_at = ? WHERE id = ? AND `+casFrom(Canceled, Held),
		"the payout was rejected on compliance review", reviewer, store.StringPtr(strPtr(note)), micros(now), micros(now), p.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errs.InvalidState("payout %s changed state meanwhile; retry", p.ID)
	}
	p.Status, p.UpdatedAt = Canceled, now
	p.FailureCode, p.FailureMessage = strPtr("screening_rejected"), strPtr("the payout was rejected on compliance review")
	if _, err := ledger.PostMany(ctx, tx, []ledger.Transaction{releaseTxn(p, kindCanceled)}); err != nil {
		return err
	}
	if _, err := events.EmitMany(ctx, tx, []events.Pending{payoutEvent(p, "payout.canceled")}); err != nil {
		return err
	}
	if p.BatchID != nil {
		return s.batchDelta(ctx, tx, *p.BatchID, delta{canceled: 1, pending: -1})
	}
	return nil
}

// Retry sends a failed payout again under its original reference (the
// rail's idempotency key), reserving its amount again: failed → processing,
// answered at once; the rail's answer arrives asynchronously. scenario is
// the X-Service-Scenario header: in test mode it replaces the scenario the
// payout was made with. It writes in the request's unit of work (cl).
func (s *Service) Retry(ctx context.Context, cl store.Claim, pr auth.Principal, id, scenario string) (*Payout, error) {
	var p *Payout
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		var err error
		if p, err = getPayout(ctx, tx, pr.MerchantID, pr.Livemode, id, true); err != nil {
			return err
		}
		if p.Status != Failed {
			return errs.InvalidState("payout %s is %s; only a failed payout can be retried", p.ID, p.Status)
		}
		if scenario != "" && !pr.Livemode {
			in := &payoutInput{Provider: p.Provider}
			in.resolveScenario(shapeSingle, scenario)
			if err := singleError(in); err != nil {
				return err
			}
			p.Scenario = in.Scenario
		}
		now := tx.Now()
		res, err := tx.Exec(ctx, `UPDATE payouts SET status = 'processing', scenario = ?, failure_code = NULL, failure_message = NULL,
			failed_at = NULL, dispatch_at = ?, dispatch_attempts = 0, claim_id = NULL, retries = retries + 1, updated_at = ?
			WHERE id = ? AND `+casFrom(Processing, Failed), store.StringPtr(strPtr(p.Scenario)), micros(now), micros(now), p.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errs.InvalidState("payout %s changed state meanwhile; retry", p.ID)
		}
		if err := reserve(ctx, tx, p.MerchantID, p.Livemode, kindReserve, p.ID, []*Payout{p}); err != nil {
			return err
		}
		if p.BatchID != nil {
			if err := s.batchDelta(ctx, tx, *p.BatchID, delta{failed: -1, pending: 1}); err != nil {
				return err
			}
		}
		p.Status, p.UpdatedAt = Processing, now
		p.FailureCode, p.FailureMessage, p.FailedAt = nil, nil, nil
		tx.AfterCommit(s.wake.Notify)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The payout as the retry left it: a dispatcher may already be sending it.
	return p, nil
}

// notSamePerson is four-eyes: the approver must be another person than the
// creator (merchants.SamePerson), else 403 self_approval_not_allowed.
func notSamePerson(ctx context.Context, q store.Querier, creator, approver, what string, requestedAt time.Time) error {
	same, err := merchants.SamePerson(ctx, q, creator, approver, requestedAt)
	if err != nil {
		return err
	}
	if same {
		return selfApproval(what)
	}
	return nil
}

// selfApproval is the four-eyes refusal.
func selfApproval(what string) error {
	return errs.Permission("self_approval_not_allowed", "the principal that created this %s cannot approve it; another key or portal user must", what)
}

// railUnavailable is the 503 for a provider with no rail in this mode.
func railUnavailable(provider string, err error) error {
	return &errs.Error{Kind: errs.KindUnavailable, Code: "provider_unavailable",
		Message: "payouts on " + provider + " are not available in this mode", Err: err}
}

// lease is how long a claim on p lasts: the rail's longest call plus the
// configured margin.
func (s *Service) lease(p *Payout) time.Duration {
	a, err := s.rails.For(context.Background(), s.db, p.MerchantID, p.Livemode, p.Provider)
	if err != nil {
		return s.cfg.Lease
	}
	return a.PayoutTimeout() + s.cfg.Lease
}

// insufficient maps the ledger's refusal to the 402.
func insufficient(err error) error {
	if errors.Is(err, ledger.ErrInsufficientFunds) {
		return errs.PaymentRequired("insufficient_balance", "the available balance is lower than the payout amount; nothing was reserved")
	}
	return err
}

// recentByPrincipal sums the single payouts a principal made for a merchant
// in this mode since a time that went ahead without approval (the
// cumulative four-eyes rule): waiting, canceled and failed payouts moved no
// money on that principal's word alone and do not count; batch rows are
// covered by their batch's own rule.
func recentByPrincipal(ctx context.Context, tx *store.Tx, merchantID string, livemode bool, principal string, since time.Time) (int64, error) {
	var sum int64
	err := tx.QueryRow(ctx, `SELECT COALESCE(SUM(amount), 0) FROM payouts
		WHERE merchant_id = ? AND livemode = ? AND created_by = ? AND created_at >= ? AND batch_id IS NULL
		AND approved_by IS NULL AND status NOT IN ('requires_approval', 'canceled', 'failed')`,
		merchantID, livemode, principal, micros(since)).Scan(&sum)
	return sum, err
}
