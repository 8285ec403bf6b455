package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Engine is the seam between payd and the database engine it runs on. Code
// outside this package never asks which engine it has: it asks one of the
// capability flags or calls one of the named operations below, and each
// engine answers in its own way. (Query text stays portable; the clauses
// that differ come from Dialect, the DDL from the migration folders.)
// storetest's TestEngineConformance holds both engines to what each method
// promises.
//
// The value behind it is a Dialect, so asking costs a method call and no
// allocation.
type Engine interface {
	// Name is the engine's name, "sqlite" or "postgres", for logs and the
	// readiness answer; never branch on it.
	Name() string

	// ConcurrentWriters reports whether several write transactions can be
	// open at once (PostgreSQL). When it is false (SQLite) there is one
	// writer: write transactions run one after another (in Go's queue and
	// in commit groups), so what a write transaction read stays true until
	// it commits, running writers in parallel only makes them queue, and
	// an open write transaction holds every other writer back.
	ConcurrentWriters() bool

	// BalanceSlots is how many rows one ledger account's balance spreads
	// over (internal/ledger): the connection pool's size where writers run
	// concurrently, so concurrent postings of one account need not share a
	// row; one where there is a single writer and nothing to spread.
	BalanceSlots() int

	// ForeignKeysLockParents reports whether a foreign key check locks the
	// referenced row until the inserting transaction ends (PostgreSQL's FOR
	// KEY SHARE). Where it does, payd's schema leaves out the keys whose
	// parents are hot rows (a merchant, a ledger account); where it does
	// not (SQLite), the schema keeps them.
	ForeignKeysLockParents() bool

	// ExplainPrefix is the prefix that makes a statement show its plan:
	// with analyze, the plan as executed with its timings where the engine
	// can (PostgreSQL), otherwise the plan it would choose.
	ExplainPrefix(analyze bool) string

	// IntSeries is a common table expression "WITH g(i) AS (…) " yielding
	// the integers from through to, one row each, for bulk loads.
	IntSeries(from, to int64) string

	// LeftPad is expr as text, padded on the left with zeros to width
	// characters (longer values keep their last width characters on
	// SQLite and are cut to width on PostgreSQL: give it values that fit).
	LeftPad(expr string, width int) string

	// JSONMembers is a table expression (give it an alias) of the members
	// of expr, a JSON object stored as text: one row per member, with
	// columns key and value, the value as text when it is a string (a
	// metadata lookup compares both exactly, case included).
	JSONMembers(expr string) string

	// SizeQuery is a query answering one bigint: the bytes the database
	// holds (PostgreSQL: the current schema's tables with their indexes and
	// TOAST; SQLite: the pages in use), for measurements such as bench/scale.
	SizeQuery() string

	// TableSizeQuery is a query answering one bigint: the bytes one table
	// holds with its indexes (PostgreSQL: pg_total_relation_size, TOAST
	// included, in the current schema; SQLite: the pages of its and its
	// indexes' B-trees, from dbstat), the table's name its one parameter.
	TableSizeQuery() string

	// IndexesQuery is a query answering (name, table, definition) for each
	// index of the current schema that DROP INDEX can drop (made by CREATE
	// INDEX, not behind a primary key or UNIQUE constraint), the definition
	// being the statement that makes it again as the engine keeps it
	// (SQLite: sqlite_master.sql; PostgreSQL: pg_get_indexdef). For bulk
	// loads that build indexes after the rows, as a restore does.
	IndexesQuery() string

	// ForeignKeysQuery is a query answering (name, table, definition) for
	// each foreign key of the current schema that ALTER TABLE can drop and
	// add again (PostgreSQL: pg_get_constraintdef), or "" where foreign
	// keys are part of a table's definition and cost a lookup in process
	// (SQLite): nothing to drop.
	ForeignKeysQuery() string

	// SchemaQuery is a query answering one text per index and constraint of
	// the current schema, each with its table and definition (on SQLite
	// every sqlite_master row): two databases with the same answer (sorted)
	// have the same keys and indexes.
	SchemaQuery() string

	// BulkLoad sets what a bulk load of rows wants for the rest of tx and
	// returns what sets it back before tx commits: on PostgreSQL a commit
	// that does not wait for the WAL's flush (SET LOCAL, undone by the
	// transaction's end); on SQLite, whose connection outlives the
	// transaction, a 256 MiB page cache (primary keys' B-trees stay in
	// memory while rows go in), put back by restore.
	BulkLoad(ctx context.Context, tx *Tx) (restore func() error, err error)

	// BulkIndexBuild sets what building indexes over many rows wants for
	// the rest of tx: on PostgreSQL a sort in memory rather than in
	// temporary files (maintenance_work_mem 256 MB, SET LOCAL); SQLite's
	// sorts are in memory already (payd opens it with temp_store=MEMORY).
	BulkIndexBuild(ctx context.Context, tx *Tx) error
}

// Engine returns the engine db runs on.
func (db *DB) Engine() Engine { return db.dialect }

// Engine returns the engine tx runs on.
func (tx *Tx) Engine() Engine { return tx.dialect }

// Name implements Engine.
func (d Dialect) Name() string { return d.String() }

// ConcurrentWriters implements Engine.
func (d Dialect) ConcurrentWriters() bool { return d == Postgres }

// BalanceSlots implements Engine.
func (d Dialect) BalanceSlots() int {
	if d == Postgres {
		return 32
	}
	return 1
}

// ForeignKeysLockParents implements Engine.
func (d Dialect) ForeignKeysLockParents() bool { return d == Postgres }

// ExplainPrefix implements Engine.
func (d Dialect) ExplainPrefix(analyze bool) string {
	switch {
	case d != Postgres:
		return "EXPLAIN QUERY PLAN "
	case analyze:
		return "EXPLAIN (ANALYZE, COSTS OFF) "
	default:
		return "EXPLAIN "
	}
}

// IntSeries implements Engine.
func (d Dialect) IntSeries(from, to int64) string {
	if d == Postgres {
		return fmt.Sprintf("WITH g(i) AS (SELECT generate_series(%d::bigint, %d::bigint)) ", from, to)
	}
	return fmt.Sprintf("WITH RECURSIVE g(i) AS (SELECT %d UNION ALL SELECT i + 1 FROM g WHERE i < %d) ", from, to)
}

// JSONMembers implements Engine.
func (d Dialect) JSONMembers(expr string) string {
	if d == Postgres {
		return "json_each_text((" + expr + ")::json)"
	}
	return "json_each(" + expr + ")"
}

// LeftPad implements Engine.
func (d Dialect) LeftPad(expr string, width int) string {
	if d == Postgres {
		return fmt.Sprintf("lpad((%s)::text, %d, '0')", expr, width)
	}
	return fmt.Sprintf("substr('%s' || (%s), -%d)", strings.Repeat("0", width), expr, width)
}

// Analyze refreshes the planner's statistics of tables after a bulk load,
// as PostgreSQL's autovacuum would shortly after it (without it the planner
// still believes a freshly filled table is nearly empty). SQLite plans
// without statistics unless asked, and payd never asks: there it does
// nothing.
func (db *DB) Analyze(ctx context.Context, tables ...string) error {
	return db.eachTableOnPostgres(ctx, "ANALYZE ", tables)
}

// eachTableOnPostgres runs statement+table for each of tables, one after
// another, on PostgreSQL; on SQLite it does nothing.
func (db *DB) eachTableOnPostgres(ctx context.Context, statement string, tables []string) error {
	if db.dialect != Postgres {
		return nil
	}
	for _, t := range tables {
		if _, err := db.Exec(ctx, statement+t); err != nil {
			return err
		}
	}
	return nil
}

// Tables lists the tables of payd's schema (on PostgreSQL, of the
// connection's current schema), in no particular order.
func (db *DB) Tables(ctx context.Context) ([]string, error) {
	q := "SELECT name FROM sqlite_master WHERE type = 'table'"
	if db.dialect == Postgres {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
	}
	rows, err := db.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// PreferIndexes makes the planner avoid sequential scans for the rest of
// tx where it would pick one on a small table whatever its indexes
// (PostgreSQL: SET LOCAL enable_seqscan = off), so a test's plan on a few
// rows shows the index the query would use on many; SQLite's planner
// already prefers a usable index, and there it does nothing.
func (tx *Tx) PreferIndexes(ctx context.Context) error {
	if tx.dialect != Postgres {
		return nil
	}
	_, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off")
	return err
}

// PreferIndexOrder makes the planner read rows in an index's order rather
// than fetch every match and sort it, for the rest of tx (PostgreSQL: SET
// LOCAL enable_sort and enable_bitmapscan off). A keyset scan that keeps the
// first rows after a position wants the index range read in order up to
// its LIMIT; with statistics that do not yet count a table's new rows,
// PostgreSQL may instead fetch the whole range and sort it, a cost that
// grows with the range. SQLite's planner already reads an index that gives
// the order, and there it does nothing.
func (tx *Tx) PreferIndexOrder(ctx context.Context) error {
	if tx.dialect != Postgres {
		return nil
	}
	_, err := tx.Exec(ctx, "SELECT set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true)")
	return err
}

// WriterTx is what only a transaction that takes SQLite's one writer late
// (a unit's transaction on SQLite, latetx.go) can do. Get it with
// Tx.Writer; elsewhere there is none, and nothing to do.
type WriterTx interface {
	// Enter sets the statement the transaction runs first when it takes
	// the writer, ahead of every statement waiting (ExecLater): an INSERT
	// … ON CONFLICT DO NOTHING that claims one row. When it inserts no row,
	// nothing else of the transaction runs and the transaction fails with
	// unmet having changed nothing, so its rollback undoes no one else's
	// work (in a group's shared transaction the other units go on). ok
	// runs when it inserted its row. A later Enter replaces an earlier
	// one; an entry is a statement of the transaction, which a commit runs
	// if nothing else takes the writer first. Enter reports false, setting
	// nothing, when the transaction has already taken the writer (or
	// ended).
	Enter(q string, args []any, unmet error, ok func()) bool

	// TakeWriter takes the writer now and runs what waits (the entry
	// first), as the transaction's next statement needing an answer would.
	TakeWriter(ctx context.Context) error
}

// Writer returns tx's late-writer verbs and true when tx is a transaction
// that takes SQLite's writer late; otherwise (PostgreSQL, or a SQLite
// transaction outside a unit, which holds the writer from its start) nil
// and false.
func (tx *Tx) Writer() (WriterTx, bool) {
	if l, ok := tx.tx.(*lateTx); ok {
		return l, true
	}
	return nil, false
}

// Enter implements WriterTx. SQLite needs no placeholder rewriting, so q
// runs as given.
func (t *lateTx) Enter(q string, args []any, unmet error, ok func()) bool {
	return t.enter(q, args, unmet, ok)
}

// TakeWriter implements WriterTx.
func (t *lateTx) TakeWriter(ctx context.Context) error { return t.take(ctx) }

// VacuumAnalyze is Analyze that also vacuums the tables (PostgreSQL), which
// sets the visibility map that index-only scans rely on after a bulk load.
// It cannot run inside a transaction. On SQLite it does nothing.
func (db *DB) VacuumAnalyze(ctx context.Context, tables ...string) error {
	return db.eachTableOnPostgres(ctx, "VACUUM ANALYZE ", tables)
}

// FlushLog writes what the write-ahead log holds into the database's own
// files and empties it, as the last step of a bulk load, so that the writes
// after it do not pay for the load: on PostgreSQL a CHECKPOINT (the dirty
// pages of the load flushed now, not by the checkpointer beside the next
// requests); on SQLite a TRUNCATE checkpoint, which copies every frame of
// the log into the database file and truncates the log to nothing (a log
// of gigabytes left by index builds would otherwise be copied by payd's
// checkpointer under load, and its index read by every reader). It cannot
// run inside a transaction and waits for readers older than the log's end.
func (db *DB) FlushLog(ctx context.Context) error {
	if db.dialect == Postgres {
		_, err := db.sql.ExecContext(ctx, "CHECKPOINT")
		return err
	}
	// The writer first, as the checkpointer takes it: a transaction parked
	// on it for the next commit group would hold SQLite's write lock.
	if err := db.lockWriteClean(ctx); err != nil {
		return err
	}
	defer db.unlockWrite()
	var busy, log, copied int
	if err := db.sql.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &copied); err != nil {
		return err
	}
	if busy != 0 {
		return fmt.Errorf("%w (%d of %d frames copied)", ErrLogBusy, copied, log)
	}
	return nil
}

// ErrLogBusy is FlushLog's answer when a reader kept SQLite's log from
// being emptied past the busy timeout: what it could copy is copied.
var ErrLogBusy = errors.New("store: the log could not be emptied: a reader held it")

// VacuumFull rewrites the tables (PostgreSQL: VACUUM FULL), so that their
// files hold only their live rows after a bulk delete, for measuring their
// size; it locks each table while it runs. SQLite reuses the pages a delete
// frees inside the file, which its size (SizeQuery, TableSizeQuery) already
// leaves out: there it does nothing.
func (db *DB) VacuumFull(ctx context.Context, tables ...string) error {
	return db.eachTableOnPostgres(ctx, "VACUUM FULL ", tables)
}

// CheapRandomReads tells the planner, for the rest of tx, that a random
// page read costs little more than a sequential one, as on an SSD
// (PostgreSQL: SET LOCAL random_page_cost = 1.1), and reports true; SQLite's
// planner has no such cost, and there it does nothing and reports false.
func (tx *Tx) CheapRandomReads(ctx context.Context) (bool, error) {
	if tx.dialect != Postgres {
		return false, nil
	}
	_, err := tx.Exec(ctx, "SET LOCAL random_page_cost = 1.1")
	return err == nil, err
}

// IndexesQuery implements Engine.
func (d Dialect) IndexesQuery() string {
	if d == Postgres {
		return `SELECT i.relname, t.relname, pg_get_indexdef(i.oid) FROM pg_index x
			JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
			JOIN pg_namespace ns ON ns.oid = t.relnamespace
			WHERE ns.nspname = current_schema() AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`
	}
	return "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
}

// ForeignKeysQuery implements Engine.
func (d Dialect) ForeignKeysQuery() string {
	if d == Postgres {
		return `SELECT c.conname, t.relname, pg_get_constraintdef(c.oid) FROM pg_constraint c
			JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace ns ON ns.oid = t.relnamespace
			WHERE c.contype = 'f' AND ns.nspname = current_schema()`
	}
	return ""
}

// SchemaQuery implements Engine.
func (d Dialect) SchemaQuery() string {
	if d == Postgres {
		return `SELECT 'index ' || indexname || ' ON ' || tablename || ': ' || indexdef FROM pg_indexes WHERE schemaname = current_schema()
			UNION ALL
			SELECT 'constraint ' || c.conname || ' ON ' || r.relname || ': ' || pg_get_constraintdef(c.oid) FROM pg_constraint c
			JOIN pg_class r ON r.oid = c.conrelid JOIN pg_namespace ns ON ns.oid = r.relnamespace WHERE ns.nspname = current_schema()`
	}
	return "SELECT type || ' ' || name || ' ON ' || tbl_name || ': ' || COALESCE(sql, '') FROM sqlite_master"
}

// BulkLoad implements Engine.
func (d Dialect) BulkLoad(ctx context.Context, tx *Tx) (restore func() error, err error) {
	if d == Postgres {
		_, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off")
		return func() error { return nil }, err
	}
	var was int64
	if err := tx.QueryRow(ctx, "PRAGMA cache_size").Scan(&was); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, "PRAGMA cache_size = -262144"); err != nil {
		return nil, err
	}
	return func() error {
		_, err := tx.Exec(ctx, fmt.Sprintf("PRAGMA cache_size = %d", was))
		return err
	}, nil
}

// BulkIndexBuild implements Engine.
func (d Dialect) BulkIndexBuild(ctx context.Context, tx *Tx) error {
	if d == Postgres {
		_, err := tx.Exec(ctx, "SET LOCAL maintenance_work_mem = '256MB'")
		return err
	}
	return nil
}

// TableSizeQuery implements Engine.
func (d Dialect) TableSizeQuery() string {
	if d == Postgres {
		return `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = current_schema() AND c.relkind = 'r' AND c.relname = ?`
	}
	return `SELECT COALESCE(SUM(d.pgsize), 0) FROM sqlite_master m JOIN dbstat d ON d.name = m.name AND d.aggregate = TRUE
		WHERE m.tbl_name = ? AND m.type IN ('table', 'index')`
}

// SizeQuery implements Engine.
func (d Dialect) SizeQuery() string {
	if d == Postgres {
		return `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = current_schema() AND c.relkind = 'r'`
	}
	return `SELECT ((SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count FROM pragma_freelist_count()))
		* (SELECT page_size FROM pragma_page_size())`
}
