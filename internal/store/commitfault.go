package store

import (
	"context"
	"fmt"
	"net"
)

// CommitFault is what a test makes of one commit of a unit of work (see
// FaultCommits): the outcomes a caller cannot tell apart when the
// connection dies during COMMIT.
type CommitFault int

const (
	// CommitNormally leaves the commit alone.
	CommitNormally CommitFault = iota
	// CommitLostAfter commits, then answers ErrCommitUnknown: the server
	// applied the transaction but its answer never arrived.
	CommitLostAfter
	// CommitLostBefore rolls back and answers ErrCommitUnknown: the COMMIT
	// never reached the server.
	CommitLostBefore
)

// errLostCommit is the cause joined to ErrCommitUnknown for a fault made by
// FaultCommits: a closed connection, as in the failure it stands for.
var errLostCommit = fmt.Errorf("store: commit answer lost (fault injected by a test): %w", net.ErrClosed)

// FaultCommits makes fn decide, for each commit of a unit of work (an
// idempotent API request's or portal form's transaction, checkpoints
// included), whether its answer is lost; nil stops it. A commit shared by
// several units (SQLite's parked transactions) takes the worst fault fn
// gives any of them, and each of them gets ErrCommitUnknown. Tests use it to
// drive the commit-unknown paths.
func (db *DB) FaultCommits(fn func(ctx context.Context) CommitFault) {
	if fn == nil {
		db.commitFault.Store(nil)
		return
	}
	db.commitFault.Store(&fn)
}

// faultOf is the fault FaultCommits' hook gives a commit made under ctx.
func (db *DB) faultOf(ctx context.Context) CommitFault {
	if f := db.commitFault.Load(); f != nil {
		return (*f)(ctx)
	}
	return CommitNormally
}

// commitFaulted commits stx as fault says; applied reports that the
// transaction was committed (whatever err says).
func commitFaulted(stx txConn, fault CommitFault) (applied bool, err error) {
	if fault == CommitLostBefore {
		stx.Rollback()
		return false, errorJoin(ErrCommitUnknown, errLostCommit)
	}
	if err := stx.Commit(); err != nil {
		return false, commitErr(err)
	}
	if fault == CommitLostAfter {
		return true, errorJoin(ErrCommitUnknown, errLostCommit)
	}
	return true, nil
}
