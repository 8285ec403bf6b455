// Package idempotency stores the responses of requests made with an
// Idempotency-Key so that a retry replays the first answer byte for byte, and
// it does so in the request's own transaction: the claim of the key, the
// request's effect (state change, ledger postings, outbox events) and the
// stored response commit together or not at all.
//
// Run owns a request from its claim to its answer, for the API and the
// portal alike (run.go); the capability operation it runs receives the claim
// as a value (a store.Claim: RecoveryPoint, Resuming, LookUp), never from the
// context. Run starts a claim: a store.Unit carried in the request's
// context, whose transaction opens at the request's first write. Almost
// every key is new, so the first run of a request does not look its key up
// first (StartUnread): a retry of an answered request is caught by the key's
// row as below, and a key whose row only a read beforehand could act on (an
// earlier run's recovery point to take over, a row past Retention) makes the
// run roll back and run again after Lookup (LookFirst), a plain read that
// settles a request by itself when it finds an answer to replay or a
// different request under the key (Start follows it otherwise). On SQLite
// an unread claim's row is its transaction's entry (store.Tx.Enter): the
// first statement once the transaction takes the writer, before any of the
// request's own writes, so a run that meets its key taken has changed
// nothing in the group commit's shared transaction, and the other requests
// in it go on.
// Capability code runs its statements through db.Within(claim) (a
// store.Work), which joins the unit. The middleware then writes the key's
// row, with the response, as the last statement of that transaction and
// commits once (Claim.Finish), or rolls
// everything back (Claim.Abort), which leaves no key behind. The key's row is
// written once, finished: it is neither inserted first and updated at the
// end nor seen by anyone before the request's effect commits with it.
//
// Two requests with the same key race on the row's primary key: on
// PostgreSQL the second INSERT waits for the first transaction and fails
// when it commits; the second's transaction (its effect included) rolls
// back and it answers the first's stored answer. Within one process callers
// must not run two requests with one key at once (on SQLite the second would
// meet the first's row in a shared, uncommitted group transaction): the API
// middleware refuses a duplicate in flight with 409, and the portal makes a
// second submission of a form wait for the first. So a concurrent duplicate
// replays the first's answer (or is refused) and its own run leaves nothing.
//
// Where the key's row must be visible before the end, it is written first,
// in the round trip that begins the transaction: a claim taken at once
// (StartClaimed), a key whose old row (past Retention) is overwritten, and a
// run taking over an earlier run's recovery point. A request's first
// recovery point writes the row (in flight, with the point) in the
// transaction that point commits.
//
// A request that must call a provider between two writes commits a recovery
// point first (RecoveryPoint): its writes so far and the point's name and
// reference on the key's row, still in_flight. While its owner runs, a retry
// gets 409 idempotency_key_in_use; when the owner ends without an answer (it
// aborted after the point, or its process died and the lease ran out), the
// next retry takes the key over and resumes from the point (Resuming) rather
// than starting again.
package idempotency

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"sync"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/store"
)

// Retention is how long stored responses are replayed: 24 hours.
const Retention = 24 * time.Hour

// Lease is how long a committed recovery point blocks retries unless
// renewed, unless the Request says otherwise. The run that holds it renews
// it every third of it while it runs (keepLease), however long its provider
// call takes, so the lease only decides how soon a run that stopped (its
// process killed, or cut off from the database) frees its key: seconds.
// Only requests that commit a recovery point (live provider calls) ever
// leave a claim visible to others; a one-commit request's claim commits with
// its answer.
const Lease = 10 * time.Second

// maxHold bounds how long a run renews its lease: far beyond any provider
// call, so a claim that was never finished nor aborted (a bug) cannot hold
// its key for ever.
const maxHold = 10 * time.Minute

// Scope is whose key it is: keys are scoped by merchant, mode and principal.
type Scope struct {
	MerchantID  string
	Livemode    bool
	PrincipalID string
}

// Request identifies one idempotent request.
type Request struct {
	Scope
	Key, Method, Path, Hash string
	// Lease overrides the default Lease when positive (PAYD_IDEMPOTENCY_LEASE).
	Lease time.Duration
	// Careful runs the request's unit of work careful on SQLite
	// (store.UnitHooks.Careful): Run sets it for a run again after another
	// request's rollback undid this one's work.
	Careful bool
}

func (r Request) lease() time.Duration {
	if r.Lease > 0 {
		return r.Lease
	}
	return Lease
}

// Stored is a recorded response.
type Stored struct {
	Status      int
	ContentType string
	Body        []byte
}

// Recovery is the last recovery point a request committed: a name its
// handler chose and a reference (usually the id of what it created).
type Recovery struct {
	Point string
	Ref   string
	// lockedUntil is the lease seen, so two retries cannot both take over.
	lockedUntil int64
}

// Found is what Lookup learned about a key.
type Found struct {
	// Replay is the stored answer of the same request.
	Replay *Stored
	// Resume is set when an earlier run of the request committed a recovery
	// point and has ended without an answer: this request takes it over.
	Resume *Recovery
	// Stale is set when the key's row is older than Retention: the request
	// runs and overwrites it.
	Stale bool
}

// RequestHash fingerprints a request: method, path and body.
func RequestHash(method, path string, body []byte) string {
	h := NewRequestHash(method, path)
	h.Write(body)
	return SumRequestHash(h)
}

// NewRequestHash starts RequestHash for a body that streams in: write the
// body to it, then SumRequestHash gives what RequestHash would.
func NewRequestHash(method, path string) hash.Hash {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	return h
}

// SumRequestHash finishes a NewRequestHash.
func SumRequestHash(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

var (
	errReused = &errs.Error{Kind: errs.KindIdempotency, Status: http.StatusUnprocessableEntity, Code: "idempotency_key_reused",
		Message: "this Idempotency-Key was used with a different request; use a new key for a new request"}
	// ErrInUse refuses a request whose key another run of it holds.
	ErrInUse = &errs.Error{Kind: errs.KindIdempotency, Status: http.StatusConflict, Code: "idempotency_key_in_use",
		Message: "a request with this Idempotency-Key is still being processed; retry later"}
)

// keyRow is the stored row of a key.
type keyRow struct {
	method, path, hash, state string
	status                    sql.NullInt64
	ctype                     sql.NullString
	body                      []byte
	point, ref                sql.NullString
	lockedUntil, created      int64
}

const keyWhere = " WHERE merchant_id = ? AND livemode = ? AND principal_id = ? AND idem_key = ?"

func (r Request) keyArgs(more ...any) []any {
	return append(more, r.MerchantID, r.Livemode, r.PrincipalID, r.Key)
}

func readKey(ctx context.Context, q store.Querier, r Request) (keyRow, error) {
	var k keyRow
	err := q.QueryRow(ctx, `SELECT method, path, request_hash, state, status_code, content_type, body, recovery_point, recovery_ref,
		locked_until, created_at FROM idempotency_keys`+keyWhere, r.keyArgs()...).
		Scan(&k.method, &k.path, &k.hash, &k.state, &k.status, &k.ctype, &k.body, &k.point, &k.ref, &k.lockedUntil, &k.created)
	return k, err
}

// judge decides what a stored row means for request r at now: a replay, a
// resume, an error, or (all nil) that the row is stale and r may overwrite it.
func (k keyRow) judge(r Request, now time.Time) (Found, error) {
	if store.FromMicros(k.created).Add(Retention).Before(now) {
		return Found{Stale: true}, nil
	}
	if k.method != r.Method || k.path != r.Path || k.hash != r.Hash {
		return Found{}, errReused
	}
	if k.state == "done" {
		return Found{Replay: &Stored{Status: int(k.status.Int64), ContentType: k.ctype.String, Body: k.body}}, nil
	}
	if !store.FromMicros(k.lockedUntil).After(now) {
		return Found{Resume: &Recovery{Point: k.point.String, Ref: k.ref.String, lockedUntil: k.lockedUntil}}, nil
	}
	return Found{}, ErrInUse
}

// Lookup reads key's row without locking anything. It returns the stored
// answer to replay, a recovery point to resume from, an error (422
// idempotency_key_reused, 409 idempotency_key_in_use), or nothing when the
// request should run.
func Lookup(ctx context.Context, db *store.DB, r Request) (Found, error) {
	return lookup(ctx, db.Within(store.NoClaim), r)
}

// lookup is Lookup in work: a claim reads its own key in its unit of work
// (in the unit's transaction while one is open).
func lookup(ctx context.Context, work store.Work, r Request) (Found, error) {
	k, err := readKey(ctx, work, r)
	if store.IsNotFound(err) {
		return Found{}, nil
	}
	if err != nil {
		return Found{}, err
	}
	return k.judge(r, work.Now())
}

// Claim is one run of an idempotent request: its unit of work and what
// claiming the key found.
type Claim struct {
	db     *store.DB
	req    Request
	unit   *store.Unit
	resume *Recovery
	replay *Stored
	err    error
	eager  bool // claimed before the handler runs (StartClaimed)
	// late: the key's row is written by the unit's last statement (with the
	// answer, or with a recovery point), not by its first.
	late bool
	// held: the key's row is this run's, in the open transaction or
	// committed by a recovery point.
	held bool
	// unread: started without Lookup (StartUnread); looked: LookUp has
	// read it since; lookFirst: this run met a row that needs a Lookup
	// before the request runs.
	unread, looked, lookFirst bool
	// keeping, once a recovery point committed, stops the renewal of the
	// key's lease (keepLease).
	keeping chan struct{}
	// leases are the latest locked_until values this run wrote to its key's
	// row, or may have (a statement whose outcome is unknown, a transaction
	// not committed yet): while the key is this run's, its row holds one of
	// them. A run that took the key over writes its own, so a renewal or a
	// release of this run (keepLease, releaseLater, a later transaction)
	// that lands after a takeover changes nothing. leaseMu guards it (the
	// renewals run on their own goroutine).
	leaseMu sync.Mutex
	leases  []int64
}

// maxLeases bounds Claim.leases: the row holds one of the latest values
// written (at most two writers, the run and its renewals, overtake each
// other); older ones belong to leases long run out.
const maxLeases = 16

// wrote records, before it is sent, a lease this run writes to its key.
func (c *Claim) wrote(until int64) {
	c.leaseMu.Lock()
	defer c.leaseMu.Unlock()
	if len(c.leases) == maxLeases {
		c.leases = append(c.leases[:0], c.leases[1:]...)
	}
	c.leases = append(c.leases, until)
}

// ours is the condition that the key's row still holds a lease this run
// wrote (and its arguments); ok is false when it wrote none.
func (c *Claim) ours() (cond string, args []any, ok bool) {
	c.leaseMu.Lock()
	defer c.leaseMu.Unlock()
	if len(c.leases) == 0 {
		return "", nil, false
	}
	for _, l := range c.leases {
		args = append(args, l)
	}
	return " AND locked_until IN (" + store.Placeholders(len(args)) + ")", args, true
}

// Start returns ctx carrying a claim of r's key and its unit of work; found
// is what Lookup found. The key's row is written by the request's last
// statement, with its answer (Finish) or a recovery point (RecoveryPoint),
// in the request's one transaction; when found holds a recovery point to
// take over, or a row past Retention to overwrite, it is written by the
// request's first write instead.
func Start(ctx context.Context, db *store.DB, r Request, found Found) (context.Context, *Claim) {
	c := &Claim{db: db, req: r, resume: found.Resume, late: found.Resume == nil && !found.Stale}
	ctx, c.unit = db.NewUnit(ctx, store.UnitHooks{Open: c.open, Careful: r.Careful})
	return ctx, c
}

// StartClaimed is Start with the key claimed at once, in the same round trip
// as the transaction's BEGIN, instead of by the request's first write; it
// replaces Lookup. When another run answered the key, holds it, or used it
// for another request, the claim says so (Replayed, Refused) and the handler
// must not run; when a run ended at a recovery point without an answer, this
// one takes the key over (a fresh lease) and Resuming tells the handler. It
// is for PostgreSQL, where holding the transaction open while the handler
// validates costs a pooled connection and nothing else; on SQLite it would
// hold the one writer, and Lookup then Start is used there.
func StartClaimed(ctx context.Context, db *store.DB, r Request) (context.Context, *Claim, error) {
	ctx, c := Start(ctx, db, r, Found{})
	c.eager, c.late = true, false
	if err := c.unit.Open(ctx); err != nil && !errors.Is(err, errClaimed) {
		return ctx, c, err
	}
	return ctx, c, nil
}

// StartUnread is Start for a request whose key was not looked up: the
// usual case, a key no request used before, then costs no read. When the
// key's row turns out to be there (the late write of the row, or a recovery
// point's, meets it), the claim says what it means: an answer to replay
// (Replayed), a refusal (Refused: another run holds it, or another request
// used it), or LookFirst when acting on it needs the read beforehand that
// was skipped. The run has changed nothing then, and the caller runs the
// request again after Lookup.
//
// A handler must therefore not act outside the database before its first
// recovery point, which is what every handler already keeps to: a retry on
// another process, whose claim cannot see an uncommitted one, runs the same
// way.
func StartUnread(ctx context.Context, db *store.DB, r Request) (context.Context, *Claim) {
	ctx, c := Start(ctx, db, r, Found{})
	c.unread = true
	return ctx, c
}

// LookUp makes sure the key of an unread claim has been looked up
// (store.Claim). A handler calls it before it spends time outside the
// database (a sandbox scenario's simulated delay): a retry of a request
// already answered then answers at once, not after the delay. When the key
// settles the request (an answer to replay, a refusal, or LookFirst) it
// returns an error the handler returns as it is; the claim says what to
// answer. The middleware calls it too, for a run that failed without an
// answer to store. For a claim that read its key it does nothing.
func (c *Claim) LookUp(ctx context.Context) error { return c.lookUp(ctx) }

// lookUp does for an unread claim what Lookup did for a read one, once.
func (c *Claim) lookUp(ctx context.Context) error {
	if !c.unread || c.looked || c.held {
		return nil
	}
	c.looked = true
	found, err := lookup(context.WithoutCancel(ctx), c.unit.Work(), c.req)
	switch {
	case err != nil && errs.As(err) != nil:
		c.err = err // 409 in use, 422 reused
	case err != nil:
		return err
	case !c.take(found):
		return nil
	}
	return errClaimed
}

// take records what a row of the key found by this run means for it: an
// answer to replay, a run that must look its key up first, or a key another
// run holds (409). It reports false when the row asks nothing of it.
func (c *Claim) take(found Found) bool {
	switch {
	case found.Replay != nil:
		c.replay = found.Replay
	case c.unread && (found.Resume != nil || found.Stale):
		// An unread run cannot take a recovery point over or overwrite an
		// old row: that is decided before the request runs.
		c.lookFirst = true
	case found.Resume != nil:
		// A phased run ended without an answer: the next retry resumes it.
		c.err = ErrInUse
	default:
		return false
	}
	return true
}

// LookFirst reports that this run, started unread, met a row of its key that
// only a Lookup before the request runs can act on: an earlier run's
// recovery point to take over, or a row past Retention to overwrite. Nothing
// of the run remains once the caller aborts it; the request then runs again,
// after Lookup.
func (c *Claim) LookFirst() bool { return c.lookFirst }

// Resuming returns the recovery point the request resumes from, if any
// (store.Claim).
func (c *Claim) Resuming() (store.Recovery, bool) {
	if c.resume != nil && c.resume.Point != "" {
		return store.Recovery{Point: c.resume.Point, Ref: c.resume.Ref}, true
	}
	return store.Recovery{}, false
}

// Claim is the store.Claim a front hands to the capability operation it
// runs under the claim.
var _ store.Claim = (*Claim)(nil)

// errClaimed fails the write that found the key already answered or held;
// the middleware answers from the claim instead of the handler.
var errClaimed = errors.New("idempotency: the key was claimed by another request")

// open is the unit's first statement in each of its transactions.
func (c *Claim) open(ctx context.Context, tx *store.Tx, first bool) error {
	if c.late && !c.held {
		// Written last (Finish, RecoveryPoint). On SQLite an unread
		// claim's row is also the transaction's entry: should the request
		// need the writer before its end, its first statement there claims
		// the key in flight, and a key already taken fails the run before
		// it changed anything.
		if w, ok := tx.Writer(); ok && c.unread && first {
			q, args := c.inFlightInsert(tx.Now(), nil, nil)
			w.Enter(q, args, errKeyTaken, func() { c.held = true })
		}
		return nil
	}
	err := c.openEarly(ctx, tx, first)
	if err == nil {
		c.held = true
	}
	return err
}

// openEarly claims (or renews) the key as the transaction's first statement.
func (c *Claim) openEarly(ctx context.Context, tx *store.Tx, first bool) error {
	now := tx.Now()
	r := c.req
	lease := store.Micros(now.Add(r.lease()))
	if !first || c.resume != nil {
		// Ours already (after a recovery point) or taken over from a run
		// that ended: renew the lease, on the lease we saw when resuming so
		// that of two retries only one takes over.
		if first {
			return c.renew(ctx, tx, lease, &c.resume.lockedUntil)
		}
		// A later transaction of this run renews the lease only if the
		// key is still this run's: a run that took it over (this one's
		// lease ran out while it was cut off) goes on alone.
		return c.renew(ctx, tx, lease, nil)
	}
	inserted, err := c.insertInFlight(ctx, tx, nil, nil)
	if err != nil || inserted {
		return err
	}
	// Another request holds or answered the key; on PostgreSQL the INSERT
	// above waited for its transaction to end.
	k, err := readKey(ctx, tx, r)
	if err != nil {
		return err
	}
	found, err := k.judge(r, now)
	switch {
	case err != nil:
		c.err = err
		return errClaimed
	case found.Replay != nil:
		c.replay = found.Replay
		return errClaimed
	case found.Resume != nil && c.eager && first:
		// A phased run ended without an answer: this run takes the key
		// over, on the lease it saw, and resumes from the point.
		if err := c.renew(ctx, tx, lease, &found.Resume.lockedUntil); err != nil {
			return err
		}
		c.resume = found.Resume
		return nil
	case found.Resume != nil:
		// A phased run ended without an answer between this request's
		// Lookup and now: the next retry resumes it.
		c.err = ErrInUse
		return errClaimed
	}
	c.wrote(lease)
	_, err = tx.Exec(ctx, `UPDATE idempotency_keys SET method = ?, path = ?, request_hash = ?, state = 'in_flight', status_code = NULL,
		content_type = NULL, body = NULL, recovery_point = NULL, recovery_ref = NULL, locked_until = ?, created_at = ?`+keyWhere,
		r.keyArgs(r.Method, r.Path, r.Hash, lease, store.Micros(now))...)
	return err
}

// insertInFlight inserts the key's row in flight, under a fresh lease and
// with a recovery point (or none: nil); it reports false, having changed
// nothing, when the key already has a row (on PostgreSQL once the
// transaction that wrote it, if still open, has ended).
func (c *Claim) insertInFlight(ctx context.Context, tx *store.Tx, point, ref any) (bool, error) {
	q, args := c.inFlightInsert(tx.Now(), point, ref)
	res, err := tx.Exec(ctx, q, args...)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// onConflictNothing ends an INSERT of a key's row that changes nothing
// when the key has one.
const onConflictNothing = ` ON CONFLICT (merchant_id, livemode, principal_id, idem_key) DO NOTHING`

// inFlightInsert is the INSERT of the key's row in flight at now.
func (c *Claim) inFlightInsert(now time.Time, point, ref any) (string, []any) {
	r := c.req
	lease := store.Micros(now.Add(r.lease()))
	c.wrote(lease)
	return `INSERT INTO idempotency_keys (merchant_id, livemode, principal_id, idem_key, method, path, request_hash,
		state, recovery_point, recovery_ref, locked_until, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'in_flight', ?, ?, ?, ?)` + onConflictNothing,
		[]any{r.MerchantID, r.Livemode, r.PrincipalID, r.Key, r.Method, r.Path, r.Hash, point, ref,
			lease, store.Micros(now)}
}

// errKeyTaken fails the SQLite transaction of an unread claim whose entry
// (Tx.Enter) found the key's row there: the transaction changed nothing.
var errKeyTaken = errors.New("idempotency: the key already has a row")

// renew sets the lease of the key's in-flight row to lease: with seen, only
// if the lease is still the one seen (so that of two runs taking the key
// over, one wins); without, only if it is still one this run wrote. A row
// that is not there, not in flight or on another lease refuses this run
// (409).
func (c *Claim) renew(ctx context.Context, tx *store.Tx, lease int64, seen *int64) error {
	q := `UPDATE idempotency_keys SET locked_until = ?` + keyWhere + ` AND state = 'in_flight'`
	args := c.req.keyArgs(lease)
	if seen != nil {
		q += ` AND locked_until = ?`
		args = append(args, *seen)
	} else {
		cond, mine, ok := c.ours()
		if !ok {
			c.err = ErrInUse
			return errClaimed
		}
		q += cond
		args = append(args, mine...)
	}
	c.wrote(lease)
	res, err := tx.Exec(ctx, q, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		c.err = ErrInUse
		return errClaimed
	}
	return nil
}

// Replayed returns the answer another run of the same request stored while
// this one ran; the caller answers it and ignores its own handler's output.
func (c *Claim) Replayed() *Stored { return c.replay }

// Refused returns the error claiming the key met (409, 422), if any; the
// caller answers it and ignores its own handler's output.
func (c *Claim) Refused() error { return c.err }

// Unit is the claim's unit of work.
func (c *Claim) Unit() *store.Unit { return c.unit }

// Finish stores resp as the key's answer in the request's transaction and
// commits it: the claim, the effect and the answer in one commit.
//
// When the key's row is written here (the usual case), another run of the
// same request that committed first makes the row's INSERT fail and the
// whole transaction roll back: Finish then returns errClaimed and the claim
// says what that run left (Replayed, Refused).
func (c *Claim) Finish(ctx context.Context, resp Stored) error {
	c.stopKeeping()
	inserted := false
	// The statement goes to the database with the COMMIT, in one round trip.
	err := c.unit.Commit(ctx, func(tx *store.Tx) error {
		// (Opening the transaction ran open first: a key taken over or
		// claimed early is held by now.)
		if c.held {
			// Claimed or renewed in this transaction, or by a recovery point.
			return tx.ExecLater(ctx, `UPDATE idempotency_keys SET state = 'done', status_code = ?, content_type = ?, body = ?,
				recovery_point = NULL, recovery_ref = NULL`+keyWhere+` AND state = 'in_flight'`,
				c.req.keyArgs(resp.Status, resp.ContentType, resp.Body)...)
		}
		now := tx.Now()
		r := c.req
		inserted = true
		q := `INSERT INTO idempotency_keys (merchant_id, livemode, principal_id, idem_key, method, path, request_hash,
			state, status_code, content_type, body, locked_until, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'done', ?, ?, ?, ?, ?)`
		args := []any{r.MerchantID, r.Livemode, r.PrincipalID, r.Key, r.Method, r.Path, r.Hash,
			resp.Status, resp.ContentType, resp.Body, store.Micros(now), store.Micros(now)}
		// An unread claim on SQLite whose transaction has not taken the
		// writer yet (the request's writes all wait for the commit): the
		// row goes first, so a key already answered fails the run before
		// any of its writes, and another request's work in the group's
		// shared transaction is not undone with it.
		if w, ok := tx.Writer(); ok && c.unread && w.Enter(q+onConflictNothing, args, errKeyTaken, nil) {
			return nil
		}
		return tx.ExecLater(ctx, q, args...)
	})
	if err != nil && (inserted && store.IsConflict(err) || errors.Is(err, errKeyTaken)) && c.heldByAnother(ctx) {
		return errClaimed
	}
	return err
}

// heldByAnother reads the key after this run's late write of it met the row
// of another run, and records what that row means for this one (Replayed,
// Refused). It reports false when no row is there to explain the conflict.
//
// It reads in the claim's unit of work: inside a recovery point's
// transaction when called from there, on its own once the unit has ended.
func (c *Claim) heldByAnother(ctx context.Context) bool {
	k, err := readKey(context.WithoutCancel(ctx), c.unit.Work(), c.req)
	if err != nil {
		if c.unread && store.IsNotFound(err) {
			// Purged since the write met it: a run after Lookup is clean.
			c.lookFirst = true
			return true
		}
		return false
	}
	found, err := k.judge(c.req, c.db.Now())
	if err != nil {
		c.err = err
		return true
	}
	return c.take(found)
}

// Abort rolls back what the request wrote since its last recovery point.
// Without one, nothing of the request remains, the key included, so a retry
// runs it afresh. After one, the key stays claimed at that point and its
// lease is released at once, so the next retry resumes from it.
//
// When the database cannot be reached to release the lease (it is restarting,
// or failing over), the release is made as soon as it can be, tried again in
// the background for as long as the lease would have held anyway; Abort then
// returns nil. A retry arriving once the database is back finds the key free,
// not held for the rest of a lease.
func (c *Claim) Abort(ctx context.Context) error {
	c.stopKeeping()
	c.unit.Rollback()
	if c.unit.Phases() == 0 {
		return nil
	}
	// The request has ended and answered: nothing of this run will send what
	// its recovery point references any more. Its lease ends now (a retry
	// takes the key over at once) and already past ResumeGrace, so
	// reconciliation need not wait for a retry that may never come: if it
	// settles the referenced object first, the retry answers that outcome.
	err := c.release(ctx)
	if err != nil && (store.IsConnLost(err) || errors.Is(err, store.ErrCommitUnknown)) {
		go c.releaseLater(context.WithoutCancel(ctx))
		return nil
	}
	return err
}

// ReleaseLease ends the lease this run holds on its key at a recovery
// point, if it still holds it, and stops its renewal; without a recovery
// point it does nothing. It is for a run whose answer's commit failed (the
// database went away) and whose request runs again: the next run then takes
// the key over from the point (or replays the answer, had the commit landed)
// instead of meeting this run's lease. An error (the database still away)
// leaves the lease as it was.
func (c *Claim) ReleaseLease(ctx context.Context) error {
	c.stopKeeping()
	if c.unit.Phases() == 0 {
		return nil
	}
	return c.release(ctx)
}

// release ends the lease of this run's key, if it still holds it: once its
// lease ran out, a run may have taken the key over (and written a lease of
// its own, which this run leaves alone).
func (c *Claim) release(ctx context.Context) error {
	cond, mine, ok := c.ours()
	if !ok {
		return nil
	}
	_, err := c.db.Exec(ctx, `UPDATE idempotency_keys SET locked_until = ?`+keyWhere+` AND state = 'in_flight'`+cond,
		append(c.req.keyArgs(store.Micros(c.db.Now().Add(-ResumeGrace))), mine...)...)
	return err
}

// releaseLater tries the release again every 200 ms until it is made, or
// until the lease has run out by itself (nothing is left to release then).
func (c *Claim) releaseLater(ctx context.Context) {
	end := time.Now().Add(c.req.lease())
	for time.Now().Before(end) {
		time.Sleep(200 * time.Millisecond)
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := c.release(actx)
		cancel()
		if err == nil {
			return
		}
	}
}

// keepLease renews the lease of the key this run holds at a recovery point,
// every third of the lease, until the run finishes or aborts (stopKeeping).
// A renewal takes effect only while the row holds a lease this run wrote:
// once it ran out (the database was away for a whole lease), a retry may
// have taken the key over, and this run then keeps nothing. A failed
// renewal is tried again at the next tick.
func (c *Claim) keepLease() {
	if c.keeping != nil {
		return
	}
	stop := make(chan struct{})
	c.keeping = stop
	lease := c.req.lease()
	go func() {
		t := time.NewTicker(max(lease/3, 10*time.Millisecond))
		defer t.Stop()
		end := time.Now().Add(maxHold)
		for time.Now().Before(end) {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			cond, mine, ok := c.ours()
			if !ok {
				return
			}
			until := store.Micros(c.db.Now().Add(lease))
			c.wrote(until)
			ctx, cancel := context.WithTimeout(context.Background(), max(lease/3, 10*time.Millisecond))
			res, err := c.db.Exec(ctx, `UPDATE idempotency_keys SET locked_until = ?`+keyWhere+` AND state = 'in_flight'`+cond,
				append(c.req.keyArgs(until), mine...)...)
			cancel()
			if err != nil {
				continue
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return // answered, released, or run out: nothing of ours to keep
			}
		}
	}()
}

// stopKeeping stops the renewal of the lease, without waiting for a renewal
// under way: one that lands after the run's answer or release finds the row
// answered or its lease ended, and changes nothing.
func (c *Claim) stopKeeping() {
	if c.keeping != nil {
		close(c.keeping)
		c.keeping = nil
	}
}

// RecoveryPoint commits the request's writes so far together with a
// recovery point (a name and a reference) on its key, before the request
// calls a provider. A retry after a crash resumes from the last point (see
// Resuming) instead of repeating what committed (store.Claim).
func (c *Claim) RecoveryPoint(ctx context.Context, point, ref string) error {
	err := c.unit.Checkpoint(ctx, func(tx *store.Tx) error {
		if c.unread && !c.held {
			// SQLite: the transaction's entry claims the key in flight
			// when it takes the writer (open).
			if w, ok := tx.Writer(); ok {
				if err := w.TakeWriter(ctx); err != nil {
					if errors.Is(err, errKeyTaken) && c.heldByAnother(ctx) {
						return errClaimed
					}
					return err
				}
			}
		}
		if c.held {
			_, err := tx.Exec(ctx, `UPDATE idempotency_keys SET recovery_point = ?, recovery_ref = ?`+keyWhere+` AND state = 'in_flight'`,
				c.req.keyArgs(point, ref)...)
			return err
		}
		// The key's row is written here, with the point: the request's
		// writes so far and its claim commit together.
		inserted, err := c.insertInFlight(ctx, tx, point, ref)
		if err != nil || inserted {
			return err
		}
		// Another run of the request holds or answered the key (on
		// PostgreSQL the INSERT waited for its transaction to end).
		if !c.heldByAnother(ctx) {
			return fmt.Errorf("idempotency: the key's row conflicts but cannot be read")
		}
		return errClaimed
	})
	if err == nil {
		c.held = true
		c.keepLease()
	}
	return err
}

// ResumeGrace is how long after its lease ran out a request's recovery
// point still holds what it references against reconciliation: a client
// retrying with backoff comes back within it and resumes (and sends what the
// crashed run had not sent yet). Once it has passed, reconciliation may
// decide that a payment the provider never saw was never taken; a later
// retry then answers that outcome.
const ResumeGrace = 15 * time.Minute

// Holds reports whether an idempotent request in flight holds ref at a
// recovery point: its lease has not run out more than ResumeGrace before
// now. Run it in the transaction that would decide about ref: on PostgreSQL
// it locks the key's row, so a retry taking the key over concurrently (its
// first write renews the lease) is either seen or sees that decision.
func Holds(ctx context.Context, tx *store.Tx, ref string, now time.Time) (bool, error) {
	rows, err := tx.Query(ctx, `SELECT locked_until FROM idempotency_keys WHERE recovery_ref = ? AND state = 'in_flight'`+tx.Dialect().ForUpdate(), ref)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	held := false
	for rows.Next() {
		var until int64
		if err := rows.Scan(&until); err != nil {
			return false, err
		}
		if store.FromMicros(until).Add(ResumeGrace).After(now) {
			held = true
		}
	}
	return held, rows.Err()
}
