package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/idempotency"
	"github.com/payd/payd/internal/store"
)

// maxRuns bounds how often one idempotent request is run again because its
// unit of work met a transient conflict (a deadlock, a serialization
// failure) before anything of it committed, or read its key first.
const maxRuns = 8

// connLostPatience bounds, instead, the runs of a request whose unit of work
// lost its database connection before anything of it committed (a restart,
// a terminated backend, a network cut): it runs again after a growing pause
// (connLostPause) until this long after the request arrived, however many
// runs that takes. A restart refuses connections for seconds, and backends
// terminated again and again end every run that is under way at that moment;
// a count of runs would give up within milliseconds of the first, or on a
// slow machine, where a run under way is likelier to be hit.
const connLostPatience = 10 * time.Second

// maxPausing bounds the requests of one process that pause to run again
// after a lost connection, whatever principals sent them: while the database
// is down every keyed request would otherwise hold its goroutine and its
// body for connLostPatience. A request past the bound answers 503 at once.
const maxPausing = 256

// connLostPause is the pause before the run after run (1-based) when that run
// lost its connection: 5 ms doubling to at most 250 ms.
func connLostPause(run int) time.Duration {
	return min(5*time.Millisecond<<min(run-1, 6), 250*time.Millisecond)
}

// runAgain reports whether a request whose run'th run failed with err (one
// that committed nothing) runs again, after pausing when the connection was
// lost: not once the request has waited s.patience since it arrived, nor
// while s.maxPausing other requests pause.
func (s *Server) runAgain(run int, arrived time.Time, err error) bool {
	if !store.IsConnLost(err) {
		return run < maxRuns
	}
	if time.Since(arrived) >= s.patience {
		return false
	}
	if s.pausing.Add(1) > s.maxPausing {
		s.pausing.Add(-1)
		return false
	}
	defer s.pausing.Add(-1)
	time.Sleep(connLostPause(run))
	return true
}

// giveUp answers err for a request that is not run again: a lost
// connection as 503 database_unavailable with Retry-After (nothing of the
// request committed and its key holds nothing, so the client retries it
// with the same key), anything else as WriteError does.
func giveUp(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(w, r, databaseUnavailable(w, err))
}

// databaseUnavailable turns a database that could not take the request's
// writes (a lost or refused connection, a server that takes no writes: a
// standby during a failover; store.IsUnavailable), or a commit whose outcome
// the database never told, into 503 database_unavailable with Retry-After
// (set on w): the request's work since its last recovery point did not
// commit, or may not have, and a retry with the same Idempotency-Key settles
// it (it replays the answer that committed, resumes from the recovery point,
// or runs afresh). Any other error is returned as it is.
func databaseUnavailable(w http.ResponseWriter, err error) error {
	if !unavailable(err) {
		return err
	}
	w.Header().Set("Retry-After", "1")
	return &errs.Error{Kind: errs.KindInternal, Status: http.StatusServiceUnavailable, Code: "database_unavailable",
		Message: "payd could not reach its database; nothing more was done: retry the request (with the same Idempotency-Key, if it had one)", Err: err}
}

// unavailable reports whether err means the database could not take the
// request's writes now (databaseUnavailable).
func unavailable(err error) bool {
	return store.IsUnavailable(err) || errors.Is(err, store.ErrCommitUnknown)
}

// idempotent runs h under an idempotency key as one unit of work: the key's
// claim, everything h writes and the response h answers commit in one
// transaction, and only then is the response sent. A stored answer is
// replayed byte for byte with Idempotent-Replayed: true.
//
// The response is buffered until the commit, so a client never sees an
// answer the database does not hold. A run whose unit of work lost its
// connection (or met a deadlock) before anything committed is run again
// here, with the same body; a commit whose outcome is unknown is settled by
// looking the key up again (its stored answer proves the commit).
//
// An upload route's body is spooled to a temporary file instead of memory
// (uploads.go); each run reads it from there through BodyReader.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, key string, rt route, h HandlerFunc) {
	if len(key) > 255 {
		WriteError(w, r, errs.Invalid("Idempotency-Key", "idempotency_key_invalid", "Idempotency-Key must be at most 255 characters"))
		return
	}
	var body []byte
	var hash string
	if rt.upload {
		sp, sum, err := spool(r)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		defer sp.Close()
		hash = sum
		r = r.WithContext(context.WithValue(r.Context(), spoolKey{}, sp))
	} else {
		var err error
		if body, err = ReadBody(r); err != nil {
			WriteError(w, r, err)
			return
		}
		hash = idempotency.RequestHash(r.Method, r.URL.Path, body)
		r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, body))
	}
	p := auth.Must(r.Context())
	req := idempotency.Request{Scope: idempotency.Scope{MerchantID: p.MerchantID, Livemode: p.Livemode, PrincipalID: p.ID},
		Key: key, Method: r.Method, Path: r.URL.Path, Hash: hash,
		Lease: s.cfg.IdempotencyLease}
	// A duplicate arriving at this process while the first still runs is
	// refused at once (409); one arriving at another process cannot see a
	// claim that has not committed, so it runs to its last statement (the
	// key's row), which waits for the first's commit and fails; its own
	// writes roll back and it replays the first's answer.
	running := req.MerchantID + "\x00" + strconv.FormatBool(req.Livemode) + "\x00" + req.PrincipalID + "\x00" + key
	if _, busy := s.running.LoadOrStore(running, struct{}{}); busy {
		WriteError(w, r, idempotency.ErrInUse)
		return
	}
	defer s.running.Delete(running)
	arrived := time.Now()
	// held is a run past a recovery point whose answer did not commit, or
	// may not have (the database went away): the key's lease is still this
	// request's own. It is released before the next run reads the key, so
	// that run resumes from the point (or replays the answer, had it
	// committed) instead of meeting the lease (409 idempotency_key_in_use);
	// while the database is still away the release fails as the read would.
	var held *idempotency.Claim
	defer func() {
		if held != nil {
			held.Abort(context.WithoutCancel(r.Context()))
		}
	}()
	for run := 1; ; run++ {
		if held != nil && held.ReleaseLease(context.WithoutCancel(r.Context())) == nil {
			held = nil
		}
		// An upload's run is the work of a whole batch (parsing and
		// screening every row): its key is read first, so a replay costs
		// a read, not that work.
		ctx, claim, stored, err := s.claim(r, req, rt.claimAtOnce, run > 1 || rt.upload)
		if stored != nil {
			writeReplay(w, stored)
			return
		}
		if err != nil {
			// The run failed reading its key or beginning its unit, before
			// anything of it could commit: a lost or refused connection
			// there (the database restarting) is run again like any other.
			retryable := claim != nil && claim.Unit().Retryable() ||
				store.IsConnLost(err) && (claim == nil || claim.Unit().Phases() == 0)
			if claim != nil {
				claim.Abort(context.WithoutCancel(r.Context()))
			}
			if retryable && s.runAgain(run, arrived, err) {
				continue
			}
			giveUp(w, r, err)
			return
		}
		if claim.Replayed() != nil || claim.Refused() != nil {
			s.settle(w, r, claim, newBufferedResponse())
			return
		}
		rr := r.WithContext(ctx)
		rr.Body = io.NopCloser(BodyReader(rr))
		resp := newBufferedResponse()
		herr := runClaimed(h, resp, rr, claim)
		if herr != nil && store.IsConnLost(herr) && claim.Unit().Phases() == 0 && claim.Unit().Err() == nil {
			// A read outside the unit met a dead connection: nothing of
			// this run committed, so it simply runs again.
			claim.Abort(context.WithoutCancel(r.Context()))
			if s.runAgain(run, arrived, herr) {
				LoggerFrom(r.Context()).Warn("idempotent request run again", "run", run, "err", herr)
				continue
			}
			giveUp(w, r, herr)
			return
		}
		if herr != nil {
			// A request past a recovery point whose database went away
			// (its provider's answer could not be recorded) answers 503,
			// not 500: its retry resumes from the point.
			WriteError(resp, rr, databaseUnavailable(resp, herr))
		}
		if again := s.settle(w, r, claim, resp); !again {
			return
		}
		if claim.Unit().Phases() > 0 {
			held = claim
		}
		// A lost connection pauses and runs again however the run
		// began (a run after the first reads its key first): while the
		// database restarts, runs that follow each other without a pause
		// would use up their count in milliseconds.
		uerr := claim.Unit().Err()
		if store.IsGroupAborted(uerr) {
			// Another request's rollback undid this run's work (SQLite
			// group commit): the next run is careful, so that others'
			// failures cost this request one run at most.
			r = r.WithContext(store.Careful(r.Context()))
		}
		if claim.LookFirst() && !store.IsConnLost(uerr) && run < maxRuns {
			LoggerFrom(r.Context()).Info("idempotent request runs again after reading its key", "run", run)
			continue
		}
		if s.runAgain(run, arrived, uerr) {
			LoggerFrom(r.Context()).Warn("idempotent request run again", "run", run, "err", uerr)
			continue
		}
		if unavailable(uerr) {
			giveUp(w, r, uerr)
		} else {
			WriteError(w, r, errs.Internal(uerr))
		}
		return
	}
}

// runClaimed runs h under claim. Should h panic, the claim is aborted
// before the panic goes on to the outer middleware (which answers 500): the
// run's open transaction rolls back and, past a recovery point, its key's
// lease renewals stop and the lease is released, as for any run that ended
// without an answer; otherwise the renewals would hold the key, every retry
// answering 409, until they gave up.
func runClaimed(h HandlerFunc, w http.ResponseWriter, r *http.Request, claim *idempotency.Claim) error {
	defer func() {
		if p := recover(); p != nil {
			claim.Abort(context.WithoutCancel(r.Context()))
			panic(p)
		}
	}()
	return h(w, r)
}

// claim starts one run of an idempotent request. On PostgreSQL, for a route
// marked ClaimAtOnce, the key is claimed at once, in the round trip that
// begins the transaction; otherwise (and always on SQLite, where an open
// transaction holds the one writer) the key is claimed by the request's
// write of its row, so no connection is held before it. The first run does
// not read the key (idempotency.StartUnread: the key's write meets a stored
// answer as surely); a run again after it, and an upload (lookFirst), reads
// it first, and the answer stored under it, if any, is returned to replay.
func (s *Server) claim(r *http.Request, req idempotency.Request, atOnce, lookFirst bool) (context.Context, *idempotency.Claim, *idempotency.Stored, error) {
	if atOnce && s.cfg.DB.Engine().ConcurrentWriters() {
		ctx, claim, err := idempotency.StartClaimed(r.Context(), s.cfg.DB, req)
		return ctx, claim, nil, err
	}
	if !lookFirst {
		ctx, claim := idempotency.StartUnread(r.Context(), s.cfg.DB, req)
		return ctx, claim, nil, nil
	}
	found, err := idempotency.Lookup(r.Context(), s.cfg.DB, req)
	if err != nil || found.Replay != nil {
		return nil, nil, found.Replay, err
	}
	ctx, claim := idempotency.Start(r.Context(), s.cfg.DB, req, found)
	return ctx, claim, nil, nil
}

// settle commits or rolls back one run of an idempotent request and answers
// it; it returns true, having answered nothing, when the request should run
// again.
func (s *Server) settle(w http.ResponseWriter, r *http.Request, claim *idempotency.Claim, resp *bufferedResponse) (again bool) {
	bg := context.WithoutCancel(r.Context())
	unit := claim.Unit()
	if stored := claim.Replayed(); stored != nil {
		claim.Abort(bg)
		writeReplay(w, stored)
		return false
	}
	if err := claim.Refused(); err != nil {
		claim.Abort(bg)
		WriteError(w, r, err)
		return false
	}
	if claim.LookFirst() {
		// The key's row needs reading before the request runs (a recovery
		// point to resume from); this run wrote nothing that remains.
		claim.Abort(bg)
		return true
	}
	if unit.Retryable() {
		claim.Abort(bg)
		return true
	}
	if !storable(resp.status, unit) {
		if err := claim.Abort(bg); err != nil {
			LoggerFrom(r.Context()).Error("release idempotency key", "err", err)
		}
		// A run that skipped reading its key (PostgreSQL) may be a retry of
		// a request already answered: that answer, not this run's failure.
		if claim.LookUp(bg) != nil && (claim.Replayed() != nil || claim.Refused() != nil || claim.LookFirst()) {
			return s.settle(w, r, claim, resp)
		}
		resp.send(w)
		return false
	}
	err := claim.Finish(bg, idempotency.Stored{Status: resp.status, ContentType: resp.header.Get("Content-Type"), Body: resp.buf.Bytes()})
	switch {
	case err == nil:
		resp.send(w)
		return false
	case errors.Is(err, store.ErrCommitUnknown) || store.IsConnLost(err):
		// Whether it committed shows in the key: the next run replays
		// the stored answer, or runs the request again.
		return true
	case claim.Replayed() != nil:
		// The key's row is written only here (unless claimed early), and
		// another run of the request answered it meanwhile (a process
		// killed as it committed: its commit became visible after this
		// run looked the key up); this run's writes rolled back. Its
		// answer, as any retry would get.
		writeReplay(w, claim.Replayed())
		return false
	case claim.Refused() != nil:
		// Likewise, another run holds the key (409) or it was used for
		// another request (422).
		WriteError(w, r, claim.Refused())
		return false
	case claim.LookFirst():
		// The key's row is an earlier run's recovery point, or past
		// retention: this run rolled back, and the next looks it up first.
		return true
	case unit.Retryable():
		// A transient failure while storing, before anything committed.
		return true
	}
	WriteError(w, r, errs.Internal(err))
	return false
}

// storable reports whether an answer becomes the key's stored answer. Below
// 500 always (a validation error replays too). A provider's 502 or 504
// after the request recorded the provider's outcome (an intent canceled on
// a timeout) is stored with it, since that outcome must not be recorded
// twice. Any other 5xx (503 unavailable, 500) and a client that went away
// (499) roll the request back: no key is left, or the key stays at its last
// recovery point, and a retry runs cleanly.
func storable(status int, unit *store.Unit) bool {
	switch {
	case status < 499:
		return true
	case status == http.StatusBadGateway || status == http.StatusGatewayTimeout:
		return unit.Wrote() && unit.Err() == nil
	}
	return false
}

func writeReplay(w http.ResponseWriter, stored *idempotency.Stored) {
	w.Header().Set("Idempotent-Replayed", "true")
	if stored.ContentType != "" {
		w.Header().Set("Content-Type", stored.ContentType)
	}
	w.WriteHeader(stored.Status)
	w.Write(stored.Body)
}

// bufferedResponse holds a handler's answer until its unit of work has
// committed.
type bufferedResponse struct {
	header http.Header
	status int
	wrote  bool
	buf    bytes.Buffer
	// onSend runs when the answer is sent (the log line of an internal
	// error, which a discarded answer does not write).
	onSend []func()
}

func newBufferedResponse() *bufferedResponse {
	return &bufferedResponse{header: http.Header{}, status: http.StatusOK}
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if !b.wrote {
		b.status, b.wrote = code, true
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.wrote = true
	return b.buf.Write(p)
}

// send writes the held answer to w.
func (b *bufferedResponse) send(w http.ResponseWriter) {
	for _, f := range b.onSend {
		f()
	}
	for k, v := range b.header {
		w.Header()[k] = v
	}
	w.WriteHeader(b.status)
	w.Write(b.buf.Bytes())
}
