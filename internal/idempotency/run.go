package idempotency

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"

	"github.com/payd/payd/internal/store"
)

// MaxRuns bounds how often one idempotent request is run again because its
// unit of work met a transient conflict (a deadlock, a serialization
// failure) before anything of it committed, or read its key first. Options'
// Again may bound the runs more tightly, and bounds those after a lost
// connection otherwise.
const MaxRuns = 8

// Options are how a front (the API, the portal) runs its idempotent
// requests through Run.
type Options struct {
	// AtOnce claims the key in the round trip that begins the transaction
	// (StartClaimed), where the engine has concurrent writers; otherwise
	// the key's row is written by the request's own writes.
	AtOnce bool
	// LookFirst reads the key before the first run too (Lookup then
	// Start); without it the first run is unread (StartUnread) and every
	// later run reads its key first.
	LookFirst bool
	// Again reports whether a run that failed transiently (err; nothing of
	// it committed past its recovery points) runs again; run is 1-based.
	// It may pause first. Nil: run < MaxRuns.
	Again func(run int, err error) bool
	// Logger receives a line for each run run again; nil logs nothing.
	Logger *slog.Logger
}

func (o Options) again(run int, err error) bool {
	if o.Again == nil {
		return run < MaxRuns
	}
	return o.Again(run, err)
}

func (o Options) log(level slog.Level, msg string, args ...any) {
	if o.Logger != nil {
		o.Logger.Log(context.Background(), level, msg, args...)
	}
}

// Answer is one run's answer: what the caller would send, as it is stored
// under the key, and whether it becomes the key's stored answer (Keep). An
// answer not kept rolls the run back: nothing of it remains after its last
// recovery point, and a retry runs it again.
type Answer struct {
	Stored
	Keep bool
}

// Stage says where a request that ends with an error (Outcome.Err) failed.
type Stage int

const (
	// StageClaim: reading the key or beginning the unit of work failed.
	StageClaim Stage = iota + 1
	// StageRun: the run failed without an answer (its function's error).
	StageRun
	// StageFinish: storing and committing the answer failed.
	StageFinish
	// StageRefused: another run holds the key (409) or it was used for
	// another request (422); Err is that error, the request's answer.
	StageRefused
	// StageAgain: the run needed running again and Options.Again said no;
	// Err is the last run's failure.
	StageAgain
)

// Outcome is how an idempotent request ended: exactly one of Replay (an
// answer another run stored, to be sent with Idempotent-Replayed: true),
// Answered (the last run's own answer, committed when kept: send it) and
// Err (with Stage) is set.
type Outcome struct {
	Replay   *Stored
	Answered bool
	Err      error
	Stage    Stage
}

// Run owns one idempotent request from its claim to its answer: it claims
// req's key, runs fn as one unit of work under the claim (the key's row,
// everything fn writes and fn's answer commit in one transaction), and
// settles it: a kept answer is stored with the effect (Claim.Finish), an
// answer not kept rolls back, a stored answer of the same request is
// returned to replay, and a refusal (409 idempotency_key_in_use, 422
// idempotency_key_reused) is returned as Err.
//
// A run whose unit of work met a transient failure before anything of it
// committed (a deadlock, a lost connection, a commit whose outcome is
// unknown: the key then tells whether it committed), or that met a key row
// only a read beforehand can act on (LookFirst), is run again as
// Options.Again allows, reading its key first. A run that committed a
// recovery point and did not commit its answer releases its lease before
// the next run reads the key, so that run resumes from the point (or
// replays the answer, had it committed). A run undone by another request's
// rollback (SQLite group commit, store.IsGroupAborted) runs again careful
// (Request.Careful). Should fn panic, the claim is aborted (its transaction
// rolls back; past a recovery point its lease renewals stop and the lease is
// released) and the panic goes on.
//
// fn receives the context of the run (carrying its unit of work) and its
// claim; an error from fn means the run has no answer: Run aborts it and
// runs it again when the failure was transient, else ends with the error
// (StageRun).
func Run(ctx context.Context, db *store.DB, req Request, o Options, fn func(ctx context.Context, c *Claim) (Answer, error)) Outcome {
	bg := context.WithoutCancel(ctx)
	// held is a run past a recovery point whose answer did not commit, or
	// may not have (the database went away): the key's lease is still this
	// request's own. It is released before the next run reads the key;
	// while the database is still away the release fails as the read would.
	var held *Claim
	defer func() {
		if held != nil {
			held.Abort(bg)
		}
	}()
	for run := 1; ; run++ {
		if held != nil && held.ReleaseLease(bg) == nil {
			held = nil
		}
		rctx, claim, stored, err := claimRun(ctx, db, req, o.AtOnce, run > 1 || o.LookFirst)
		if stored != nil {
			return Outcome{Replay: stored}
		}
		if err != nil {
			// The run failed reading its key or beginning its unit, before
			// anything of it could commit: a lost or refused connection
			// there (the database restarting) is run again like any other.
			retryable := claim != nil && claim.Unit().Retryable() ||
				store.IsConnLost(err) && (claim == nil || claim.Unit().Phases() == 0)
			if claim != nil {
				claim.Abort(bg)
			}
			if retryable && o.again(run, err) {
				continue
			}
			return Outcome{Err: err, Stage: StageClaim}
		}
		if out, done := settled(bg, claim); done {
			return out
		}
		ans, ferr := runClaimed(rctx, claim, fn)
		if ferr != nil {
			unit := claim.Unit()
			// A transient failure (a read outside the unit that met a dead
			// connection, a unit broken before anything committed): nothing
			// of this run committed, so it simply runs again.
			retry := unit.Retryable() || store.IsConnLost(ferr) && unit.Phases() == 0 && unit.Err() == nil
			if err := claim.Abort(bg); err != nil {
				return Outcome{Err: err, Stage: StageRun}
			}
			if out, done := settled(bg, claim); done {
				return out
			}
			if !retry {
				return Outcome{Err: ferr, Stage: StageRun}
			}
			if o.again(run, ferr) {
				o.log(slog.LevelWarn, "idempotent request run again", "run", run, "err", ferr)
				continue
			}
			return Outcome{Err: ferr, Stage: StageAgain}
		}
		out, again, err := settle(bg, claim, ans, o)
		if !again {
			return out
		}
		if claim.Unit().Phases() > 0 {
			held = claim
		}
		// A lost connection pauses and runs again however the run began
		// (a run after the first reads its key first): while the database
		// restarts, runs that follow each other without a pause would use
		// up their count in milliseconds.
		uerr := claim.Unit().Err()
		if store.IsGroupAborted(uerr) {
			// Another request's rollback undid this run's work (SQLite
			// group commit): the next run is careful, so that others'
			// failures cost this request one run at most.
			req.Careful = true
		}
		if claim.LookFirst() && !store.IsConnLost(uerr) && run < MaxRuns {
			o.log(slog.LevelInfo, "idempotent request runs again after reading its key", "run", run)
			continue
		}
		if o.again(run, uerr) {
			o.log(slog.LevelWarn, "idempotent request run again", "run", run, "err", uerr)
			continue
		}
		if uerr == nil {
			uerr = err
		}
		return Outcome{Err: uerr, Stage: StageAgain}
	}
}

// claimRun starts one run of an idempotent request. With atOnce, where the
// engine has concurrent writers, the key is claimed at once, in the round
// trip that begins the transaction; otherwise (and always on SQLite, where
// an open transaction holds the one writer) the key is claimed by the
// request's write of its row, so no connection is held before it. Without
// lookFirst the run does not read the key (StartUnread: the key's write
// meets a stored answer as surely); with it, the key is read first, and the
// answer stored under it, if any, is returned to replay.
func claimRun(ctx context.Context, db *store.DB, req Request, atOnce, lookFirst bool) (context.Context, *Claim, *Stored, error) {
	if atOnce && db.Engine().ConcurrentWriters() {
		ctx, claim, err := StartClaimed(ctx, db, req)
		return ctx, claim, nil, err
	}
	if !lookFirst {
		ctx, claim := StartUnread(ctx, db, req)
		return ctx, claim, nil, nil
	}
	found, err := Lookup(ctx, db, req)
	if err != nil || found.Replay != nil {
		return nil, nil, found.Replay, err
	}
	ctx, claim := Start(ctx, db, req, found)
	return ctx, claim, nil, nil
}

// runClaimed runs fn under claim, aborting the claim should fn panic before
// the panic goes on: the run's open transaction rolls back and, past a
// recovery point, its key's lease renewals stop and the lease is released,
// as for any run that ended without an answer; otherwise the renewals would
// hold the key, every retry answering 409, until they gave up.
func runClaimed(ctx context.Context, claim *Claim, fn func(ctx context.Context, c *Claim) (Answer, error)) (Answer, error) {
	defer func() {
		if p := recover(); p != nil {
			claim.Abort(context.WithoutCancel(ctx))
			panic(p)
		}
	}()
	return fn(ctx, claim)
}

// settled aborts a claim that met a stored answer of the request, or a
// refusal, and says so.
func settled(bg context.Context, claim *Claim) (Outcome, bool) {
	if stored := claim.Replayed(); stored != nil {
		claim.Abort(bg)
		return Outcome{Replay: stored}, true
	}
	if err := claim.Refused(); err != nil {
		claim.Abort(bg)
		return Outcome{Err: err, Stage: StageRefused}, true
	}
	return Outcome{}, false
}

// settle commits or rolls back one run that answered; again reports, with
// the failure if any, that the request should run again.
func settle(bg context.Context, claim *Claim, ans Answer, o Options) (out Outcome, again bool, err error) {
	unit := claim.Unit()
	if out, done := settled(bg, claim); done {
		return out, false, nil
	}
	if claim.LookFirst() || unit.Retryable() {
		// LookFirst: the key's row needs reading before the request runs
		// (a recovery point to resume from); this run wrote nothing that
		// remains.
		claim.Abort(bg)
		return Outcome{}, true, nil
	}
	if !ans.Keep {
		if err := claim.Abort(bg); err != nil {
			o.log(slog.LevelError, "release idempotency key", "err", err)
		}
		// A run that skipped reading its key may be a retry of a request
		// already answered: that answer, not this run's failure.
		if claim.LookUp(bg) != nil {
			if out, done := settled(bg, claim); done {
				return out, false, nil
			}
			if claim.LookFirst() {
				return Outcome{}, true, nil
			}
		}
		return Outcome{Answered: true}, false, nil
	}
	err = claim.Finish(bg, ans.Stored)
	switch {
	case err == nil:
		return Outcome{Answered: true}, false, nil
	case errors.Is(err, store.ErrCommitUnknown) || store.IsConnLost(err):
		// Whether it committed shows in the key: the next run replays
		// the stored answer, or runs the request again.
		return Outcome{}, true, err
	}
	// The key's row is written only by Finish (unless claimed early), and
	// another run of the request answered it meanwhile (a process killed
	// as it committed: its commit became visible after this run looked the
	// key up), or holds it, or it was used for another request; this
	// run's writes rolled back. That answer, as any retry would get.
	if out, done := settled(bg, claim); done {
		return out, false, nil
	}
	if claim.LookFirst() || unit.Retryable() {
		// The key's row is an earlier run's recovery point, or past
		// retention (the next run looks it up first); or a transient
		// failure while storing, before anything committed.
		return Outcome{}, true, err
	}
	// Storing the answer failed for certain (its writes rolled back): past a
	// recovery point the key's lease ends now, as for any run that ended
	// without an answer, so a retry resumes at once instead of meeting it.
	if aerr := claim.Abort(bg); aerr != nil {
		o.log(slog.LevelError, "release idempotency key", "err", aerr)
	}
	return Outcome{Err: err, Stage: StageFinish}, false, nil
}

// Flights are the keys of the requests one process runs now: within one
// process two requests with one key must not run at once (see the package
// comment).
type Flights struct{ m sync.Map }

// Enter marks req's key as running and returns the function that ends it.
// When another request with the key runs, Enter returns ErrInUse at once,
// or with wait waits for it to end (or for ctx to end: ctx's error).
func (f *Flights) Enter(ctx context.Context, req Request, wait bool) (leave func(), err error) {
	flight := req.MerchantID + "\x00" + strconv.FormatBool(req.Livemode) + "\x00" + req.PrincipalID + "\x00" + req.Key
	mine := make(chan struct{})
	for {
		other, busy := f.m.LoadOrStore(flight, mine)
		if !busy {
			break
		}
		if !wait {
			return nil, ErrInUse
		}
		select {
		case <-other.(chan struct{}):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return func() {
		f.m.Delete(flight)
		close(mine)
	}, nil
}
