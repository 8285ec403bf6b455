package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/idempotency"
	"github.com/payd/payd/internal/store"
)

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
		return run < idempotency.MaxRuns
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
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, key string, rt route, h ClaimedFunc) {
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
	leave, err := s.running.Enter(r.Context(), req, false)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	defer leave()
	arrived := time.Now()
	var resp *bufferedResponse
	out := idempotency.Run(r.Context(), s.cfg.DB, req, idempotency.Options{
		AtOnce: rt.claimAtOnce,
		// An upload's run is the work of a whole batch (parsing and
		// screening every row): its key is read first, so a replay costs
		// a read, not that work.
		LookFirst: rt.upload,
		Again:     func(run int, err error) bool { return s.runAgain(run, arrived, err) },
		Logger:    LoggerFrom(r.Context()),
	}, func(ctx context.Context, claim *idempotency.Claim) (idempotency.Answer, error) {
		rr := r.WithContext(ctx)
		rr.Body = io.NopCloser(BodyReader(rr))
		resp = newBufferedResponse()
		herr := h(resp, rr, claim)
		if herr != nil && store.IsConnLost(herr) && claim.Unit().Phases() == 0 && claim.Unit().Err() == nil {
			// A read outside the unit met a dead connection: nothing of
			// this run committed, so it simply runs again.
			return idempotency.Answer{}, herr
		}
		if herr != nil {
			// A request past a recovery point whose database went away
			// (its provider's answer could not be recorded) answers 503,
			// not 500: its retry resumes from the point.
			WriteError(resp, rr, databaseUnavailable(resp, herr))
		}
		return idempotency.Answer{Keep: storable(resp.status, claim.Unit()),
			Stored: idempotency.Stored{Status: resp.status, ContentType: resp.header.Get("Content-Type"), Body: resp.buf.Bytes()}}, nil
	})
	switch {
	case out.Replay != nil:
		writeReplay(w, out.Replay)
	case out.Answered:
		resp.send(w)
	case out.Stage == idempotency.StageRefused, out.Stage == idempotency.StageClaim, out.Stage == idempotency.StageRun:
		giveUp(w, r, out.Err)
	case unavailable(out.Err):
		// The database took no writes (gone, or a standby), including
		// when storing the answer: nothing committed, and a retry with
		// the key settles it.
		giveUp(w, r, out.Err)
	default:
		WriteError(w, r, errs.Internal(out.Err))
	}
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
