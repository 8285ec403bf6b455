package webhooks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/store"
)

// The event stream behind `payd listen`: a merchant's new events, in id
// order, as they commit. It reads the events table (never the deliveries),
// woken by commits in this process and polling for other processes' commits.

// streamLateWindow is how far back the stream looks for events that committed
// after a later-numbered event was already streamed (ids are taken when a
// transaction emits, commits can land in another order).
const streamLateWindow = 10 * time.Second

// streamPing is how often an idle stream sends a keep-alive.
const streamPing = 15 * time.Second

// MaxStreamsPerKey caps the event streams one API key (or portal user) holds
// open at once: each is a connection, a goroutine and a poller, and a client
// that reconnects without closing must not pile them up. One more answers 429
// too_many_streams; a slot is free again as soon as a stream ends.
const MaxStreamsPerKey = 5

// ErrStreamClosed ends streams when the server shuts down.
var ErrStreamClosed = errors.New("event stream closed: server shutting down")

// StreamSink receives a stream's events.
type StreamSink interface {
	Event(ev events.Event) error
	Ping() error
}

// StreamParams selects a stream's events.
type StreamParams struct {
	Types []string // empty: every type
	// LastEventID resumes after that event (the SSE Last-Event-ID); empty
	// starts with the events committed from now on.
	LastEventID string
	// Principal is the key (or user) opening the stream: at most
	// MaxStreamsPerKey streams per principal are open at once.
	Principal string
}

type streamHub struct {
	mu     sync.Mutex
	subs   map[chan struct{}]struct{}
	open   map[string]int // open streams per principal
	done   chan struct{}
	closed bool
}

func newStreamHub() *streamHub {
	return &streamHub{subs: map[chan struct{}]struct{}{}, open: map[string]int{}, done: make(chan struct{})}
}

// acquire takes one of principal's stream slots; the release it returns
// gives the slot back (once, however often it is called).
func (h *streamHub) acquire(principal string) (release func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open[principal] >= MaxStreamsPerKey {
		return nil, false
	}
	h.open[principal]++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.open[principal]--; h.open[principal] <= 0 {
				delete(h.open, principal)
			}
		})
	}, true
}

func (h *streamHub) subscribe() (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

func (h *streamHub) wake() {
	h.mu.Lock()
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	h.mu.Unlock()
}

func (h *streamHub) close() {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
	h.mu.Unlock()
}

// ValidateStreamTypes checks a stream's type filter.
func ValidateStreamTypes(types []string) error {
	for i, t := range types {
		if !KnownEventType(t) {
			return errs.Invalid("types", "event_type_unknown", "types[%d]: unknown event type %q; known types: %s", i, t, strings.Join(EventTypes(), ", "))
		}
	}
	return nil
}

// Stream sends the owner's events to sink until ctx ends, the sink fails, or
// the server shuts down (ErrStreamClosed). An event may be sent twice around
// a resume; receivers de-duplicate on the id.
func (s *Service) Stream(ctx context.Context, o Owner, p StreamParams, sink StreamSink) error {
	if err := ValidateStreamTypes(p.Types); err != nil {
		return err
	}
	if p.Principal != "" {
		release, ok := s.streams.acquire(p.Principal)
		if !ok {
			return &errs.Error{Kind: errs.KindRateLimited, Code: "too_many_streams",
				Message: fmt.Sprintf("this key already has %d event streams open; close one first", MaxStreamsPerKey)}
		}
		defer release()
	}
	wake, unsubscribe := s.streams.subscribe()
	defer unsubscribe()
	st := &streamState{svc: s, owner: o, types: p.Types, sent: map[string]time.Time{}}
	if p.LastEventID != "" {
		ev, err := s.GetEvent(ctx, o, p.LastEventID)
		if err != nil {
			if errs.IsCode(err, "resource_missing") {
				return errs.Invalid("Last-Event-ID", "resource_missing", "no such event to resume after: '%s'", p.LastEventID)
			}
			return err
		}
		st.lastID, st.low = ev.ID, ev.RecordedAt
		st.sent[ev.ID] = ev.RecordedAt
	} else {
		var maxID sql.NullString
		if err := s.db.QueryRow(ctx, "SELECT MAX(id) FROM events WHERE merchant_id = ? AND livemode = ?", o.MerchantID, o.Livemode).Scan(&maxID); err != nil {
			return err
		}
		st.lastID, st.low = maxID.String, s.db.Now()
	}
	if err := sink.Ping(); err != nil {
		return err
	}
	poll := time.NewTicker(s.poll)
	defer poll.Stop()
	lastWrite := time.Now()
	sweep := false
	for {
		n, err := st.next(ctx, sink, sweep)
		if err != nil {
			return err
		}
		sweep = false
		if n > 0 {
			lastWrite = time.Now()
			continue // there may be more
		}
		if time.Since(lastWrite) >= streamPing {
			if err := sink.Ping(); err != nil {
				return err
			}
			lastWrite = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.streams.done:
			return ErrStreamClosed
		case <-wake:
		case <-poll.C:
			sweep = true
		}
	}
}

type streamState struct {
	svc    *Service
	owner  Owner
	types  []string
	lastID string               // the highest id streamed (or the start point)
	low    time.Time            // the stream's start: nothing older is sent
	sent   map[string]time.Time // ids streamed within the late window
}

func (st *streamState) filter() (string, []any) {
	q := " WHERE merchant_id = ? AND livemode = ?"
	args := []any{st.owner.MerchantID, st.owner.Livemode}
	if len(st.types) > 0 {
		q += " AND type IN (" + store.Placeholders(len(st.types)) + ")"
		for _, t := range st.types {
			args = append(args, t)
		}
	}
	return q, args
}

// next streams events past lastID and, when sweep is set, events at or below
// lastID that committed late (within the window and not yet streamed).
func (st *streamState) next(ctx context.Context, sink StreamSink, sweep bool) (int, error) {
	where, args := st.filter()
	var rows []events.Event
	var err error
	if st.lastID == "" {
		rows, err = st.query(ctx, where+" ORDER BY id LIMIT 500", args...)
	} else {
		rows, err = st.query(ctx, where+" AND id > ? ORDER BY id LIMIT 500", append(args, st.lastID)...)
	}
	if err != nil {
		return 0, err
	}
	if sweep && st.lastID != "" {
		low := st.svc.db.Now().Add(-streamLateWindow)
		if low.Before(st.low) {
			low = st.low
		}
		late, err := st.query(ctx, where+" AND id <= ? AND created_at >= ? ORDER BY id LIMIT 2000", append(args, st.lastID, store.Micros(low))...)
		if err != nil {
			return 0, err
		}
		rows = append(late, rows...)
	}
	if sweep || len(st.sent) > 10000 {
		// Forget what is older than the window: it is never queried again.
		low := st.svc.db.Now().Add(-streamLateWindow - time.Second)
		for id, at := range st.sent {
			if at.Before(low) {
				delete(st.sent, id)
			}
		}
	}
	n := 0
	for _, ev := range rows {
		if _, dup := st.sent[ev.ID]; dup {
			continue
		}
		if err := sink.Event(ev); err != nil {
			return n, err
		}
		st.sent[ev.ID] = ev.RecordedAt
		if ev.ID > st.lastID {
			st.lastID = ev.ID
		}
		n++
	}
	return n, nil
}

func (st *streamState) query(ctx context.Context, where string, args ...any) ([]events.Event, error) {
	rows, err := st.svc.db.Query(ctx, "SELECT "+events.Columns+" FROM events"+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []events.Event
	for rows.Next() {
		ev, err := events.Scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, rows.Err()
}
