package store

import (
	"context"
	"database/sql"
)

// Group commit for units of work on SQLite.
//
// A request's unit of work (unit.go) holds SQLite's one writer from its first
// statement that needs it (latetx.go: statements run later wait in Go until
// one needs an answer, or until the commit) to its commit. When it commits
// while other units wait for the
// writer, it does not commit: it parks its open transaction and hands the
// writer on. The next unit to take the writer goes on in that transaction;
// when it commits it parks the transaction again or, when nobody waits (or
// the batch is full), commits it for every unit in it and tells each the
// outcome. A parked unit waits for that outcome before it
// answers, so an answer always follows the commit of what it reports. A
// unit parks for a writer already waiting, and that writer (or, if it gives
// up, a goroutine it leaves) takes the transaction next. A unit that finds
// nobody waiting parks too, releases the writer and yields once
// (lateTx.commitGrouped), so that requests on their way to the writer can
// reach it and go on in the parked transaction; back, it commits the
// transaction itself if nobody took it (settleOwn). Whoever takes the
// writer after a transaction is parked takes the transaction with it.
//
// Anything else that takes the writer (a grouped InTx, a statement outside a
// transaction, a migration, a snapshot) commits a parked transaction first.
// One client alone parks only for its own yield, which returns at once with
// nothing else to run: its commit follows straight away.
//
// A unit goes on in a parked transaction without a savepoint: a savepoint
// copies every page the unit changes into a sub-journal, which cost keyed
// creates about a sixth of their rate. So when such a unit rolls back as a
// whole (its request failed with an answer that is not kept) the whole
// shared transaction rolls back, as it does when a unit breaks it (SQLite
// rolled it back by itself): every unit parked in it is told
// errGroupAborted, nothing of theirs was committed, and their owners run
// the requests again (Unit.Retryable), as after a deadlock on PostgreSQL. A
// failed step inside a unit (a nested InTx) still rolls back to its own
// savepoint alone. The exception is a careful unit, one that already
// committed a recovery point (its request cannot simply run again) or whose
// request runs again because another unit's rollback undid it (Careful): it
// goes on in a parked transaction under a savepoint of its own
// ("payd_unit"), so that its rollback undoes its own work alone, and it
// never parks its own transaction, so no other unit's rollback undoes its
// work.

// parkedTx is an open SQLite transaction whose units have finished and wait
// for its commit. It is guarded by the writer (writeLock): only the holder
// of the writer reads or changes db.parked or a parkedTx.
type parkedTx struct {
	stx     *sql.Tx
	members []parkedMember
}

type parkedMember struct {
	ctx  context.Context
	done chan error
}

// lockWrite takes SQLite's writer, counting the writers that wait for it
// (a unit parks its transaction only for a waiting writer). A waiter that
// gives up (its context ended) may have been the one a unit parked for:
// it leaves a goroutine to take the writer and commit what is parked. At
// most one such goroutine waits at a time (settling): when it takes the
// writer it commits whatever was parked for anyone who gave up before.
func (db *DB) lockWrite(ctx context.Context) error {
	select {
	case db.writeLock <- struct{}{}:
		return nil
	default:
	}
	db.writeWaiters.Add(1)
	select {
	case db.writeLock <- struct{}{}:
		db.writeWaiters.Add(-1)
		return nil
	case <-ctx.Done():
		// No longer a waiter before deciding whether a settler is needed,
		// so that no unit parks for this one once that is decided.
		db.writeWaiters.Add(-1)
		if db.settling.CompareAndSwap(false, true) {
			go db.settleParked()
		}
		return ctx.Err()
	}
}

// settleOwn commits p, parked by the caller's unit with no writer waiting,
// if p is still parked and the writer is free. When the writer is taken,
// its holder took it after p was parked, and with it p (a unit goes on in
// p, anything else commits it first): nothing is left to do.
func (db *DB) settleOwn(p *parkedTx) {
	select {
	case db.writeLock <- struct{}{}:
	default:
		return
	}
	if db.parked == p {
		db.parked = nil
		db.commitParked(p)
	}
	db.unlockWrite()
}

// settleParked takes the writer and commits whatever is parked on it.
func (db *DB) settleParked() {
	db.writeWaiters.Add(1)
	db.writeLock <- struct{}{}
	db.writeWaiters.Add(-1)
	// Cleared while holding the writer: a waiter giving up from now on
	// leaves its own goroutine, and whatever was parked until now is
	// committed here.
	db.settling.Store(false)
	if p := db.parked; p != nil {
		db.parked = nil
		db.commitParked(p)
	}
	db.unlockWrite()
}

func (db *DB) unlockWrite() { <-db.writeLock }

// lockWriteClean takes the writer with no transaction parked on it: a
// parked one is committed first.
func (db *DB) lockWriteClean(ctx context.Context) error {
	if err := db.lockWrite(ctx); err != nil {
		return err
	}
	if p := db.parked; p != nil {
		db.parked = nil
		db.commitParked(p)
	}
	return nil
}

// takeParked returns the parked transaction for a unit to go on in, or nil.
// The caller holds the writer.
func (db *DB) takeParked() *parkedTx {
	p := db.parked
	db.parked = nil
	return p
}

// commitParked commits p and tells its units the outcome. The caller holds
// the writer.
func (db *DB) commitParked(p *parkedTx) error {
	fault := CommitNormally
	for _, m := range p.members {
		fault = max(fault, db.faultOf(m.ctx))
	}
	applied, err := commitFaulted(p.stx, fault)
	if applied {
		db.countCommit(len(p.members))
	}
	for _, m := range p.members {
		if applied {
			db.committed(m.ctx)
		}
		m.done <- err
	}
	return err
}

// abortParked rolls p back and tells its units that nothing of theirs was
// committed. The caller holds the writer.
func (db *DB) abortParked(p *parkedTx) {
	p.stx.Rollback()
	for _, m := range p.members {
		m.done <- errGroupAborted
	}
}

// handOn ends the writer's hold on p, whose holder's own work is finished or
// undone: p is parked for the next unit when a writer waits and p has room,
// otherwise committed. The caller holds the writer and releases it after.
func (db *DB) handOn(p *parkedTx) {
	if len(p.members) == 0 {
		p.stx.Rollback() // nothing of anyone's is in it
		return
	}
	if db.writeWaiters.Load() > 0 && len(p.members) < maxGroup {
		db.parked = p
		return
	}
	db.commitParked(p)
}

// awaitParked waits for the outcome of the parked transaction me waits in.
// Whoever takes the writer next settles it: a unit goes on in it and
// parks it again or commits it, anything else commits it first, and a
// waiter that gives up leaves a goroutine to commit it.
func awaitParked(me parkedMember) error { return <-me.done }

// WaitingWriters is how many units of work wait for SQLite's writer (always
// 0 on PostgreSQL): a test orchestrating a group commit waits for it.
func (db *DB) WaitingWriters() int32 { return db.writeWaiters.Load() }
