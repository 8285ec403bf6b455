package payouts

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// Dispatch. A payout waiting for its rail has dispatch_at set: pending ones
// are due at once, processing ones when their claim's lease runs out (or,
// when the rail gave no answer, when their status is due to be asked).
// Workers claim a chunk of due payouts of one batch (or of single payouts)
// in a short transaction that sets a fresh claim id and pushes dispatch_at
// past the lease; they call the rails outside any transaction, bounded in
// concurrency; and they record the answers in transactions whose
// compare-and-set names the claim, so an answer counts only while the claim
// is current and a payout ends once.
//
// A process killed mid-chunk leaves its payouts processing with dispatch_at
// at the lease's end; any dispatcher then claims them again and, because
// they were sent before, first asks the rail what became of them
// (PayoutStatus), sending again under the same idempotency key only if the
// rail never saw them. A payout therefore cannot be paid twice, and its
// ledger posting and events are written once, by the compare-and-set that
// wins.
//
// Claiming a batch's rows first updates the batch row (dispatched = TRUE,
// while it is processing). Cancel updates the same row (only while
// dispatched is FALSE), so a cancel and a first claim serialise on it: either
// the cancel wins and the rows are canceled before anyone claims them, or a
// row is claimed and the cancel answers batch_already_processing.

// claim is a set of payouts claimed together.
type claim struct {
	id      string
	batchID *string
	payouts []*Payout
}

// result is a rail's answer about one payout.
type result struct {
	p       *Payout
	outcome providers.PayoutOutcome
	failure *providers.Failure
	retryIn time.Duration // for PayoutUnknown
	// unsent: the process is shutting down and never sent this payout;
	// its claim is handed back, due at once.
	unsent bool
}

// Run dispatches due payouts until ctx ends: Workers goroutines, each
// claiming and sending one chunk at a time.
func (s *Service) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := 0; i < s.cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.work(ctx)
		}()
	}
	wg.Wait()
}

func (s *Service) work(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for ctx.Err() == nil {
		woken := s.wake.C()
		// The claim is not cut short by a shutdown: a commit interrupted by
		// the cancellation could land without this process knowing it holds
		// the claim, leaving its payouts to the lease. A claim that lands
		// after the signal is handed back at once by process.
		c, err := s.claimNext(context.WithoutCancel(ctx))
		if err != nil && ctx.Err() == nil {
			s.log.Error("claim payouts", "err", err)
		}
		if c != nil {
			s.process(ctx, s.db.Within(store.NoClaim), c)
			continue
		}
		wait := s.cfg.Poll
		if next, ok := s.nextDue(ctx); ok {
			if d := time.Until(next); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		if err != nil {
			wait = s.cfg.Poll
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-woken:
			if !t.Stop() {
				<-t.C
			}
		}
	}
}

// nextDue returns when the earliest waiting payout is due.
func (s *Service) nextDue(ctx context.Context) (time.Time, bool) {
	var next sql.NullInt64
	if err := s.db.QueryRow(ctx, "SELECT MIN(dispatch_at) FROM payouts WHERE dispatch_at IS NOT NULL").Scan(&next); err != nil || !next.Valid {
		return time.Time{}, false
	}
	return store.FromMicros(next.Int64), true
}

// RunOnce claims and dispatches every due payout, synchronously (tests and
// benchmarks); it returns how many payouts it handled.
func (s *Service) RunOnce(ctx context.Context) (int, error) {
	n := 0
	for {
		c, err := s.claimNext(ctx)
		if err != nil || c == nil {
			return n, err
		}
		n += len(c.payouts)
		s.process(ctx, s.db.Within(store.NoClaim), c)
	}
}

// claimNext claims up to Chunk due payouts of the batch (or of the single
// payouts) owning the earliest due one.
func (s *Service) claimNext(ctx context.Context) (*claim, error) {
	var c *claim
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		c = nil
		now := tx.Now()
		var first string
		var batchID sql.NullString
		err := tx.QueryRow(ctx, "SELECT id, batch_id FROM payouts WHERE dispatch_at <= ? ORDER BY dispatch_at LIMIT 1", micros(now)).
			Scan(&first, &batchID)
		if store.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		scope, args := "batch_id IS NULL", []any{}
		if batchID.Valid {
			// The first claim of a batch serialises with cancel (see above);
			// later ones find it dispatched, which no cancel can undo.
			res, err := tx.Exec(ctx, `UPDATE payout_batches SET dispatched = TRUE WHERE id = ? AND status = 'processing' AND dispatched = ?`,
				batchID.String, false)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				var status BatchStatus
				var dispatched bool
				if err := tx.QueryRow(ctx, "SELECT status, dispatched FROM payout_batches WHERE id = ?", batchID.String).Scan(&status, &dispatched); err != nil {
					return err
				}
				if status != BatchProcessing || !dispatched {
					// A cancel won the race for the batch and has canceled its
					// rows. Rows still waiting would be stale (the state
					// machine forbids it): park them so they are not claimed
					// in a loop, and say so.
					res, err := tx.Exec(ctx, "UPDATE payouts SET dispatch_at = ? WHERE batch_id = ? AND dispatch_at IS NOT NULL",
						micros(now.Add(time.Hour)), batchID.String)
					if err != nil {
						return err
					}
					if n, _ := res.RowsAffected(); n > 0 {
						s.log.Error("payouts waiting in a batch that is not processing", "batch_id", batchID.String, "status", status, "payouts", n)
					}
					return nil
				}
			}
			scope, args = "batch_id = ?", []any{batchID.String}
		}
		id := ids.New("clm_")
		leaseUntil := micros(now.Add(s.cfg.Lease + s.maxCall()))
		q := `UPDATE payouts SET status = 'processing', claim_id = ?, dispatch_at = ?, dispatch_attempts = dispatch_attempts + 1, updated_at = ?
			WHERE id IN (SELECT id FROM payouts WHERE ` + scope + ` AND dispatch_at <= ? ORDER BY dispatch_at, id LIMIT ?` +
			tx.Dialect().ForUpdateSkipLocked() + `) AND ` + casFrom(Processing, Pending, Processing) + `
			RETURNING ` + payoutColumns
		qargs := append([]any{id, leaseUntil, micros(now)}, args...)
		qargs = append(qargs, micros(now), s.cfg.Chunk)
		rows, err := tx.Query(ctx, q, qargs...)
		if err != nil {
			return err
		}
		defer rows.Close()
		c = &claim{id: id}
		if batchID.Valid {
			c.batchID = &batchID.String
		}
		for rows.Next() {
			p, err := scanPayout(rows)
			if err != nil {
				return err
			}
			c.payouts = append(c.payouts, p)
		}
		return rows.Err()
	})
	if err != nil || c == nil || len(c.payouts) == 0 {
		return nil, err
	}
	return c, nil
}

// maxCall is the longest rail call in test mode (the sandbox's); live
// adapters state theirs per merchant, covered by the lease margin.
func (s *Service) maxCall() time.Duration {
	if s.rails.Sandbox != nil {
		return s.rails.Sandbox.PayoutTimeout()
	}
	return 0
}

// dispatchInline sends payouts the caller claimed itself (a single payout
// at create, approve or release) and records the answers before returning,
// so the response shows them, in work (the request's unit of work). Nothing
// is lost if it fails: the claim's lease runs out and a dispatcher takes
// over.
func (s *Service) dispatchInline(ctx context.Context, work store.Work, claimID string, ps ...*Payout) {
	s.process(context.WithoutCancel(ctx), work, &claim{id: claimID, batchID: ps[0].BatchID, payouts: ps})
}

// flushWait is how long answers are gathered before they are recorded
// together; answers that come later are recorded in a later transaction.
const flushWait = 10 * time.Millisecond

// process calls the rail for each claimed payout (at most Calls at once) and
// records the answers in few transactions, run in work (a request's unit of
// work for a payout sent inline, alone for a dispatcher's claim).
//
// When ctx ends (the process shuts down), calls already made run to their
// answer (bounded by the rail's timeout) and the answers are recorded; the
// payouts not yet sent are handed back at once, due now, so another process
// sends them without waiting for the claim's lease to run out.
func (s *Service) process(ctx context.Context, work store.Work, c *claim) {
	results := make(chan result, len(c.payouts))
	sem := make(chan struct{}, s.cfg.Calls)
	calls := context.WithoutCancel(ctx)
	go func() {
		for _, p := range c.payouts {
			if ctx.Err() == nil {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				results <- result{p: p, unsent: true}
				continue
			}
			go func(p *Payout) {
				defer func() { <-sem }()
				results <- s.call(calls, p)
			}(p)
		}
	}()
	remaining := len(c.payouts)
	for remaining > 0 {
		buf := []result{<-results}
		remaining--
		deadline := time.NewTimer(flushWait)
	gather:
		for remaining > 0 {
			select {
			case r := <-results:
				buf = append(buf, r)
				remaining--
			case <-deadline.C:
				break gather
			}
		}
		deadline.Stop()
		if err := s.record(calls, work, c, buf); err != nil {
			s.log.Error("record payout outcomes", "claim", c.id, "payouts", len(buf), "err", err)
		}
	}
}

// call asks the rail about one payout: a payout sent before (a claim that
// outlived its lease, or a status check after no answer) is first looked up,
// and sent again under the same key only when the rail never saw it.
func (s *Service) call(ctx context.Context, p *Payout) result {
	a, err := s.rails.For(ctx, s.db, p.MerchantID, p.Livemode, p.Provider)
	if err != nil {
		return result{p: p, outcome: providers.PayoutUnknown, retryIn: s.backoff(p)}
	}
	req := providers.PayoutRequest{IdempotencyKey: p.idempotencyKey(), Provider: p.Provider, Amount: p.Amount,
		Currency: p.Currency, RecipientMSISDN: deref(p.RecipientMSISDN), RecipientAccount: deref(p.RecipientAccount),
		RecipientName: deref(p.RecipientName), Description: deref(p.Description),
		ComplianceCleared: p.ComplianceCleared, Scenario: p.Scenario}
	cctx, cancel := context.WithTimeout(ctx, a.PayoutTimeout())
	defer cancel()
	var res providers.PayoutResult
	if p.dispatchAttempts > 1 {
		res, err = a.PayoutStatus(cctx, req)
		if err == nil && res.Outcome != providers.PayoutUnknown {
			return s.resultOf(p, res)
		}
	}
	res, err = a.SendPayout(cctx, req)
	if err != nil {
		s.log.Warn("payout rail call failed", "payout_id", p.ID, "provider", p.Provider, "err", err)
		return result{p: p, outcome: providers.PayoutUnknown, retryIn: s.backoff(p)}
	}
	return s.resultOf(p, res)
}

func (s *Service) resultOf(p *Payout, res providers.PayoutResult) result {
	r := result{p: p, outcome: res.Outcome, failure: res.Failure}
	switch res.Outcome {
	case providers.PayoutSucceeded, providers.PayoutHeld:
	case providers.PayoutFailed:
		if r.failure == nil {
			r.failure = &providers.Failure{Code: "provider_error", Message: "the provider refused the payout"}
		}
	default:
		r.outcome, r.retryIn = providers.PayoutUnknown, s.backoff(p)
	}
	return r
}

// backoff is how long an unanswered payout waits before its status is
// asked: ReconcileAfter, doubling per attempt, at most an hour.
func (s *Service) backoff(p *Payout) time.Duration {
	d := s.cfg.ReconcileAfter
	for i := 1; i < p.dispatchAttempts && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// record writes the answers of one claim in one transaction: each payout's
// compare-and-set (valid only while the claim is current), its ledger
// posting, its event, and the batch's counters.
func (s *Service) record(ctx context.Context, work store.Work, c *claim, rs []result) error {
	return work.InTx(ctx, func(tx *store.Tx) error {
		now := tx.Now()
		var txns []ledger.Transaction
		var evs []events.Pending
		var d delta
		groups := map[string][]result{}
		var order []string
		for _, r := range rs {
			if r.unsent {
				// Handed back: due now, and the claim's attempt uncounted
				// (it was never sent, so the next claim need not ask the
				// rail about it first).
				if _, err := tx.Exec(ctx, `UPDATE payouts SET dispatch_at = ?, dispatch_attempts = dispatch_attempts - 1, updated_at = ?
					WHERE id = ? AND claim_id = ? AND status = 'processing'`, micros(now), micros(now), r.p.ID, c.id); err != nil {
					return err
				}
				continue
			}
			k := string(r.outcome)
			if r.failure != nil {
				k += "\x00" + r.failure.Code + "\x00" + r.failure.Message
			}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], r)
		}
		for _, k := range order {
			g := groups[k]
			won, err := s.applyGroup(ctx, tx, c, g, now)
			if err != nil {
				return err
			}
			for _, r := range g {
				if !won[r.p.ID] {
					continue
				}
				p := *r.p
				p.UpdatedAt = now
				switch r.outcome {
				case providers.PayoutSucceeded:
					p.Status, p.SucceededAt = Succeeded, &now
					txns = append(txns, paidTxn(&p))
					evs = append(evs, payoutEvent(&p, "payout.succeeded"))
					d.succeeded++
					d.pending--
				case providers.PayoutFailed:
					p.Status, p.FailedAt = Failed, &now
					p.FailureCode, p.FailureMessage = strPtr(r.failure.Code), strPtr(r.failure.Message)
					txns = append(txns, releaseTxn(&p, kindFailed))
					evs = append(evs, payoutEvent(&p, "payout.failed"))
					d.failed++
					d.pending--
				case providers.PayoutHeld:
					p.Status = Held
					evs = append(evs, payoutEvent(&p, "payout.held"))
				}
				s.metrics.outcomes.WithLabelValues(string(r.outcome)).Inc()
			}
		}
		// Events first, the ledger (whose balance rows concurrent records
		// wait for) and the batch's counters last.
		if _, err := events.EmitMany(ctx, tx, evs); err != nil {
			return err
		}
		if _, err := ledger.PostMany(ctx, tx, txns); err != nil {
			return err
		}
		if c.batchID != nil && (d.succeeded != 0 || d.failed != 0) {
			return s.batchDelta(ctx, tx, *c.batchID, d)
		}
		return nil
	})
}

// applyGroup applies one outcome to payouts of a claim with one
// compare-and-set statement and returns the ids it moved.
func (s *Service) applyGroup(ctx context.Context, tx *store.Tx, c *claim, g []result, now time.Time) (map[string]bool, error) {
	ids := make([]string, len(g))
	for i, r := range g {
		ids[i] = r.p.ID
	}
	var q string
	var args []any
	r0 := g[0]
	switch r0.outcome {
	case providers.PayoutSucceeded:
		q = `UPDATE payouts SET status = 'succeeded', succeeded_at = ?, dispatch_at = NULL, claim_id = NULL, updated_at = ?
			WHERE claim_id = ? AND ` + casFrom(Succeeded, Processing)
		args = []any{micros(now), micros(now), c.id}
	case providers.PayoutFailed:
		q = `UPDATE payouts SET status = 'failed', failure_code = ?, failure_message = ?, failed_at = ?, dispatch_at = NULL,
			claim_id = NULL, updated_at = ? WHERE claim_id = ? AND ` + casFrom(Failed, Processing)
		args = []any{r0.failure.Code, r0.failure.Message, micros(now), micros(now), c.id}
	case providers.PayoutHeld:
		q = `UPDATE payouts SET status = 'held', dispatch_at = NULL, claim_id = NULL, updated_at = ?
			WHERE claim_id = ? AND ` + casFrom(Held, Processing)
		args = []any{micros(now), c.id}
	default:
		// No answer: stay processing under this claim, and ask again later.
		won := map[string]bool{}
		for _, r := range g {
			res, err := tx.Exec(ctx, "UPDATE payouts SET dispatch_at = ?, updated_at = ? WHERE id = ? AND claim_id = ? AND status = 'processing'",
				micros(now.Add(r.retryIn)), micros(now), r.p.ID, c.id)
			if err != nil {
				return nil, err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				won[r.p.ID] = true
			}
		}
		return won, nil
	}
	won := map[string]bool{}
	for start := 0; start < len(ids); start += insertChunk {
		part := ids[start:min(start+insertChunk, len(ids))]
		ph, in := store.PaddedIn(part)
		rows, err := tx.Query(ctx, q+" AND id IN ("+ph+") RETURNING id", append(args, in...)...)
		if err != nil {
			return nil, err
		}
		if err := store.AddIDs(rows, won); err != nil {
			return nil, err
		}
	}
	return won, nil
}

// signal wakes every waiting dispatcher at once.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func newSignal() *signal { return &signal{ch: make(chan struct{})} }

// C returns a channel closed by the next Notify.
func (s *signal) C() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

// Notify wakes everyone waiting on C.
func (s *signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.ch)
	s.ch = make(chan struct{})
}
