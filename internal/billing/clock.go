package billing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/store"
)

// A billing run moves every subscription and invoice of one time line (a
// test clock, or the real time for customers without one) up to an
// instant. Each round makes, for every subscription, its earliest due
// step: first the payment attempts due no later than their subscription's
// period end, then the period starts whose earlier attempts are all made.
// Steps of different subscriptions are independent, so this is every
// subscription's steps in time order, done in batches: a round claims up to
// ChunkSize rows per transaction (FOR UPDATE SKIP LOCKED on PostgreSQL, so
// several runners split the work), and writes each step as a
// compare-and-set with its events. A run that stops half-way (a crash)
// leaves only whole steps behind; running it again makes the rest, and the
// unique (subscription, period_start) index is the last guard against a
// period billed twice.

// timeline is what one run moves.
type timeline struct {
	clock *string   // nil: customers without a test clock
	until time.Time // the instant to bill up to
}

// cond is the SQL condition selecting the time line's rows of a table
// aliased alias.
func (tl timeline) cond(alias string) (string, []any) {
	if tl.clock == nil {
		return alias + ".test_clock_id IS NULL", nil
	}
	return alias + ".test_clock_id = ?", []any{*tl.clock}
}

// Lease is how long a claimed attempt is its runner's before another run
// may make it again (the runner died between the claim and the intent).
var Lease = 2 * time.Minute

// errStopped is what a test's failAfter stops a run with.
var errStopped = errors.New("billing: run stopped (test)")

// run makes every step due on tl, round after round, until none is left.
func (s *Service) run(ctx context.Context, tl timeline) error {
	for {
		attempts, err := s.attemptRound(ctx, tl)
		if err != nil {
			return err
		}
		periods, err := s.periodRound(ctx, tl)
		if err != nil {
			return err
		}
		if attempts+periods == 0 {
			return nil
		}
		if periods >= AnalyzeAfter {
			// The invoices just opened are open rows the planner's
			// statistics do not know of yet: with them unseen, PostgreSQL
			// reads every open invoice (a partial index it believes
			// nearly empty) in each chunk's compare-and-set, a cost that
			// grows with the run. Autovacuum would analyze the table a
			// minute or so later; the attempts are claimed now.
			if err := s.db.Analyze(ctx, "invoices", "subscriptions"); err != nil {
				return err
			}
		}
	}
}

// AnalyzeAfter is how many periods a round opens at least before the run
// refreshes the planner's statistics of invoices and subscriptions
// (PostgreSQL; SQLite plans without statistics). It costs a sample of each
// table, about the same at any size.
var AnalyzeAfter = 5000

// periodRound opens every period due on tl, ChunkSize subscriptions per
// transaction, and returns how many subscriptions it moved. On PostgreSQL
// s.Workers chunks are claimed and written at once (FOR UPDATE SKIP LOCKED
// gives each its own rows); SQLite has one writer, and one worker. The
// workers share one keyset position: each chunk's scan starts after the
// last subscription claimed in this round.
func (s *Service) periodRound(ctx context.Context, tl timeline) (int, error) {
	var total atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	var pos sharedKeyset
	for range max(s.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := s.periodChunk(ctx, tl, &pos)
				total.Add(int64(n))
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				if n < s.ChunkSize {
					return
				}
			}
		}()
	}
	wg.Wait()
	return int(total.Load()), first
}

// keyset is how far a round's scan of due rows has got: the sort key
// (a time) and id of the last row claimed. Each chunk's scan starts after
// it, so no chunk walks again the rows (and, on PostgreSQL, the dead index
// entries of their old versions) that the earlier chunks of the round
// moved: a round costs its rows once, where a scan from the start each
// chunk cost the rows moved so far, again and again. A row passed over
// (one a request held locked) waits for the next round, which starts from
// the beginning.
type keyset struct {
	set bool
	at  int64
	id  string
}

// after is the keyset condition on the columns at and id (table
// qualified), with its arguments; empty at the round's start.
func (k keyset) after(at, id string) (string, []any) {
	if !k.set {
		return "", nil
	}
	return " AND (" + at + ", " + id + ") > (?, ?)", []any{k.at, k.id}
}

// advance moves the position to (at, id) if that is further.
func (k *keyset) advance(at int64, id string) {
	if !k.set || at > k.at || (at == k.at && id > k.id) {
		k.set, k.at, k.id = true, at, id
	}
}

// sharedKeyset is a keyset the workers of a round share.
type sharedKeyset struct {
	mu sync.Mutex
	k  keyset
}

func (s *sharedKeyset) get() keyset {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.k
}

func (s *sharedKeyset) advance(at int64, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.k.advance(at, id)
}

// periodChunk opens the periods of up to ChunkSize due subscriptions in
// one transaction.
func (s *Service) periodChunk(ctx context.Context, tl timeline, pos *sharedKeyset) (int, error) {
	if s.failAfter != nil && s.failAfter() {
		return 0, errStopped
	}
	n := 0
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.PreferIndexOrder(ctx); err != nil {
			return err
		}
		subs, err := duePeriods(ctx, tx, tl, pos.get(), s.ChunkSize)
		if err != nil {
			return err
		}
		n = len(subs)
		if n > 0 {
			// The rows are locked until this transaction ends: the other
			// workers' scans may start after them at once.
			last := subs[n-1]
			pos.advance(store.Micros(last.CurrentPeriodEnd), last.ID)
		}
		return s.openPeriods(ctx, tx, subs)
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// duePeriods claims subscriptions on tl whose current period has ended by
// tl.until and that have no automatic attempt due before that end, from
// pos on, in the order of the index subscriptions_due_keyset (time line,
// period end, id). The check is a scalar subquery on purpose: written as
// NOT EXISTS, PostgreSQL may plan it as an anti-join over every open
// invoice (its statistics see few while a run opens thousands), which made
// each chunk's claim cost grow with the run; as a subquery it is one index
// probe per row (invoices_open_by_subscription). The ORDER BY is the
// index's own (test_clock_id first, though it is fixed, so that PostgreSQL
// sees the order with test_clock_id IS NULL too): no sort, and the scan
// stops at the limit.
func duePeriods(ctx context.Context, tx *store.Tx, tl timeline, pos keyset, limit int) ([]*Subscription, error) {
	q, args := duePeriodsQuery(tx.Dialect(), tl, pos, limit)
	return scanSubs(tx.Query(ctx, q, args...))
}

// duePeriodsQuery is duePeriods' statement and arguments.
func duePeriodsQuery(d store.Dialect, tl timeline, pos keyset, limit int) (string, []any) {
	c, args := tl.cond("s")
	k, kargs := pos.after("s.current_period_end", "s.id")
	args = append(append(append(args, store.Micros(tl.until)), kargs...), limit)
	return "SELECT " + subColumns + ` FROM subscriptions s WHERE ` + c + ` AND s.status <> 'canceled' AND s.current_period_end <= ?` + k + `
		AND (SELECT COUNT(*) FROM invoices i WHERE i.subscription_id = s.id AND i.status = 'open'
			AND (i.next_payment_attempt <= s.current_period_end OR i.attempt_claimed_until IS NOT NULL)) = 0
		ORDER BY s.test_clock_id, s.current_period_end, s.id LIMIT ?` + d.ForUpdateSkipLocked(), args
}

// openPeriods moves each claimed subscription to its next period (or ends
// it, when it was to cancel at period end) and inserts the periods'
// invoices, with every event, in tx.
func (s *Service) openPeriods(ctx context.Context, tx *store.Tx, subs []*Subscription) error {
	if len(subs) == 0 {
		return nil
	}
	customers, err := customersOf(ctx, tx, subs)
	if err != nil {
		return err
	}
	var invs []*Invoice
	var evs []events.Pending
	rows := make([][]any, 0, len(subs))
	now := store.Micros(tx.Now())
	for _, sub := range subs {
		// startPeriod and cancelSub leave from the same states.
		if !subAllowed(startPeriod, sub.Status) {
			return fmt.Errorf("billing: subscription %s is %s and cannot start a period", sub.ID, sub.Status)
		}
		if sub.CancelAtPeriodEnd {
			end := sub.CurrentPeriodEnd
			sub.Status, sub.CanceledAt, sub.EndedAt = Canceled, &end, &end
			rows = append(rows, subRow(sub, now))
			evs = append(evs, subEvent(sub, EventSubscriptionDeleted, stepOnClock(sub.TestClock, end)))
			continue
		}
		inv := s.nextPeriod(sub, customers[sub.Customer], ReasonSubscriptionCycle)
		rows = append(rows, subRow(sub, now))
		invs = append(invs, inv)
		evs = append(evs, subEvent(sub, EventSubscriptionUpdated, stepOnClock(sub.TestClock, sub.CurrentPeriodStart)))
	}
	ph, sargs := inList(startPeriod.from)
	moved, err := setMany(ctx, tx, "subscriptions", subMutable, rows, "subscriptions.status IN ("+ph+")", sargs...)
	if err != nil {
		return err
	}
	if len(moved) != len(rows) {
		return skipLost(errLostRace)
	}
	for _, sub := range subs {
		sub.version++
	}
	if len(invs) > 0 {
		if err := insertInvoices(ctx, tx, invs); err != nil {
			return err
		}
	}
	for _, inv := range invs {
		v := s.view(inv)
		at := stepOnClock(inv.TestClock, inv.EffectiveAt) // the period's start
		evs = append(evs, ev(inv, EventInvoiceCreated, v, at), ev(inv, EventInvoiceFinalized, v, at))
		if inv.Status == Paid {
			evs = append(evs, ev(inv, EventInvoicePaid, v, at))
		}
	}
	_, err = events.EmitMany(ctx, tx, evs)
	return err
}

// skipLost turns a lost compare-and-set into an error that rolls the chunk
// back: its rows were claimed FOR UPDATE, so only a concurrent request (a
// cancel, an item change) can have moved one; the next round retries.
func skipLost(err error) error {
	if errors.Is(err, errLostRace) {
		return fmt.Errorf("billing: a subscription changed during its period start; retried: %w", err)
	}
	return err
}

// subEvent is an event about sub at onClock, the time on its test clock of
// the step that emits it (nil: the real time).
func subEvent(sub *Subscription, typ string, onClock *time.Time) events.Pending {
	return events.Pending{MerchantID: sub.MerchantID, Livemode: sub.Livemode, Type: typ, ObjectType: "subscription", ObjectID: sub.ID, Object: *sub, OnClock: onClock}
}

// customersOf loads the customers of subs (deleted ones too: their
// subscriptions are canceled, but a period may be opening as they go).
func customersOf(ctx context.Context, tx *store.Tx, subs []*Subscription) (map[string]*Customer, error) {
	ids := make([]string, len(subs))
	for i, s := range subs {
		ids[i] = s.Customer
	}
	return customersByID(ctx, tx, ids, true)
}

// attemptRound claims and makes every automatic attempt due on tl (and
// re-makes attempts whose claim expired with no intent), ChunkSize per
// claim, and returns how many it made.
func (s *Service) attemptRound(ctx context.Context, tl timeline) (int, error) {
	total := 0
	var pos attemptScan
	for {
		if s.failAfter != nil && s.failAfter() {
			return total, errStopped
		}
		var claimed []*Invoice
		var next attemptScan
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.PreferIndexOrder(ctx); err != nil {
				return err
			}
			var err error
			next = pos
			claimed, err = s.claimAttempts(ctx, tx, tl, s.ChunkSize, &next)
			return err
		})
		if err != nil {
			return total, err
		}
		pos = next
		if err := s.attemptAll(ctx, claimed); err != nil {
			return total, err
		}
		total += len(claimed)
		if len(claimed) < s.ChunkSize {
			return total, nil
		}
	}
}

// attemptScan is how far an attempt round's two scans have got: the
// expired claims until one comes back short, then the due attempts. Each
// is a keyset (see keyset): a claim's scan starts after the last row the
// round claimed, not at the beginning.
type attemptScan struct {
	expiredDone bool
	expired     keyset // on attempt_claimed_until, id
	due         keyset // on next_payment_attempt, id
}

// claimAttempts claims due attempts in tx, from pos on (which it
// advances): attempt_count goes up, the due time is kept as attempt_due
// (the attempt's moment on the time line), and the claim holds for Lease
// of real time.
func (s *Service) claimAttempts(ctx context.Context, tx *store.Tx, tl timeline, limit int, pos *attemptScan) ([]*Invoice, error) {
	now := tx.Now()
	// Two scans, each stopping at the limit: claims left expired by a
	// runner that died (the round stops looking once this scan comes back
	// short: its own claims are not expired), then attempts due.
	var invs []*Invoice
	if !pos.expiredDone {
		q, args := expiredClaimsQuery(tx.Dialect(), tl, now, pos.expired, limit)
		var err error
		invs, err = scanInvoices(tx.Query(ctx, q, args...))
		if err != nil {
			return nil, err
		}
		if len(invs) < limit {
			pos.expiredDone = true
		}
		if len(invs) > 0 {
			last := invs[len(invs)-1]
			pos.expired.advance(store.Micros(*last.attemptClaimedUntil), last.ID)
		}
	}
	if len(invs) < limit {
		q, qargs := dueAttemptsQuery(tx.Dialect(), tl, pos.due, limit-len(invs))
		due, err := scanInvoices(tx.Query(ctx, q, qargs...))
		if err != nil {
			return nil, err
		}
		if len(due) > 0 {
			last := due[len(due)-1]
			pos.due.advance(store.Micros(*last.NextPaymentAttempt), last.ID)
		}
		invs = append(invs, due...)
	}
	if len(invs) == 0 {
		return nil, nil
	}
	until := now.Add(Lease)
	batch := make([][]any, len(invs))
	for i, v := range invs {
		if v.attemptClaimedUntil == nil { // a new attempt; else an expired claim made again
			due := *v.NextPaymentAttempt
			v.AttemptCount++
			v.attemptDue, v.NextPaymentAttempt = &due, nil
		}
		v.attemptClaimedUntil = &until
		batch[i] = invRow(v, store.Micros(now))
	}
	claimed, err := setMany(ctx, tx, "invoices", invMutable, batch, "invoices.status = 'open'")
	if err != nil {
		return nil, err
	}
	out := invs[:0]
	for _, v := range invs {
		if claimed[v.ID] { // else another runner or a request moved it first
			v.version++
			out = append(out, v)
		}
	}
	return out, nil
}

// expiredClaimsQuery is the statement, and its arguments, that claims up
// to limit attempts on tl whose claim expired before now, from pos on, in
// the order of the index invoices_claims_keyset (time line,
// attempt_claimed_until, id).
func expiredClaimsQuery(d store.Dialect, tl timeline, now time.Time, pos keyset, limit int) (string, []any) {
	c, args := tl.cond("i")
	k, kargs := pos.after("i.attempt_claimed_until", "i.id")
	args = append(append(append(args, store.Micros(now)), kargs...), limit)
	return "SELECT " + invColumns + ` FROM invoices i WHERE ` + c + ` AND i.status = 'open'
		AND i.attempt_claimed_until IS NOT NULL AND i.attempt_claimed_until < ?` + k + `
		ORDER BY i.test_clock_id, i.attempt_claimed_until, i.id LIMIT ?` + d.ForUpdateSkipLocked(), args
}

// dueAttemptsQuery is the statement, and its arguments, that claims up to
// limit automatic attempts due on tl from pos on, in the order of the index
// invoices_attempts_keyset (time line, next_payment_attempt, id): no sort,
// and the scan stops at the limit. An attempt waits for its subscription's
// period to open first when it is due after that period's end.
func dueAttemptsQuery(d store.Dialect, tl timeline, pos keyset, limit int) (string, []any) {
	c, args := tl.cond("i")
	k, kargs := pos.after("i.next_payment_attempt", "i.id")
	args = append(append(append(args, store.Micros(tl.until)), kargs...), limit)
	return "SELECT " + invColumns + ` FROM invoices i WHERE ` + c + ` AND i.status = 'open'
		AND i.next_payment_attempt <= ?` + k + ` AND (i.subscription_id IS NULL OR i.next_payment_attempt <=
			(SELECT s.current_period_end FROM subscriptions s WHERE s.id = i.subscription_id))
		ORDER BY i.test_clock_id, i.next_payment_attempt, i.id LIMIT ?` + d.ForUpdateSkipLocked(), args
}

// ClockJob is the periodic job of the real-time billing clock: it bills
// every customer without a test clock up to now. One process at a time
// runs it (a periodic job is one row); the compare-and-sets make a second
// runner harmless anyway.
const ClockJob = "billing.clock"

// ClockInterval is how often the real-time billing clock runs.
const ClockInterval = 15 * time.Second

// RunClockJob handles ClockJob.
func (s *Service) RunClockJob(ctx context.Context, _ jobs.Job) error {
	return s.run(ctx, timeline{until: s.db.Now()})
}

// RunAttemptJob handles AttemptJob: it makes the attempt of one invoice a
// request opened, if it is still due on its time line (the billing clock,
// or the test clock's advance, may have made it).
func (s *Service) RunAttemptJob(ctx context.Context, job jobs.Job) error {
	var pl attemptPayload
	if err := json.Unmarshal(job.Payload, &pl); err != nil || pl.Invoice == "" {
		return fmt.Errorf("billing: attempt job %s has a bad payload", job.ID)
	}
	var claimed []*Invoice
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		v, err := scanInvoice(tx.QueryRow(ctx, "SELECT "+invColumns+" FROM invoices WHERE id = ?", pl.Invoice))
		if store.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if v.Status != Open || v.NextPaymentAttempt == nil {
			return nil
		}
		// Due on the invoice's own time line: the clock's time for a
		// customer on a test clock, the real time otherwise.
		now, err := nowFor(ctx, tx, v.MerchantID, v.Livemode, v.TestClock, tx.Now())
		if err != nil {
			if e := errs.As(err); e != nil && e.Kind == errs.KindNotFound {
				return nil // the clock is gone (deleted with its objects)
			}
			return err
		}
		if v.NextPaymentAttempt.After(now) {
			return nil
		}
		due := *v.NextPaymentAttempt
		v.AttemptCount++
		until := tx.Now().Add(Lease)
		v.attemptDue, v.NextPaymentAttempt, v.attemptClaimedUntil = &due, nil, &until
		if err := updateInvoice(ctx, tx, v, "status = 'open' AND attempt_claimed_until IS NULL"); err != nil {
			if errors.Is(err, errLostRace) {
				return nil
			}
			return err
		}
		claimed = append(claimed, v)
		return nil
	})
	if err != nil {
		return err
	}
	err = s.attemptAll(ctx, claimed)
	// An advance of the invoice's test clock that ran while this attempt
	// was claimed left the clock advancing (a claimed attempt is still a
	// step due); with the attempt made, finish it.
	for _, v := range claimed {
		if v.TestClock == nil {
			continue
		}
		if aerr := s.RunAdvance(ctx, *v.TestClock); err == nil {
			err = aerr
		}
	}
	return err
}
