// Package store is payd's database plumbing: it opens SQLite or PostgreSQL,
// applies the embedded migrations, runs transactions with a clock, and
// translates driver errors into shared ones. It knows no capability; each
// capability owns its SQL and calls the small API here.
//
// Queries are written once, with ? placeholders and portable SQL; the dialect
// (dialect.go) rewrites placeholders for PostgreSQL and supplies the few
// clauses that differ (FOR UPDATE SKIP LOCKED) and the advisory lock.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Shared errors, translated from each driver's own.
var (
	ErrNotFound = errors.New("store: not found")
	ErrConflict = errors.New("store: unique constraint violated")
)

// Querier is what both *DB and *Tx offer, so helpers can take either.
type Querier interface {
	Exec(ctx context.Context, query string, args ...any) (sql.Result, error)
	Query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	RowQuerier
	Dialect() Dialect
}

// A RowQuerier reads one row: what a lookup passed down through a package
// that names no store type needs (a provider rail's, providers.Reader).
type RowQuerier interface {
	QueryRow(ctx context.Context, query string, args ...any) *sql.Row
}

// DB is an open database of either engine.
type DB struct {
	sql     *sql.DB
	dialect Dialect
	// writeLock serialises write transactions within this process on SQLite,
	// which allows one writer at a time; waiting on a Go channel is far
	// cheaper than SQLite's busy-timeout polling. Nil on PostgreSQL.
	writeLock chan struct{}
	// writeWaiters counts the writers waiting for writeLock; parked is a
	// transaction units wait in for a group commit, guarded by holding
	// writeLock (unitgroup.go). SQLite only.
	writeWaiters atomic.Int32
	settling     atomic.Bool
	parked       *parkedTx
	// group batches SQLite's write transactions into shared commits
	// (groupcommit.go). Nil on PostgreSQL.
	group *groupCommit
	// clock returns the current time; tests replace it with SetClock while
	// background workers read it, hence the atomic pointer.
	clock atomic.Pointer[func() time.Time]
	// cache holds immutable lookups (ids that never change once created)
	// for this database only.
	cache *sync.Map
	// onCommit, when set (tests), is told of every commit with the context
	// that made it.
	onCommit atomic.Pointer[func(context.Context)]
	// onRoundTrip, when set (tests), is told of every round trip to
	// PostgreSQL (OnRoundTrip).
	onRoundTrip atomic.Pointer[func(context.Context)]
	// commitFault, when set (tests), loses the answers of chosen unit
	// commits (commitfault.go).
	commitFault atomic.Pointer[func(context.Context) CommitFault]
	// commits counts this DB's commits; ckpt, on a SQLite file, copies the
	// write-ahead log into the database off the writer (checkpoint.go).
	commits atomic.Int64
	// txCommits and unitCommits: CommitCounts.
	txCommits, unitCommits atomic.Int64
	ckpt                   *checkpointer
	// writer is the one connection SQLite's write transactions run on
	// (taken under writeLock). A connection's page cache survives its own
	// commits but not another connection's, so with every write on one
	// connection the writer keeps the B-tree pages it keeps touching
	// instead of reading them again after each other writer's commit.
	// Nil on PostgreSQL. Replaced (beginTx) only under writeLock; atomic so
	// that ConnsInUse and Close may read it from elsewhere.
	writer atomic.Pointer[sql.Conn]
}

// OnCommit makes fn hear of every commit this DB makes (a transaction's, a
// unit of work's checkpoint or commit, or a statement run outside a
// transaction), with the context it was made under; nil stops it. Tests use
// it to count the commits of one request.
func (db *DB) OnCommit(fn func(ctx context.Context)) {
	if fn == nil {
		db.onCommit.Store(nil)
		return
	}
	db.onCommit.Store(&fn)
}

// OnRoundTrip makes fn hear of every round trip to PostgreSQL that carries
// statements (a statement, a query, or a pipelined batch; not the one-off
// preparation of a statement a connection has not seen, nor the pool's
// pings), with the context it was made under; nil stops it. Tests use it to
// count the round trips of one request.
func (db *DB) OnRoundTrip(fn func(ctx context.Context)) {
	if fn == nil {
		db.onRoundTrip.Store(nil)
		return
	}
	db.onRoundTrip.Store(&fn)
}

// roundTrips tells a DB's OnRoundTrip hook of pgx's statements and batches.
type roundTrips struct{ db *DB }

func (r roundTrips) heard(ctx context.Context) context.Context {
	if f := r.db.onRoundTrip.Load(); f != nil {
		(*f)(ctx)
	}
	return ctx
}

func (r roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return r.heard(ctx)
}

func (roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return r.heard(ctx)
}

func (roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// CommitCounts returns how many database transactions have committed since
// db was opened, and how many units of work they carried (a request's, a
// background job's InTx): on SQLite one commit carries every unit of its
// group (group commit), on PostgreSQL each unit commits alone. A statement
// run outside a transaction counts as one of each. The pair is consistent
// for every commit it counts: units are never fewer than the units of the
// commits counted, even while other goroutines commit.
func (db *DB) CommitCounts() (commits, units int64) {
	// Commits first: countCommit adds a commit's units before the commit,
	// so every commit read here has its units in the later read.
	commits = db.txCommits.Load()
	return commits, db.unitCommits.Load()
}

// countCommit records one database commit carrying units units of work:
// the units first (CommitCounts relies on that order).
func (db *DB) countCommit(units int) {
	db.unitCommits.Add(int64(units))
	db.txCommits.Add(1)
}

func (db *DB) committed(ctx context.Context) {
	if n := db.commits.Add(1); n%ckptCommits == 0 && db.ckpt != nil {
		db.ckpt.poke()
	}
	if f := db.onCommit.Load(); f != nil {
		(*f)(ctx)
	}
}

// shouldPing decides whether a pooled PostgreSQL connection is pinged before
// it is handed out: after a second idle (the driver's own rule), and whenever
// the server has written to it or closed it while it sat idle (serverSpoke),
// which is how a terminated backend or a restarted server shows. Without the
// second rule a connection ended less than a second after its last use went
// to a request, whose statement then failed: after a restart every idle
// connection of the pool is dead, and requests met them one after another.
func shouldPing(_ context.Context, p stdlib.ShouldPingParams) bool {
	return p.IdleDuration > time.Second || serverSpoke(p.Conn.PgConn().Conn())
}

// Open connects to url: "sqlite:PATH" (or a bare path ending .db) or
// "postgres://..." / "postgresql://...".
func Open(ctx context.Context, url string) (*DB, error) {
	var db *DB
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		db = &DB{dialect: Postgres}
		cfg.Tracer = tracedRoundTrips{roundTrips{db}} // tracing.go
		s := stdlib.OpenDB(*cfg, stdlib.OptionShouldPing(shouldPing))
		s.SetMaxOpenConns(32)
		s.SetMaxIdleConns(32)
		s.SetConnMaxIdleTime(5 * time.Minute)
		db.sql = s
	case strings.HasPrefix(url, "sqlite:"), strings.HasSuffix(url, ".db"):
		path := strings.TrimPrefix(url, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		if path == "" {
			return nil, fmt.Errorf("open sqlite: empty path in %q", url)
		}
		if err := createPrivate(SQLitePath(url)); err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		// temp_store(2): SQLite's temporary files live in memory. A savepoint
		// (every joined InTx, every member of a group commit) copies each page
		// it changes into a sub-journal, which spilled to a temporary file
		// past 64 KiB: a quarter of a keyed create's CPU went to those
		// writes. The price is that a large sort or index build (a migration
		// on a big table) holds its temporary data in memory.
		dsn := "file:" + path + sep + "_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
			"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=temp_store(2)&_time_format=sqlite"
		if SQLitePath(url) != "" {
			// Checkpoints run off the writer (checkpoint.go), not inside
			// the COMMIT that crosses SQLite's threshold.
			dsn += "&_pragma=wal_autocheckpoint(0)"
		}
		s, err := sql.Open("payd-sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		// Eight connections for reads and one for the writer.
		s.SetMaxOpenConns(9)
		s.SetMaxIdleConns(9)
		db = &DB{sql: s, dialect: SQLite, writeLock: make(chan struct{}, 1), group: &groupCommit{}}
	default:
		return nil, fmt.Errorf("unsupported database url %q: want sqlite:PATH or postgres://", redactURL(url))
	}
	db.SetClock(func() time.Time { return time.Now().UTC() })
	db.cache = &sync.Map{}
	if err := db.ping(ctx); err != nil {
		db.sql.Close()
		return nil, fmt.Errorf("connect %s: %w", db.dialect, err)
	}
	if db.dialect == SQLite {
		w, err := db.sql.Conn(ctx)
		if err != nil {
			db.sql.Close()
			return nil, fmt.Errorf("connect %s: %w", db.dialect, err)
		}
		db.writer.Store(w)
	}
	if db.dialect == SQLite && SQLitePath(url) != "" {
		db.startCheckpointer()
	}
	return db, nil
}

// ping opens the first connection. On SQLite, processes that open a new
// database file at once race to switch it to WAL mode, which takes an
// exclusive lock; SQLite refuses the loser at once (SQLITE_BUSY, without its
// busy timeout, to avoid a deadlock between two lock upgrades), so a busy
// first connection is tried again for up to 10 s.
func (db *DB) ping(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := db.sql.PingContext(ctx)
		if err == nil || db.dialect != SQLite || !isTransient(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// SQLitePath returns the file a SQLite database URL names ("sqlite:PATH" or a
// bare path ending .db, without its query), or "" for PostgreSQL and for
// in-memory SQLite databases.
func SQLitePath(url string) string {
	if !strings.HasPrefix(url, "sqlite:") && !strings.HasSuffix(url, ".db") {
		return ""
	}
	path := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//")
	query := ""
	if i := strings.Index(path, "?"); i >= 0 {
		path, query = path[:i], path[i:]
	}
	path = strings.TrimPrefix(path, "file:")
	if path == "" || path == ":memory:" || strings.Contains(query, "mode=memory") {
		return ""
	}
	return path
}

// createPrivate creates an absent database file with mode 0600 before SQLite
// opens it: SQLite gives the -wal and -shm files the database file's mode, so
// none of the three is readable by other users. An existing file is left as
// it is.
func createPrivate(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// redactURL hides a password in a connection URL.
func redactURL(u string) string {
	if i := strings.Index(u, "@"); i > 0 {
		if j := strings.Index(u, "://"); j > 0 && j < i {
			return u[:j+3] + "…" + u[i:]
		}
	}
	return u
}

// SetPoolSize bounds the pool at n open (and idle) connections, instead of
// the engine's default (32 on PostgreSQL, 8 on SQLite). On SQLite the
// writer's own connection comes beside the n.
func (db *DB) SetPoolSize(n int) {
	if db.writer.Load() != nil {
		n++
	}
	db.sql.SetMaxOpenConns(n)
	db.sql.SetMaxIdleConns(n)
}

// Close stops the checkpointer (SQLite) and closes the connection pool.
func (db *DB) Close() error {
	if db.ckpt != nil {
		db.ckpt.close()
	}
	if w := db.writer.Load(); w != nil {
		w.Close()
	}
	return db.sql.Close()
}

// SQL exposes the pool for the few places that need it (migrations, stats).
func (db *DB) SQL() *sql.DB { return db.sql }

// ConnsInUse is how many of the pool's connections requests hold now: the
// pool's count without the SQLite writer's own connection, which is always
// held.
func (db *DB) ConnsInUse() int {
	n := db.sql.Stats().InUse
	if db.writer.Load() != nil {
		n--
	}
	return n
}

// Dialect tells which engine this is.
func (db *DB) Dialect() Dialect { return db.dialect }

// Now returns the database clock's time in UTC, truncated to microseconds
// (the stored precision).
func (db *DB) Now() time.Time { return (*db.clock.Load())().UTC().Truncate(time.Microsecond) }

// SetClock replaces the clock Now reads (tests travel in time with it). It is
// safe while other goroutines call Now.
func (db *DB) SetClock(clock func() time.Time) { db.clock.Store(&clock) }

// Exec runs a statement outside a transaction. A request's statement runs
// in its unit of work through Work.Exec; with a context whose request has a
// unit open, Exec fails with ErrOutsideUnit.
func (db *DB) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if err := db.outsideUnit(ctx, true); err != nil {
		return nil, err
	}
	if db.writeLock != nil {
		if err := db.lockWriteClean(ctx); err != nil {
			return nil, err
		}
		defer db.unlockWrite()
	}
	r, err := db.sql.ExecContext(ctx, db.dialect.Rebind(q), args...)
	if err == nil {
		db.countCommit(1)
		db.committed(ctx)
	}
	return r, translate(err)
}

// Query runs a query outside a transaction. A request reads its own writes
// through Work.Query; with a context whose request's unit has a transaction
// open (which this read would not see), Query fails with ErrOutsideUnit.
func (db *DB) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if err := db.outsideUnit(ctx, false); err != nil {
		return nil, err
	}
	q = db.dialect.Rebind(q)
	for attempt := 1; ; attempt++ {
		r, err := db.sql.QueryContext(ctx, q, args...)
		if attempt < maxConnTries && IsConnLost(err) && ctx.Err() == nil {
			continue // a read on a connection the server had closed: on another
		}
		return r, translate(err)
	}
}

// maxConnTries bounds how often a read outside a transaction, or the BEGIN
// of a unit of work, is tried again on another pooled connection after the
// one it got turned out dead (the server restarted or terminated it while it
// sat idle in the pool). Neither can have changed anything.
const maxConnTries = 5

// QueryRow runs a single-row query outside a transaction. With a context
// whose request's unit has a transaction open it panics with ErrOutsideUnit
// (where Query fails): the caller must read through the request's Work.
func (db *DB) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if err := db.outsideUnit(ctx, false); err != nil {
		panic(err)
	}
	q = db.dialect.Rebind(q)
	for attempt := 1; ; attempt++ {
		row := db.sql.QueryRowContext(ctx, q, args...)
		if attempt < maxConnTries && IsConnLost(row.Err()) && ctx.Err() == nil {
			continue
		}
		return row
	}
}

// Ping checks the connection.
func (db *DB) Ping(ctx context.Context) error { return db.sql.PingContext(ctx) }

// Tx is a database transaction with the time it started, so every row a
// transaction writes carries the same timestamp and tests can fix the clock.
type Tx struct {
	tx      txConn
	dialect Dialect
	now     time.Time
	after   []func()
	cache   *sync.Map
	// shield: a grouped SQLite transaction whose statements must not be
	// interrupted by a cancelled context (groupcommit.go).
	shield bool
	// writes counts the writing statements (Exec, ExecLater, ExecAll) run
	// in the transaction: a unit's fn in a transaction that has none needs
	// no savepoint (unit.go).
	writes atomic.Int64
}

func (db *DB) newTx(c txConn) *Tx {
	return &Tx{tx: c, dialect: db.dialect, now: db.Now(), cache: db.cache}
}

// begin starts a write transaction: pipelined on PostgreSQL (pipeline.go),
// a database/sql transaction on SQLite.
func (db *DB) begin(ctx context.Context) (txConn, error) {
	if db.dialect == Postgres {
		return db.beginPipe(ctx, "")
	}
	stx, err := db.beginTx(ctx, nil)
	if err != nil {
		return nil, translate(err)
	}
	return stx, nil
}

// beginTx begins a database/sql transaction: on SQLite, where the caller
// holds writeLock, on the writer's connection; on PostgreSQL on any pooled
// one.
func (db *DB) beginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error) {
	old := db.writer.Load()
	if old == nil {
		return db.sql.BeginTx(ctx, opts)
	}
	stx, err := old.BeginTx(ctx, opts)
	if errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) {
		// The writer's connection is gone (the driver gave it up): nothing
		// began on it, so take another one for the writer.
		w, cerr := db.sql.Conn(ctx)
		if cerr != nil {
			return nil, cerr
		}
		old.Close()
		db.writer.Store(w)
		stx, err = w.BeginTx(ctx, opts)
	}
	return stx, err
}

// commitErr is the error a failed COMMIT returns: ErrCommitUnknown unless
// the transaction is known not to have committed (a statement sent with
// the COMMIT failed before it).
func commitErr(err error) error {
	if errors.Is(err, ErrLaterFailed) || errors.Is(err, errRolledBack) {
		return err
	}
	return errorJoin(ErrCommitUnknown, translate(err))
}

// stmtCtx is the context a statement runs under: a grouped transaction's
// statements check for cancellation before they start and are never
// interrupted once started.
func (tx *Tx) stmtCtx(ctx context.Context) context.Context {
	if tx.shield && ctx.Err() == nil {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

func (tx *Tx) runAfterCommit() {
	for _, f := range tx.after {
		f()
	}
}

// Cache is a per-database map for immutable lookups (an account's id never
// changes once created). Store into it only from AfterCommit, so a value
// created by a transaction that rolled back is never cached.
func (tx *Tx) Cache() *sync.Map { return tx.cache }

// ExecLater runs a statement in the transaction whose result the caller
// does not need: on PostgreSQL it waits and goes to the server with the
// transaction's next statement that needs an answer, or with its COMMIT
// (pipeline.go), saving a round trip; in a unit's SQLite transaction it
// waits for the writer to be taken (latetx.go), elsewhere on SQLite it runs
// at once. Use it for
// writes that fail only when something is wrong (a lost connection, a
// broken invariant): a failure shows at a later statement or at the commit
// and the transaction can then only be rolled back (ErrLaterFailed). The
// error it returns is for SQLite's immediate run, or a transaction already
// broken.
func (tx *Tx) ExecLater(ctx context.Context, q string, args ...any) error {
	tx.writes.Add(1)
	if p, ok := tx.tx.(*pipeTx); ok {
		return p.later(tx.dialect.Rebind(q), args)
	}
	if l, ok := tx.tx.(*lateTx); ok {
		return l.later(ctx, q, args)
	}
	_, err := tx.tx.ExecContext(tx.stmtCtx(ctx), tx.dialect.Rebind(q), args...)
	return translate(err)
}

// ExecLaterExpect is ExecLater for a statement whose row count decides
// whether fn may go on: a compare-and-set such as "UPDATE … WHERE status =
// ?", which must change want rows. On PostgreSQL it waits, like ExecLater,
// for the next statement that needs an answer, and when it changed another
// number of rows that statement returns unmet instead of its own answer
// (a query reading one row cannot, so it is kept): either way InTx returns
// unmet when fn ends, even if fn went on, and rolls fn back as for any error
// of fn. The transaction is not broken: a unit's other savepoints stand. An
// expectation never goes with COMMIT; InTx sends what waits first when one
// is among it. On SQLite the statement runs at once and returns unmet there.
//
// A fn's statements after it run (and are rolled back) when the expectation
// fails, so use it where going on costs nothing but the rollback.
func (tx *Tx) ExecLaterExpect(ctx context.Context, want int64, unmet error, q string, args ...any) error {
	tx.writes.Add(1)
	if p, ok := tx.tx.(*pipeTx); ok {
		return p.laterExpect(tx.dialect.Rebind(q), args, want, unmet)
	}
	res, err := tx.tx.ExecContext(tx.stmtCtx(ctx), tx.dialect.Rebind(q), args...)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n != want {
		return unmet
	}
	return nil
}

// rollbackTo rolls the transaction back to savepoint sp.
func (tx *Tx) rollbackTo(ctx context.Context, sp string) error {
	if p, ok := tx.tx.(*pipeTx); ok {
		return p.rollbackTo(ctx, sp)
	}
	_, err := tx.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+sp)
	return err
}

// unmet is the unmet expectation a batch of this transaction met, if any.
func (tx *Tx) unmet() error {
	if p, ok := tx.tx.(*pipeTx); ok {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.unmet
	}
	return nil
}

// call runs fn in tx and settles its expectations (ExecLaterExpect): an
// unmet one is fn's error, whatever fn made of it.
func (tx *Tx) call(ctx context.Context, fn func(tx *Tx) error) error {
	err := fn(tx)
	if err == nil {
		return tx.settle(ctx)
	}
	if u := tx.unmet(); u != nil {
		return u
	}
	return err
}

// settle reports an unmet expectation of ExecLaterExpect among fn's
// statements, sending what waits if an expectation is among it.
func (tx *Tx) settle(ctx context.Context) error {
	if p, ok := tx.tx.(*pipeTx); ok {
		return p.settle(tx.stmtCtx(ctx))
	}
	return nil
}

// Stmt is one statement of ExecAll.
type Stmt struct {
	Query string
	Args  []any
}

// ExecAll runs stmts in order and returns the rows each affected: on
// PostgreSQL in one round trip with whatever waits (pipeline.go), on SQLite
// one after the other. It stops at the first failure.
func (tx *Tx) ExecAll(ctx context.Context, stmts []Stmt) ([]int64, error) {
	if p, ok := tx.tx.(*pipeTx); ok {
		rebound := make([]Stmt, len(stmts))
		for i, s := range stmts {
			rebound[i] = Stmt{Query: tx.dialect.Rebind(s.Query), Args: s.Args}
		}
		tx.writes.Add(1)
		return p.execAll(tx.stmtCtx(ctx), rebound)
	}
	out := make([]int64, 0, len(stmts))
	for _, s := range stmts {
		res, err := tx.Exec(ctx, s.Query, s.Args...)
		if err != nil {
			return nil, err
		}
		n, _ := res.RowsAffected()
		out = append(out, n)
	}
	return out, nil
}

// broken is the failure that left the transaction unusable (a statement run
// later failed, or the connection died), or nil.
func (tx *Tx) broken() error {
	if p, ok := tx.tx.(*pipeTx); ok {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.broken
	}
	if l, ok := tx.tx.(*lateTx); ok {
		return l.lateErr()
	}
	return nil
}

// Exec runs a statement in the transaction.
func (tx *Tx) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	tx.writes.Add(1)
	r, err := tx.tx.ExecContext(tx.stmtCtx(ctx), tx.dialect.Rebind(q), args...)
	return r, translate(err)
}

// Query runs a query in the transaction.
func (tx *Tx) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	r, err := tx.tx.QueryContext(tx.stmtCtx(ctx), tx.dialect.Rebind(q), args...)
	return r, translate(err)
}

// QueryRow runs a single-row query in the transaction.
func (tx *Tx) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return tx.tx.QueryRowContext(tx.stmtCtx(ctx), tx.dialect.Rebind(q), args...)
}

// Dialect tells which engine this is.
func (tx *Tx) Dialect() Dialect { return tx.dialect }

// Now is the transaction's timestamp.
func (tx *Tx) Now() time.Time { return tx.now }

// AfterCommit registers fn to run once the transaction has committed (for
// waking workers); it never runs if the transaction rolls back.
func (tx *Tx) AfterCommit(fn func()) { tx.after = append(tx.after, fn) }

// InTx runs fn in a transaction, committing when it returns nil. Transient
// failures (SQLite busy, PostgreSQL serialization failure or deadlock) and a
// pooled connection the server closed before the commit are retried with the
// whole of fn, so fn must not have effects outside the transaction.
//
// A request's writes join its unit of work (see Unit) through Work.InTx
// instead: fn runs under a savepoint of the unit's one transaction and
// nothing commits until the unit's owner commits it. InTx itself never
// joins a unit: with a context whose request has one open it fails with
// ErrOutsideUnit rather than commit apart from the request.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	if err := db.outsideUnit(ctx, true); err != nil {
		return err
	}
	var err error
	for attempt := 0; attempt < 8; attempt++ {
		err = db.inTxOnce(ctx, fn)
		if err == nil || !(isTransient(err) || (IsConnLost(err) && !errors.Is(err, ErrCommitUnknown))) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 5 * time.Millisecond):
		}
	}
	return err
}

func (db *DB) inTxOnce(ctx context.Context, fn func(tx *Tx) error) (err error) {
	if db.group != nil {
		return db.group.run(ctx, db, fn)
	}
	stx, err := db.begin(ctx)
	if err != nil {
		return err
	}
	tx := db.newTx(stx)
	defer func() {
		if p := recover(); p != nil {
			stx.Rollback()
			panic(p)
		}
		if err != nil {
			stx.Rollback()
		}
	}()
	if err = tx.call(ctx, fn); err != nil {
		if b := tx.broken(); b != nil {
			return b // the cause, not what it made a later statement say
		}
		return err
	}
	if err = stx.Commit(); err != nil {
		return commitErr(err)
	}
	db.countCommit(1)
	db.committed(ctx)
	tx.runAfterCommit()
	return nil
}

// Micros converts a time to the stored representation: microseconds since
// the Unix epoch in a BIGINT column, identical on both engines.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// FromMicros converts a stored timestamp back to UTC time.
func FromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// NullMicros converts a stored nullable timestamp.
func NullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := FromMicros(v.Int64)
	return &t
}

// MicrosPtr is the stored form of an optional time.
func MicrosPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

// NullString converts a stored nullable text.
func NullString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	v := s.String
	return &v
}

// StringPtr is the stored form of an optional text (NULL when nil).
func StringPtr(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// InSnapshot runs fn in a read-only transaction that sees the database at
// one moment, so a check over several queries (ledger.Verify) is consistent
// while payd keeps writing. On PostgreSQL it is a REPEATABLE READ READ ONLY
// transaction and blocks no one; on SQLite it holds the writer for its
// length (SQLite's reads are consistent only inside one transaction, and
// payd's transactions there always take the writer). Nothing fn writes is
// kept.
func (db *DB) InSnapshot(ctx context.Context, fn func(tx *Tx) error) error {
	opts := &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	if db.writeLock != nil {
		if err := db.lockWriteClean(ctx); err != nil {
			return err
		}
		defer db.unlockWrite()
		opts = nil
	}
	stx, err := db.beginTx(ctx, opts)
	if err != nil {
		return translate(err)
	}
	defer stx.Rollback()
	return fn(&Tx{tx: stx, dialect: db.dialect, now: db.Now(), cache: db.cache})
}
