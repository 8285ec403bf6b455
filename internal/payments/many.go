package payments

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// NewIntent is one intent for CreateMany: whose it is and what Create
// would be given.
type NewIntent struct {
	Principal auth.Principal
	Params    CreateParams
	// OnClock is the test clock's time the intent is made at, when a test
	// clock's advance makes it (billing): its created_at, and its events',
	// as shown. nil: the real time.
	OnClock *time.Time
}

// Created is CreateMany's answer for one NewIntent: what Create would have
// returned for it.
type Created struct {
	Intent Intent
	Err    error
}

// insertChunk bounds the rows of one multi-row INSERT of intents (25
// parameters each).
const insertChunk = 200

// CreateMany creates many payment intents at once, for background work
// that starts thousands together (a billing run). Each is validated,
// given to its provider and recorded exactly as Create does it, and the
// answers are Create's. What differs is the cost: the intents of local
// providers (the sandbox) are written together in one transaction, with
// multi-row inserts of the rows and their events, the batch form of each
// status hook (OnStatusBatch) and one ledger.PostMany for the credits, so
// the merchant's balance rows are locked once per batch instead of once
// per payment. Remote providers' intents go through Create one by one,
// each with its own recovery point.
//
// If the batch's transaction fails on something other than the database
// itself (a hook or a ledger guard refusing one intent), each local intent
// is recorded again in its own transaction, so one bad intent fails alone.
// A database failure is returned as err; then no local intent was
// written.
func (s *Service) CreateMany(ctx context.Context, in []NewIntent) ([]Created, error) {
	out := make([]Created, len(in))
	type local struct {
		i   int
		r   *record
		res providers.Result
	}
	var batch []local
	ctx = context.WithoutCancel(ctx)
	for i, n := range in {
		r, adapter, err := s.prepare(ctx, s.db, n.Principal, n.Params)
		if err != nil {
			out[i].Err = err
			continue
		}
		r.clockCreatedAt = n.OnClock
		if adapter.Remote() {
			out[i].Intent, out[i].Err = s.createRemote(ctx, store.NoClaim, n.Principal, adapter, r)
			continue
		}
		res, err := adapter.Initiate(ctx, r.payment())
		if err != nil {
			out[i].Err = fmt.Errorf("initiate %s payment: %w", r.Provider, err)
			continue
		}
		batch = append(batch, local{i, r, res})
	}
	if len(batch) == 0 {
		return out, nil
	}
	recs := make([]*record, len(batch))
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		trans := make([]transition, len(batch))
		for k, b := range batch {
			r := *b.r
			t, err := applyResult(&r, b.res, tx.Now())
			if err != nil {
				return err
			}
			recs[k], trans[k] = &r, t
		}
		if err := insertMany(ctx, tx, recs); err != nil {
			return err
		}
		return s.effectsMany(ctx, tx, recs, trans, func(k int) providers.Result { return batch[k].res })
	})
	if store.IsConnLost(err) {
		return nil, err
	}
	if err != nil {
		s.batchFallbacks.Add(1)
		s.log.Warn("payments: a batch of intents failed; recording each alone", "intents", len(batch), "err", err)
		for _, b := range batch {
			out[b.i].Intent, out[b.i].Err = s.recordNew(ctx, s.db.Within(store.NoClaim), b.r, b.res)
		}
		return out, nil
	}
	for k, b := range batch {
		out[b.i].Intent, out[b.i].Err = answer(recs[k], b.res)
	}
	return out, nil
}

// effectsMany writes what effects writes for each new intent, with
// multi-row statements: the created and transition events, the batch
// hooks, and the credits of the successes.
func (s *Service) effectsMany(ctx context.Context, tx *store.Tx, recs []*record, trans []transition, res func(int) providers.Result) error {
	evs := make([]events.Pending, 0, 2*len(recs))
	for _, r := range recs {
		evs = append(evs, events.Pending{MerchantID: r.MerchantID, Livemode: r.Livemode, Type: EventCreated, ObjectType: "payment_intent", ObjectID: r.ID, Object: r.view(), OnClock: r.clockCreatedAt})
	}
	var credits []ledger.Transaction
	views := make([]Intent, len(recs))
	for k, r := range recs {
		rs, t := res(k), trans[k]
		if rs.FailFirstWebhook {
			if err := events.MarkWebhookFail(ctx, tx, r.ID); err != nil {
				return err
			}
		}
		if t.Event() != "" {
			evs = append(evs, events.Pending{MerchantID: r.MerchantID, Livemode: r.Livemode, Type: t.Event(), ObjectType: "payment_intent", ObjectID: r.ID, Object: r.view(), OnClock: r.clockCreatedAt})
		}
		if t.To == RequiresAction && rs.PollAfter > 0 {
			if err := s.schedulePoll(ctx, tx, r.ID, tx.Now().Add(rs.PollAfter)); err != nil {
				return err
			}
		}
		if t.To == Succeeded && r.AmountCapturedMinor > 0 {
			credits = append(credits, creditTransaction(r))
		}
		views[k] = r.view()
	}
	if _, err := events.EmitMany(ctx, tx, evs); err != nil {
		return err
	}
	for _, h := range s.hooks {
		if h.many != nil {
			if err := h.many(ctx, tx, views); err != nil {
				return err
			}
			continue
		}
		for _, v := range views {
			if err := h.one(ctx, tx, v); err != nil {
				return err
			}
		}
	}
	_, err := ledger.PostMany(ctx, tx, credits)
	return err
}

// insertMany writes new intents with multi-row INSERTs.
func insertMany(ctx context.Context, tx *store.Tx, recs []*record) error {
	for start := 0; start < len(recs); start += insertChunk {
		end := min(start+insertChunk, len(recs))
		var q strings.Builder
		q.WriteString(insertIntents)
		args := make([]any, 0, (end-start)*25)
		for i := start; i < end; i++ {
			if i > start {
				q.WriteString(", ")
			}
			q.WriteString(insertIntentRow)
			args = append(args, insertArgs(recs[i])...)
		}
		if _, err := tx.Exec(ctx, q.String(), args...); err != nil {
			return err
		}
	}
	return nil
}
