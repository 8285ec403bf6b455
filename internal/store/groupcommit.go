package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
)

// Group commit for SQLite.
//
// SQLite has one writer, so payd's write transactions queue for it. Instead
// of committing them one by one, the writer that finds the database free
// becomes the leader of a batch: it begins one transaction and runs its own
// work in it, then hands the transaction, in arrival order, to every write
// transaction that queued meanwhile. Each of those runs its function on its
// own goroutine inside a SAVEPOINT of its own: one that fails (or panics) is
// rolled back to its savepoint alone and never sees its AfterCommit hooks
// run, the others are unaffected. The leader then commits once for all of
// them and passes leadership to whoever queued during the commit. Nothing
// waits for company: a writer that finds no queue commits at once, exactly as
// without grouping, and the leader's own work needs no savepoint.
//
// A member's statements see the earlier members' writes, as if the
// transactions had run one after the other in that order, which is also the
// order they commit in (together).
//
// Statements in a grouped transaction are not interrupted when their
// context is cancelled: SQLite rolls back the whole transaction when a write
// statement inside it is interrupted, which would undo the other members'
// work. A cancelled context is still honoured before each statement.

// maxGroup bounds the transactions of one batch, so a steady stream of
// writers cannot hold one transaction open forever.
const maxGroup = 64

// errGroupAborted is returned to the members of a batch that could not be
// committed because another member left the shared transaction unusable
// (SQLite rolls a transaction back by itself after some errors, such as a
// full disk). Their work was not committed; InTx runs it again.
var errGroupAborted = errors.New("store: grouped transaction aborted by another member")

type groupCommit struct {
	mu      sync.Mutex
	leading bool      // a leader is building or committing a batch
	queue   []*member // writers waiting, in arrival order
	batches atomic.Int64
}

// member is one queued write transaction.
type member struct {
	ctx     context.Context
	turn    chan *batch // a batch to join, or nil: lead the next batch
	done    chan error  // the batch's commit outcome
	claimed bool        // taken off the queue by a leader (guarded by mu)
}

// batch is the shared transaction a leader hands to its members.
type batch struct {
	stx  *sql.Tx
	seq  int
	step chan stepOutcome // a member's outcome, back to the leader
}

type stepOutcome int

const (
	stepJoined stepOutcome = iota // the member's work is in the batch
	stepOut                       // the member failed and rolled back to its savepoint
	stepBroken                    // the shared transaction is no longer usable
)

// run executes fn as one grouped write transaction.
func (g *groupCommit) run(ctx context.Context, db *DB, fn func(*Tx) error) error {
	g.mu.Lock()
	if !g.leading {
		g.leading = true
		g.mu.Unlock()
		return g.lead(ctx, db, fn)
	}
	m := &member{ctx: ctx, turn: make(chan *batch, 1), done: make(chan error, 1)}
	g.queue = append(g.queue, m)
	g.mu.Unlock()

	var b *batch
	select {
	case b = <-m.turn:
	case <-ctx.Done():
		g.mu.Lock()
		if !m.claimed {
			for i, q := range g.queue {
				if q == m {
					g.queue = append(g.queue[:i], g.queue[i+1:]...)
					break
				}
			}
			g.mu.Unlock()
			return ctx.Err()
		}
		g.mu.Unlock()
		b = <-m.turn // a leader already took it off the queue: the turn is on its way
	}
	if b == nil {
		if err := ctx.Err(); err != nil {
			g.handOff()
			return err
		}
		return g.lead(ctx, db, fn)
	}
	return g.join(ctx, db, m, b, fn)
}

// next takes the first queued writer, or returns nil.
func (g *groupCommit) next() *member {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.popLocked()
}

func (g *groupCommit) popLocked() *member {
	if len(g.queue) == 0 {
		return nil
	}
	m := g.queue[0]
	g.queue[0] = nil
	g.queue = g.queue[1:]
	m.claimed = true
	return m
}

// handOff passes leadership to the first queued writer, or frees the writer.
func (g *groupCommit) handOff() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m := g.popLocked(); m != nil {
		m.turn <- nil
		return
	}
	g.leading = false
}

// lead begins a batch, runs fn in it, lets the queued writers join and
// commits them all.
func (g *groupCommit) lead(ctx context.Context, db *DB, fn func(*Tx) error) (err error) {
	if err := db.lockWriteClean(ctx); err != nil { // held by a migration or DB.Exec
		g.handOff()
		return err
	}
	released := false
	release := func() {
		if !released {
			released = true
			db.unlockWrite()
			g.handOff()
		}
	}
	defer release()
	// The transaction outlives this request's context: other members'
	// work rides on it.
	stx, err := db.beginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return translate(err)
	}
	finished := false
	defer func() {
		if !finished {
			stx.Rollback()
		}
	}()
	tx := db.newTx(stx)
	tx.shield = true
	if err := fn(tx); err != nil {
		return err
	}
	b := &batch{stx: stx, step: make(chan stepOutcome, 1)}
	// joined members wait for the commit's outcome; those that failed wait
	// for the batch to end too, so that what made them fail (an earlier
	// member's write) is committed, and visible, when they return.
	var joined, out []*member
	for b.seq < maxGroup-1 {
		m := g.next()
		if m == nil {
			break
		}
		b.seq++
		m.turn <- b
		switch <-b.step {
		case stepJoined:
			joined = append(joined, m)
		case stepOut:
			out = append(out, m)
		case stepBroken:
			finished = true
			stx.Rollback()
			for _, j := range joined {
				j.done <- errGroupAborted
			}
			for _, o := range out {
				o.done <- nil
			}
			return errGroupAborted
		}
	}
	finished = true
	if cerr := stx.Commit(); cerr != nil {
		// Whether a failed COMMIT took effect is unknown: InTx must not
		// run the work again blindly.
		err = errorJoin(ErrCommitUnknown, translate(cerr))
	} else {
		db.countCommit(1 + len(joined))
		db.committed(ctx)
	}
	g.batches.Add(1)
	for _, j := range joined {
		j.done <- err
	}
	for _, o := range out {
		o.done <- nil
	}
	release()
	if err != nil {
		return err
	}
	tx.runAfterCommit()
	return nil
}

// join runs fn inside its own savepoint of the leader's transaction and
// waits for the batch's commit.
func (g *groupCommit) join(ctx context.Context, db *DB, m *member, b *batch, fn func(*Tx) error) (err error) {
	if err := ctx.Err(); err != nil {
		b.step <- stepOut
		<-m.done
		return err
	}
	bg := context.WithoutCancel(ctx)
	sp := "payd_group_" + strconv.Itoa(b.seq)
	if _, err := b.stx.ExecContext(bg, "SAVEPOINT "+sp); err != nil {
		b.step <- stepBroken
		return errGroupAborted
	}
	reported := false
	defer func() {
		if reported {
			return
		}
		// fn failed, panicked or ended its goroutine (runtime.Goexit):
		// undo its work alone. A panic carries on once the leader knows.
		outcome := stepOut
		if _, rerr := b.stx.ExecContext(bg, "ROLLBACK TO "+sp); rerr != nil {
			outcome = stepBroken
		} else if _, rerr := b.stx.ExecContext(bg, "RELEASE "+sp); rerr != nil {
			outcome = stepBroken
		}
		b.step <- outcome
		if outcome == stepOut {
			<-m.done
		}
	}()
	tx := db.newTx(b.stx)
	tx.shield = true
	if err := fn(tx); err != nil {
		return err
	}
	if _, err := b.stx.ExecContext(bg, "RELEASE "+sp); err != nil {
		reported = true
		b.step <- stepBroken
		return errGroupAborted
	}
	reported = true
	b.step <- stepJoined
	if err := <-m.done; err != nil {
		return err
	}
	tx.runAfterCommit()
	return nil
}
