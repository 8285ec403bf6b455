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
}

// runDeliverer claims due deliveries and sends them, at most conc at once.
func (s *Service) runDeliverer(ctx context.Context) {
	sem := make(chan struct{}, s.conc)
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wakeDeliver:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		}
		for ctx.Err() == nil {
			free := cap(sem) - len(sem)
			if free == 0 {
				break // a finishing attempt wakes us
			}
			batch, err := s.claim(ctx, free)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Error("claim webhook deliveries", "err", err)
				}
				break
			}
			for _, c := range batch {
				sem <- struct{}{}
				wg.Add(1)
				go func(c claimed) {
					defer func() { <-sem; wg.Done(); s.wakeDelivery() }()
					s.attempt(ctx, c)
				}(c)
			}
			if len(batch) < free {
				break
			}
		}
		wait := s.poll
		if next, ok := s.nextDue(ctx); ok {
			if d := time.Until(next); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		t.Reset(wait)
	}
}

// nextDue is when the earliest pending delivery is due.
func (s *Service) nextDue(ctx context.Context) (time.Time, bool) {
	var next sql.NullInt64
	if err := s.db.QueryRow(ctx, "SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending'").Scan(&next); err != nil || !next.Valid {
		return time.Time{}, false
	}
	return store.FromMicros(next.Int64), true
}

// claim leases up to n due deliveries: their next_attempt_at moves to the
// lease's end, so if this process dies they are due again then, and a lease
// token ensures only the holder records the outcome.
func (s *Service) claim(ctx context.Context, n int) ([]claimed, error) {
	lease := ids.Secret("", 10)
	var out []claimed
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		out = out[:0]
		now := store.Micros(tx.Now())
		rows, err := tx.Query(ctx, `UPDATE webhook_deliveries SET lease = ?, next_attempt_at = ?, updated_at = ?
			WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ?
			ORDER BY next_attempt_at LIMIT ?`+tx.Dialect().ForUpdateSkipLocked()+`)
			RETURNING id, attempt_count, fail_first, livemode, endpoint_id, event_id`,
			lease, now+s.lease.Microseconds(), now, now, n)
		if err != nil {
			return err
		}
		eventIDs := map[string][]int{}
		for rows.Next() {
			var c claimed
			var eventID string
			if err := rows.Scan(&c.id, &c.attempts, &c.failFirst, &c.livemode, &c.endpointID, &eventID); err != nil {
				rows.Close()
				return err
			}
			c.lease = lease
			out = append(out, c)
			eventIDs[eventID] = append(eventIDs[eventID], len(out)-1)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		return s.load(ctx, tx, out, eventIDs)
	})
	return out, err
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
	rows, err := tx.Query(ctx, "SELECT "+events.Columns+" FROM events WHERE id IN ("+placeholders(len(args))+")", args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		ev, err := events.Scan(rows)
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
	erows, err := tx.Query(ctx, "SELECT id, url, secret_sealed, status, deleted_at FROM webhook_endpoints WHERE id IN ("+placeholders(len(args))+")", args...)
	if err != nil {
		return err
	}
	defer erows.Close()
	found := map[string]bool{}
	for erows.Next() {
		var id, url, sealed, status string
		var deleted sql.NullInt64
		if err := erows.Scan(&id, &url, &sealed, &status, &deleted); err != nil {
			return err
		}
		found[id] = true
		for _, i := range epIdx[id] {
			out[i].url, out[i].sealed, out[i].epStatus, out[i].epGone = url, sealed, status, deleted.Valid
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
}

func (o outcome) ok() bool { return o.err == "" }

// attempt makes one attempt at a claimed delivery and records it.
func (s *Service) attempt(ctx context.Context, c claimed) {
	var o outcome
	switch {
	case c.event == nil:
		o = outcome{at: time.Now(), err: "the event no longer exists (test-mode data is purged after 30 days); not sent", final: true}
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
		return
	}
	if err := s.record(context.WithoutCancel(ctx), c, o); err != nil {
		s.log.Error("record webhook attempt", "delivery_id", c.id, "err", err)
	}
}

// send posts the event to the endpoint, signed.
func (s *Service) send(ctx context.Context, c claimed) outcome {
	secret, err := s.openSecret(ctx, c.sealed, c.endpointID)
	if err != nil {
		s.log.Error("open webhook endpoint secret", "endpoint_id", c.endpointID, "err", err)
		return outcome{at: time.Now(), err: "payd could not read the endpoint's signing secret; not sent"}
	}
	body, err := json.Marshal(c.event.Envelope())
	if err != nil {
		return outcome{at: time.Now(), err: "payd could not encode the event; not sent", final: true}
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
	req.Header.Set(webhook.HeaderSignature, webhook.SignatureHeader(secret, start, c.event.ID, body))
	resp, err := s.client(c.livemode).Do(req)
	if err != nil {
		o := outcome{at: start, latency: time.Since(start), err: describeSendError(err, s.timeout)}
		s.metrics.attempts.WithLabelValues("error").Inc()
		s.metrics.latency.Observe(o.latency.Seconds())
		return o
	}
	kept, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseKept))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so the connection can be reused
	resp.Body.Close()
	o := outcome{at: start, latency: time.Since(start), httpStatus: resp.StatusCode, response: safeText(kept)}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		o.err = "the endpoint answered HTTP " + strconv.Itoa(resp.StatusCode) + " (only 2xx acknowledges a delivery)"
		s.metrics.attempts.WithLabelValues("non_2xx").Inc()
	} else {
		s.metrics.attempts.WithLabelValues("succeeded").Inc()
	}
	s.metrics.latency.Observe(o.latency.Seconds())
	return o
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

// record stores an attempt and moves the delivery on, if this process still
// holds its lease: succeeded on 2xx; otherwise pending until the next retry,
// or failed once the schedule is exhausted. The attempt row is written even
// when the lease was lost (the request did go out).
func (s *Service) record(ctx context.Context, c claimed, o outcome) error {
	n := c.attempts + 1
	var status any
	if o.httpStatus != 0 {
		status = o.httpStatus
	}
	var msg, resp any
	if o.err != "" {
		msg = o.err
	}
	if o.response != "" {
		resp = o.response
	}
	var state string
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		now := tx.Now()
		if _, err := tx.Exec(ctx, `INSERT INTO webhook_attempts (delivery_id, livemode, attempt, at, http_status, latency_ms, error, response_body, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.id, c.livemode, n, store.Micros(o.at), status, o.latency.Milliseconds(), msg, resp, store.Micros(now)); err != nil {
			return err
		}
		var next any
		switch {
		case o.ok():
			state = DeliverySucceeded
		case o.final:
			state = DeliveryFailed
		default:
			if wait, ok := s.retryWait(n); ok {
				state = DeliveryPending
				next = store.Micros(now.Add(wait))
			} else {
				state = DeliveryFailed
			}
		}
		res, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = ?, attempt_count = ?, next_attempt_at = ?, lease = NULL, updated_at = ?
			WHERE id = ? AND lease = ? AND status = 'pending'`, state, n, next, store.Micros(now), c.id, c.lease)
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); k != 1 {
			s.log.Warn("webhook attempt finished after its lease was taken over", "delivery_id", c.id)
			return nil
		}
		if state != DeliveryPending {
			s.metrics.finished.WithLabelValues(state).Inc()
		}
		if state == DeliveryPending {
			tx.AfterCommit(s.wakeDelivery)
		}
		return nil
	})
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
