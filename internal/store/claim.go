package store

import "context"

// A Claim is what a capability operation may ask of the idempotent request
// it runs for, handed to it as a value by the front that owns the request
// (the API's and the portal's idempotency.Run): the request's Idempotency-Key
// claim. Capabilities never look it up in the context, and never import the
// idempotency package: an operation that needs the claim takes it as a
// parameter, and a caller with no request behind it (a worker, a job, a
// test) passes NoClaim.
//
// The claim also carries the request's unit of work, the one transaction
// its writes join: the operation runs them (and the reads that must see
// them) through db.Within(cl), a Work, never through the context. Besides,
// it holds what only the request's owner knows: where an earlier run of it
// stopped, and how to commit a recovery point before a call that leaves the
// process.
type Claim interface {
	// Unit is the request's unit of work (nil for NoClaim). An operation
	// does not use it itself: DB.Within(cl) gives the Work its statements
	// run in; the unit's owner alone commits it.
	Unit() *Unit
	// RecoveryPoint commits the request's writes so far together with a
	// recovery point (a name and a reference) on its key, before the
	// request calls a provider. A retry after a crash resumes from the last
	// point (Resuming) instead of repeating what committed. Without a claim
	// it does nothing: each InTx has committed on its own.
	RecoveryPoint(ctx context.Context, point, ref string) error
	// Resuming returns the recovery point the request resumes from, if
	// any: an earlier run committed it and ended without an answer.
	Resuming() (Recovery, bool)
	// LookUp makes sure the request's key has been read before the caller
	// spends time outside the database (a simulated delay): a retry of a
	// request already answered then answers at once. When the key settles
	// the request it returns an error the caller returns as it is.
	LookUp(ctx context.Context) error
}

// Recovery is a recovery point an earlier run of a request committed: the
// name its handler chose and a reference (usually the id of what it
// created).
type Recovery struct {
	Point string
	Ref   string
}

// NoClaim is the Claim of an operation with no idempotent request behind it:
// it records no recovery point, never resumes, and has nothing to read.
var NoClaim Claim = noClaim{}

type noClaim struct{}

func (noClaim) RecoveryPoint(context.Context, string, string) error { return nil }
func (noClaim) Resuming() (Recovery, bool)                          { return Recovery{}, false }
func (noClaim) LookUp(context.Context) error                        { return nil }
func (noClaim) Unit() *Unit                                         { return nil }
