// Package requestlog keeps the recent API requests of each merchant and mode
// (method, URL path, status, request id, latency and the key that made
// them), for `payd logs tail` and GET /v1/request_logs.
//
// The API hands each finished request to Record, which only puts it in a
// bounded in-memory buffer: it never touches the database, so a request's own
// transaction and commit are exactly what they would be without the log. A
// background flusher (Run) writes what has arrived in one transaction per
// batch and prunes each merchant's and mode's rows to the newest Keep (every
// Interval, and at once whenever a full batch has queued, so a burst does not
// fill the buffer between two ticks); rows
// past their age go by the retention job (internal/retention, the
// PAYD_RETENTION_REQUEST_LOGS horizon), in bounded batches shared by every
// process, not by each flusher. When the buffer is full (the database cannot keep up) new entries
// are dropped and counted, never waited for. Bodies, query strings, headers
// and keys are never kept.
package requestlog

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/timestamp"
)

// Defaults of a Log.
const (
	// DefaultKeep is how many requests are kept per merchant and mode.
	DefaultKeep = 1000
	// DefaultBuffer bounds the entries waiting for the flusher.
	DefaultBuffer = 8192
	// DefaultInterval is how often the flusher writes what has arrived.
	DefaultInterval = 500 * time.Millisecond
	// maxBatch bounds one flush's transaction; more waits for the next.
	maxBatch = 1000
	// rowsPerInsert bounds one INSERT statement's rows (and its arguments).
	rowsPerInsert = 100
	// maxPath bounds the stored URL path.
	maxPath = 512
)

// Entry is one finished API request.
type Entry struct {
	MerchantID  string
	Livemode    bool
	PrincipalID string // the key (key_...) that made it
	Method      string
	Path        string // the URL path, without the query string
	Status      int
	RequestID   string
	Latency     time.Duration
	At          time.Time // when the request arrived
}

// Request is a stored request as the API shows it.
type Request struct {
	ID        string  `json:"id"`
	Object    string  `json:"object"`
	Method    string  `json:"method"`
	Path      string  `json:"path"`
	Status    int     `json:"status"`
	RequestID string  `json:"request_id"`
	LatencyMS float64 `json:"latency_ms"`
	KeyID     string  `json:"key_id"`
	Livemode  bool    `json:"livemode"`
	CreatedAt string  `json:"created_at"`
}

// Config tunes a Log; zero fields take the defaults.
type Config struct {
	Keep     int
	Buffer   int
	Interval time.Duration
	Registry *prometheus.Registry
}

// Log buffers finished requests and writes them in batches.
type Log struct {
	db       *store.DB
	keep     int
	interval time.Duration
	in       chan Entry
	full     chan struct{} // a full batch has queued: flush without waiting for the tick

	flushMu  sync.Mutex // one flush at a time (Run's, or a test's Flush)
	dropped  atomic.Int64
	droppedC prometheus.Counter
	written  prometheus.Counter
}

// New makes a Log over db.
func New(db *store.DB, cfg Config) *Log {
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultBuffer
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	l := &Log{db: db, keep: cfg.Keep, interval: cfg.Interval, in: make(chan Entry, cfg.Buffer), full: make(chan struct{}, 1),
		droppedC: prometheus.NewCounter(prometheus.CounterOpts{Name: "payd_request_logs_dropped_total",
			Help: "API requests not kept in the request log because its buffer was full."}),
		written: prometheus.NewCounter(prometheus.CounterOpts{Name: "payd_request_logs_written_total",
			Help: "API requests written to the request log."}),
	}
	if cfg.Registry != nil {
		cfg.Registry.MustRegister(l.droppedC, l.written)
	}
	return l
}

// Record queues a finished request for the flusher. It never blocks: when
// the buffer is full the entry is dropped and counted.
func (l *Log) Record(e Entry) {
	select {
	case l.in <- e:
		if len(l.in) >= maxBatch {
			select {
			case l.full <- struct{}{}:
			default: // already signalled
			}
		}
	default:
		l.dropped.Add(1)
		l.droppedC.Inc()
	}
}

// Dropped is how many entries Record has dropped.
func (l *Log) Dropped() int64 { return l.dropped.Load() }

// Run flushes every interval, and whenever a full batch has queued, until
// ctx ends, then once more with what is left (bounded by a few seconds), so
// a graceful stop loses nothing. At 20,000 requests/s the buffer of 8192
// would fill in 0.4 s, before the next tick: flushing each full batch as it
// forms keeps the buffer from overflowing as long as the database writes a
// batch faster than requests fill one.
func (l *Log) Run(ctx context.Context) {
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			for l.Flush(stop) == nil && len(l.in) > 0 {
			}
			cancel()
			return
		case <-t.C:
		case <-l.full:
		}
		// A burst larger than one batch drains over consecutive flushes
		// without waiting for the next tick. A flush under way when ctx
		// ends finishes (its batch is already out of the buffer): it is
		// not cancelled with ctx.
		for l.Flush(context.WithoutCancel(ctx)) == nil && len(l.in) >= maxBatch {
		}
	}
}

// Flush writes the queued entries (at most one batch) in one transaction
// and prunes the merchants and modes it wrote to. It is what Run calls; tests
// call it to see their requests at once. ctx must not carry a request's unit
// of work: the log is never part of a request's commit.
func (l *Log) Flush(ctx context.Context) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	batch := make([]Entry, 0, min(len(l.in), maxBatch))
	for len(batch) < maxBatch {
		select {
		case e := <-l.in:
			batch = append(batch, e)
			continue
		default:
		}
		break
	}
	if len(batch) == 0 {
		return nil
	}
	type scope struct {
		merchant string
		live     bool
	}
	scopes := map[scope]bool{}
	// Consecutive entries mostly share these: each is boxed once per run of
	// equal values rather than once per entry.
	var merchant, principal, method, paths boxed
	err := l.db.InTx(ctx, func(tx *store.Tx) error {
		for start := 0; start < len(batch); start += rowsPerInsert {
			chunk := batch[start:min(start+rowsPerInsert, len(batch))]
			q := "INSERT INTO request_logs (id, merchant_id, livemode, principal_id, method, path, status, request_id, latency_us, created_at) VALUES " +
				store.Rows(len(chunk), 10)
			args := make([]any, 0, len(chunk)*10)
			for _, e := range chunk {
				path := RedactPath(e.Path) // the API redacts it too; a second line of defence
				if len(path) > maxPath {
					path = path[:maxPath]
				}
				args = append(args, ids.New("rlog_"), merchant.of(e.MerchantID), e.Livemode, principal.of(e.PrincipalID), method.of(e.Method),
					paths.of(path), e.Status, e.RequestID, e.Latency.Microseconds(), store.Micros(e.At))
				scopes[scope{e.MerchantID, e.Livemode}] = true
			}
			if _, err := tx.Exec(ctx, q, args...); err != nil {
				return err
			}
		}
		// Keep the newest l.keep of each scope written to: delete below the
		// id of the keep-th newest (nothing when there are fewer).
		for s := range scopes {
			if _, err := tx.Exec(ctx, `DELETE FROM request_logs WHERE merchant_id = ? AND livemode = ? AND id < (
				SELECT id FROM request_logs WHERE merchant_id = ? AND livemode = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
				s.merchant, s.live, s.merchant, s.live, l.keep-1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		// The batch is lost rather than retried forever: the log is a
		// convenience, and the next batches must not queue behind it.
		return err
	}
	l.written.Add(float64(len(batch)))
	return nil
}

// boxed keeps the last string it boxed as an argument.
type boxed struct {
	last string
	box  any
}

func (b *boxed) of(s string) any {
	if b.box == nil || b.last != s {
		b.last, b.box = s, s
	}
	return b.box
}

// List returns a page of a merchant's requests in one mode, newest first;
// keyID, when set, keeps only that key's.
func (l *Log) List(ctx context.Context, merchantID string, livemode bool, keyID string, page pagination.Page) (pagination.List[Request], error) {
	q := "SELECT id, principal_id, method, path, status, request_id, latency_us, created_at FROM request_logs WHERE merchant_id = ? AND livemode = ?"
	args := []any{merchantID, livemode}
	if keyID != "" {
		q += " AND principal_id = ?"
		args = append(args, keyID)
	}
	cond, cargs, tail := page.ClauseScoped("id", "merchant_id", "livemode")
	rows, err := l.db.Query(ctx, q+cond+tail, append(args, cargs...)...)
	if err != nil {
		return pagination.List[Request]{}, err
	}
	defer rows.Close()
	var out []Request
	for rows.Next() {
		var r Request
		var latency, created int64
		if err := rows.Scan(&r.ID, &r.KeyID, &r.Method, &r.Path, &r.Status, &r.RequestID, &latency, &created); err != nil {
			return pagination.List[Request]{}, err
		}
		r.Object, r.Livemode = "request_log", livemode
		r.LatencyMS = float64(latency) / 1000
		r.CreatedAt = timestamp.Format(store.FromMicros(created))
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return pagination.List[Request]{}, err
	}
	data, more := pagination.Finish(page, out)
	return pagination.NewList(data, more), nil
}

// ParseQuery reads the list's query: the page and an optional key_id.
func ParseQuery(q map[string][]string) (page pagination.Page, keyID string, err error) {
	page, err = pagination.Parse(q)
	if err != nil {
		return page, "", err
	}
	if v := q["key_id"]; len(v) > 0 {
		keyID = v[0]
		if len(v) > 1 || !strings.HasPrefix(keyID, "key_") || len(keyID) > 64 {
			return page, "", errs.Invalid("key_id", "parameter_invalid", "key_id must be one API key id (key_...)")
		}
	}
	return page, keyID, nil
}
