package webhooks

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/tracing"
	"github.com/payd/payd/webhook"
)

// MaxResponseKept is how much of a receiver's answer an attempt keeps (in the
// database only, never in the API: it may hold anything).
const MaxResponseKept = 2048

// FailFirstMessage is the error recorded for the first attempt of a delivery
// under the sandbox_webhook_fail scenario.
const FailFirstMessage = "sandbox_webhook_fail: the first attempt of this delivery is recorded failed without sending; it is retried on schedule"

// claimed is a delivery this process holds the lease of.
type claimed struct {
	id         string
	lease      string
	attempts   int // attempts recorded before this one
	failFirst  bool
	livemode   bool
	endpointID string
	// Filled by load: the event and the endpoint (absent when gone).
	event    *events.Event
	url      string
	sealed   string
	epStatus string
	epGone   bool
	// The secret a rotation replaced and until when it signs too (micros;
	// 0 when none).
	prevSealed  string
	prevExpires int64
}

// runDeliverer claims due deliveries and sends them, at most conc at once.
// Outcomes go to the recorder, which writes them in batches. When slots free
// up while more deliveries are due, it claims again once a quarter of the
// slots are free, so claims stay batched under load.
func (s *Service) runDeliverer(ctx context.Context) {
	rec := newRecorder(s)
	recDone := make(chan struct{})
	go func() { defer close(recDone); rec.run() }()
	sem := make(chan struct{}, s.conc)
	freed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		close(rec.in)
		<-recDone
	}()
	t := time.NewTimer(0)
	defer t.Stop()
	// left: the last claim left due deliveries behind. slotBound: because
	// every slot of this process was taken (then claims wait for a quarter
	// of the slots, to stay batched under load); otherwise a cap held them
	// back, and any finishing attempt may make room.
	left, slotBound := false, false
	for {
		claimNow := true
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wakeDeliver:
		case <-freed:
			free := cap(sem) - len(sem)
			claimNow = left && (!slotBound || free >= max(1, cap(sem)/4))
		case <-s.recorded:
			// Leases just ended: room under a cap, or a retry due soon.
			free := cap(sem) - len(sem)
			claimNow = !slotBound || free >= max(1, cap(sem)/4)
		}
		if !claimNow {
			continue
		}
		if free := cap(sem) - len(sem); free == 0 {
			left, slotBound = true, true // a finishing attempt wakes us
		} else if ctx.Err() == nil {
			batch, more, err := s.claim(ctx, free)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Error("claim webhook deliveries", "err", err)
				}
			}
			for _, c := range batch {
				sem <- struct{}{}
				wg.Add(1)
				go func(c claimed) {
					defer func() {
						<-sem
						wg.Done()
						select {
						case freed <- struct{}{}:
						default:
						}
					}()
					if o, ok := s.attempt(ctx, c); ok {
						rec.in <- recordItem{c, o}
					}
				}(c)
			}
			left, slotBound = more, more && len(batch) == free
		}
		// Wake for the next retry that falls due; when work was held back
		// by a cap, a finishing attempt here wakes us, and the poll covers
		// attempts finishing in other processes.
		wait := s.poll
		if len(sem) < cap(sem) {
			if next, ok := s.nextDue(ctx); ok {
				if d := time.Until(next); d < wait {
					wait = max(d, time.Millisecond)
				}
			}
			// An endpoint's max_rate held deliveries back: claim again
			// when it allows the next one.
			if at := s.rateWake.Load(); at != 0 {
				if d := time.Until(store.FromMicros(at)); d < wait {
					wait = max(d, time.Millisecond)
				}
			}
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(wait)
	}
}

// nextDue is when the earliest pending delivery that is not due yet
// becomes due. (One to an endpoint payd disabled may wake the worker for
// nothing; the index answers this at once, which a filter would not.)
func (s *Service) nextDue(ctx context.Context) (time.Time, bool) {
	var next sql.NullInt64
	if err := s.db.QueryRow(ctx, "SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > ?",
		store.Micros(s.db.Now())).Scan(&next); err != nil || !next.Valid {
		return time.Time{}, false
	}
	return store.FromMicros(next.Int64), true
}

// claim leases up to n due deliveries, shared fairly among merchants and
// endpoints (see allocate): their next_attempt_at moves to the lease's end,
// so if this process dies they are due again then, and a lease token
// ensures only the holder records the outcome. left reports due deliveries
// not taken (for want of slots, or held back by a cap).
func (s *Service) claim(ctx context.Context, n int) (out []claimed, left bool, err error) {
	lease := ids.Secret("", 10) + ":"
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		out, left = out[:0], false
		if err := tx.AdvisoryLockID(ctx, claimLockID); err != nil {
			return err
		}
		now := store.Micros(tx.Now())
		work, merchantInflight, err := dueWorkAt(ctx, tx, now, n)
		if err != nil {
			return err
		}
		for _, w := range work {
			w.fast = s.fast.fast(w.endpointID)
		}
		rateNext, rateWake, err := limitRates(ctx, tx, work, now)
		if err != nil {
			return err
		}
		s.rateWake.Store(rateWake)
		left = allocate(work, merchantInflight, n, s.epConc, s.merchantConc) || rateWake != 0
		paused, err := pausedNow(ctx, tx, work)
		if err != nil {
			return err
		}
		eventIDs := map[string][]int{}
		for _, w := range work {
			if w.take == 0 || paused[w.endpointID] {
				continue
			}
			rows, err := tx.Query(ctx, `UPDATE webhook_deliveries SET lease = ? || id, next_attempt_at = ?, updated_at = ?
				WHERE id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending' AND next_attempt_at <= ?
				ORDER BY endpoint_id, next_attempt_at LIMIT ?`+tx.Dialect().ForUpdateSkipLocked()+`)
				RETURNING id, attempt_count, fail_first, livemode, endpoint_id, event_id`,
				lease, now+s.lease.Microseconds(), now, w.endpointID, now, w.take)
			if err != nil {
				return err
			}
			leased := 0
			for rows.Next() {
				leased++
				var c claimed
				var eventID string
				if err := rows.Scan(&c.id, &c.attempts, &c.failFirst, &c.livemode, &c.endpointID, &eventID); err != nil {
					rows.Close()
					return err
				}
				c.lease = lease + c.id // each claim's lease names its delivery
				out = append(out, c)
				eventIDs[eventID] = append(eventIDs[eventID], len(out)-1)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if w.maxRate > 0 && leased > 0 {
				if err := spendRate(ctx, tx, w, rateNext[w.endpointID], leased, now); err != nil {
					return err
				}
			}
		}
		return s.load(ctx, tx, out, eventIDs)
	})
	return out, left, err
}

// load reads the events and endpoints of claimed deliveries.
func (s *Service) load(ctx context.Context, tx *store.Tx, out []claimed, eventIDs map[string][]int) error {
	if len(out) == 0 {
		return nil
	}
	args := make([]any, 0, len(eventIDs))
	for id := range eventIDs {
		args = append(args, id)
	}
	ph, in := store.PaddedIn(args)
	rows, err := tx.Query(ctx, "SELECT "+events.TracedColumns+" FROM events WHERE id IN ("+ph+")", in...)
	if err != nil {
		return err
	}
	for rows.Next() {
		ev, err := events.ScanTraced(rows)
		if err != nil {
			rows.Close()
			return err
		}
		for _, i := range eventIDs[ev.ID] {
			e := ev
			out[i].event = &e
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	epIdx := map[string][]int{}
	for i, c := range out {
		epIdx[c.endpointID] = append(epIdx[c.endpointID], i)
	}
	args = args[:0]
	for id := range epIdx {
		args = append(args, id)
	}
	ph, in = store.PaddedIn(args)
	erows, err := tx.Query(ctx, `SELECT id, url, secret_sealed, status, deleted_at, previous_secret_sealed, previous_secret_expires_at
		FROM webhook_endpoints WHERE id IN (`+ph+")", in...)
	if err != nil {
		return err
	}
	defer erows.Close()
	found := map[string]bool{}
	for erows.Next() {
		var id, url, sealed, status string
		var deleted, prevExpires sql.NullInt64
		var prevSealed sql.NullString
		if err := erows.Scan(&id, &url, &sealed, &status, &deleted, &prevSealed, &prevExpires); err != nil {
			return err
		}
		found[id] = true
		for _, i := range epIdx[id] {
			out[i].url, out[i].sealed, out[i].epStatus, out[i].epGone = url, sealed, status, deleted.Valid
			out[i].prevSealed, out[i].prevExpires = prevSealed.String, prevExpires.Int64
		}
	}
	for id, idx := range epIdx {
		if !found[id] {
			for _, i := range idx {
				out[i].epGone = true
			}
		}
	}
	return erows.Err()
}

// outcome is what one attempt produced.
type outcome struct {
	at         time.Time
	httpStatus int // 0: no HTTP answer
	latency    time.Duration
	err        string // "" on success
	response   string
	final      bool // do not retry whatever the schedule says
	// sent: a request was made to the endpoint (whatever came of it), so
	// the outcome counts for the endpoint's circuit breaker.
	sent bool
}

func (o outcome) ok() bool { return o.err == "" }

// attempt makes one attempt at a claimed delivery and returns what to
// record; ok is false when there is nothing to record (shutting down).
func (s *Service) attempt(ctx context.Context, c claimed) (outcome, bool) {
	var o outcome
	switch {
	case c.event == nil:
		o = outcome{at: time.Now(), err: "the event no longer exists (purged: test-mode data after 30 days, any event past its retention); not sent", final: true}
	case c.epGone:
		o = outcome{at: time.Now(), err: "the webhook endpoint was deleted; not sent", final: true}
	case c.epStatus != EndpointEnabled:
		o = outcome{at: time.Now(), err: "the webhook endpoint is disabled; not sent", final: true}
	case c.failFirst && c.attempts == 0:
		o = outcome{at: time.Now(), err: FailFirstMessage}
		s.metrics.attempts.WithLabelValues("sandbox_fail").Inc()
	default:
		o = s.send(ctx, c)
	}
	if ctx.Err() != nil && !o.ok() && c.event != nil && !o.final && o.httpStatus == 0 {
		// Shutting down mid-attempt: give the delivery back, due now, so
		// another process (or this one after a restart) makes the attempt.
		s.release(context.WithoutCancel(ctx), c)
		return o, false
	}
	return o, true
}

// send posts the event to the endpoint, signed.
func (s *Service) send(ctx context.Context, c claimed) outcome {
	secrets, err := s.signingSecrets(ctx, c, time.Now())
	if err != nil {
		s.log.Error("open webhook endpoint secret", "endpoint_id", c.endpointID, "err", err)
		return outcome{at: time.Now(), err: "payd could not read the endpoint's signing secret; not sent"}
	}
	body, err := json.Marshal(c.event.Envelope())
	if err != nil {
		return outcome{at: time.Now(), err: "payd could not encode the event; not sent", final: true}
	}
	// One span per attempt, the root of a trace of its own (an attempt may
	// come hours after the request, and retries are many), with a span link
	// to the request that emitted the event when its trace context was
	// stored with the event (tracing on, request sampled).
	ctx, span := tracing.StartClientLinked(ctx, "webhook delivery", c.event.TraceParent)
	defer span.End()
	if span.Recording() {
		span.SetString("payd.webhook.delivery_id", c.id)
		span.SetString("payd.webhook.endpoint_id", c.endpointID)
		span.SetString("payd.event_id", c.event.ID)
		span.SetString("payd.event_type", c.event.Type)
		span.SetInt("payd.webhook.attempt", c.attempts+1)
		span.SetBool("payd.livemode", c.livemode)
	}
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return outcome{at: start, err: "invalid endpoint URL: " + err.Error(), final: true}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "payd-webhooks/1")
	req.Header.Set(webhook.HeaderEventID, c.event.ID)
	req.Header.Set(webhook.HeaderEventType, c.event.Type)
	req.Header.Set(webhook.HeaderSignature, webhook.SignatureHeaderSecrets(secrets, start, c.event.ID, body))
	tracing.Inject(ctx, req.Header)
	resp, err := s.client(c.livemode).Do(req)
	if err != nil {
		span.Fail("no answer from the endpoint")
		o := outcome{at: start, latency: time.Since(start), err: describeSendError(err, s.timeout), sent: true}
		s.metrics.attempts.WithLabelValues("error").Inc()
		s.metrics.latency.Observe(o.latency.Seconds())
		return o
	}
	kept, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseKept))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so the connection can be reused
	resp.Body.Close()
	o := outcome{at: start, latency: time.Since(start), httpStatus: resp.StatusCode, response: safeText(kept), sent: true}
	span.SetInt("http.response.status_code", resp.StatusCode)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		span.Fail("the endpoint did not answer 2xx")
		o.err = "the endpoint answered HTTP " + strconv.Itoa(resp.StatusCode) + " (only 2xx acknowledges a delivery)"
		s.metrics.attempts.WithLabelValues("non_2xx").Inc()
	} else {
		s.metrics.attempts.WithLabelValues("succeeded").Inc()
	}
	s.metrics.latency.Observe(o.latency.Seconds())
	return o
}

// signingSecrets are the secrets that sign an attempt made at: the
// endpoint's secret, and the one its last rotation replaced while that has
// not expired.
func (s *Service) signingSecrets(ctx context.Context, c claimed, at time.Time) ([]string, error) {
	secret, err := s.openSecret(ctx, c.sealed, c.endpointID)
	if err != nil {
		return nil, err
	}
	if c.prevSealed == "" || store.Micros(at) >= c.prevExpires {
		return []string{secret}, nil
	}
	prev, err := s.openSecret(ctx, c.prevSealed, c.endpointID)
	if err != nil {
		// The current secret still signs: send with it alone rather than
		// not at all.
		s.log.Error("open webhook endpoint's previous secret", "endpoint_id", c.endpointID, "err", err)
		return []string{secret}, nil
	}
	return []string{secret, prev}, nil
}

// describeSendError says why no answer came, without internals.
func describeSendError(err error, timeout time.Duration) string {
	var ne net.Error
	switch {
	case errors.Is(err, ErrAddressRefused):
		var msg string
		for e := err; e != nil; e = errors.Unwrap(e) {
			if strings.HasPrefix(e.Error(), ErrAddressRefused.Error()) {
				msg = e.Error()
				break
			}
		}
		if msg == "" {
			msg = ErrAddressRefused.Error()
		}
		return "refused to connect: " + strings.TrimPrefix(msg, ErrAddressRefused.Error()+": ")
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer within %s", timeout)
	case strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	case strings.Contains(err.Error(), "no such host"):
		return "the endpoint's host name does not resolve"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), strings.Contains(err.Error(), "connection reset"):
		return "the connection was closed before an answer"
	case strings.Contains(err.Error(), "tls:"), strings.Contains(err.Error(), "x509:"):
		return "TLS handshake failed: " + lastPart(err.Error())
	}
	return "delivery failed: " + lastPart(err.Error())
}

func lastPart(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// safeText keeps a response body as valid UTF-8 text.
func safeText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// retryWait is the wait before retry n (1-based) with up to 20% added
// jitter, so retries of many deliveries do not arrive together; it is never
// shorter than the schedule says. ok is false when the schedule is exhausted.
func (s *Service) retryWait(n int) (time.Duration, bool) {
	if n < 1 || n > len(s.schedule) {
		return 0, false
	}
	d := s.schedule[n-1]
	if !s.noJitter && d > 0 {
		d += time.Duration(rand.Int64N(int64(d)/5 + 1))
	}
	return d, true
}

// recordItem is one attempt's outcome waiting to be written.
type recordItem struct {
	c claimed
	o outcome
}

// recorder writes attempt outcomes, many per transaction.
type recorder struct {
	s  *Service
	in chan recordItem
}

// recordBatch bounds the outcomes written in one transaction.
const recordBatch = 64

func newRecorder(s *Service) *recorder {
	return &recorder{s: s, in: make(chan recordItem, s.conc)}
}

// run writes outcomes until in is closed and drained.
func (r *recorder) run() {
	ctx := context.Background()
	batch := make([]recordItem, 0, recordBatch)
	for it := range r.in {
		batch = append(batch[:0], it)
	more:
		for len(batch) < recordBatch {
			select {
			case it, ok := <-r.in:
				if !ok {
					break more
				}
				batch = append(batch, it)
			default:
				break more
			}
		}
		if err := r.s.record(ctx, batch); err != nil {
			// The deliveries stay leased; when the lease expires they are
			// attempted again (at least once).
			r.s.log.Error("record webhook attempts", "attempts", len(batch), "err", err)
		}
	}
}

// record stores attempts and moves their deliveries on, each only if this
// process still holds its lease: succeeded on 2xx; otherwise pending until
// the next retry, or failed once the schedule is exhausted. An attempt row is
// written even when the lease was lost (the request did go out). One
// transaction, a few statements, for the whole batch.
func (s *Service) record(ctx context.Context, items []recordItem) error {
	finished := map[string]int{}
	var disabled []Endpoint
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		clear(finished)
		disabled = disabled[:0]
		now := tx.Now()
		if err := insertAttempts(ctx, tx, items, now); err != nil {
			return err
		}
		var done = map[string][]claimed{}
		for _, it := range items {
			c, o := it.c, it.o
			n := c.attempts + 1
			switch {
			case o.ok():
				done[DeliverySucceeded] = append(done[DeliverySucceeded], c)
				continue
			case o.final:
				done[DeliveryFailed] = append(done[DeliveryFailed], c)
				continue
			}
			wait, ok := s.retryWait(n)
			if !ok {
				done[DeliveryFailed] = append(done[DeliveryFailed], c)
				continue
			}
			res, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET attempt_count = ?, next_attempt_at = ?, lease = NULL, updated_at = ?
				WHERE id = ? AND lease = ? AND status = 'pending'`, n, store.Micros(now.Add(wait)), store.Micros(now), c.id, c.lease)
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k != 1 {
				s.log.Warn("webhook attempt finished after its lease was taken over", "delivery_id", c.id)
			}
		}
		for state, cs := range done {
			ids := make([]any, len(cs))
			leases := make([]any, len(cs))
			for i, c := range cs {
				ids[i], leases[i] = c.id, c.lease
			}
			idPH, idArgs := store.PaddedIn(ids)
			leasePH, leaseArgs := store.PaddedIn(leases)
			args := append(append([]any{state, store.Micros(now)}, idArgs...), leaseArgs...)
			// A lease names its delivery and claim, so matching the lease
			// is the compare-and-set; the id list lets the primary key
			// find the rows.
			rows, err := tx.Query(ctx, `UPDATE webhook_deliveries SET status = ?, attempt_count = attempt_count + 1, next_attempt_at = NULL,
				lease = NULL, updated_at = ? WHERE status = 'pending' AND id IN (`+idPH+`) AND lease IN (`+leasePH+`)
				RETURNING id`, args...)
			if err != nil {
				return err
			}
			k := 0
			for rows.Next() {
				k++
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if k != len(cs) {
				s.log.Warn("webhook attempts finished after their lease was taken over", "count", len(cs)-k)
			}
			finished[state] += k
		}
		var err error
		disabled, err = s.countForBreaker(ctx, tx, items)
		return err
	})
	for _, it := range items {
		if it.o.sent {
			s.fast.observe(it.c.endpointID, it.o)
		}
	}
	if err != nil {
		return err
	}
	for state, n := range finished {
		s.metrics.finished.WithLabelValues(state).Add(float64(n))
	}
	for _, ep := range disabled {
		s.metrics.disabled.Inc()
		s.log.Warn("webhook endpoint disabled after repeated failed attempts", "endpoint_id", ep.ID,
			"consecutive_failures", ep.ConsecutiveFailures, "failing_since", ep.FailingSince)
	}
	// The leases just ended leave room under the caps, and a retry may be
	// due sooner than the timer: the worker claims again.
	select {
	case s.recorded <- struct{}{}:
	default:
	}
	return nil
}

// insertAttempts writes the attempt log rows, many per statement.
func insertAttempts(ctx context.Context, tx *store.Tx, items []recordItem, now time.Time) error {
	const perStatement = 100
	for len(items) > 0 {
		chunk := items[:min(len(items), perStatement)]
		items = items[len(chunk):]
		q := "INSERT INTO webhook_attempts (delivery_id, livemode, attempt, at, http_status, latency_ms, error, response_body, created_at) VALUES " +
			store.Rows(len(chunk), 9)
		args := make([]any, 0, len(chunk)*9)
		for _, it := range chunk {
			var status, msg, resp any
			if it.o.httpStatus != 0 {
				status = it.o.httpStatus
			}
			if it.o.err != "" {
				msg = it.o.err
			}
			if it.o.response != "" {
				resp = it.o.response
			}
			args = append(args, it.c.id, it.c.livemode, it.c.attempts+1, store.Micros(it.o.at), status, it.o.latency.Milliseconds(), msg, resp, store.Micros(now))
		}
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// release gives back a claimed delivery without recording an attempt.
func (s *Service) release(ctx context.Context, c claimed) {
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET lease = NULL, next_attempt_at = ?, updated_at = ?
			WHERE id = ? AND lease = ? AND status = 'pending'`, store.Micros(tx.Now()), store.Micros(tx.Now()), c.id, c.lease)
		return err
	})
	if err != nil {
		s.log.Warn("release webhook delivery", "delivery_id", c.id, "err", err)
	}
}
