package store

import (
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"

	"modernc.org/sqlite"

	"github.com/payd/payd/internal/tracing"
)

// SQLite statement cache.
//
// database/sql hands every Exec and Query to the driver as a string, and the
// SQLite driver compiles each one afresh and throws it away: parsing and
// planning took about a third of payd's CPU time on the write path. Each
// connection opened through the "payd-sqlite" driver keeps its compiled
// statements, keyed by their text, and runs them again with new arguments
// (sqlite3_reset and new bindings), so a statement payd runs often is
// compiled once per connection. SQLite recompiles a kept statement by itself
// when the schema changes under it.
//
// A statement whose rows are still being read is busy: the same text run
// again meanwhile (a query inside a loop over another's rows) gets a
// statement of its own for that call. The cache holds at most
// stmtCacheSize statements per connection and forgets the least recently
// used one that is not busy.

const stmtCacheSize = 256

func init() {
	sql.Register("payd-sqlite", cachingDriver{base: &sqlite.Driver{}})
}

type cachingDriver struct{ base driver.Driver }

func (d cachingDriver) Open(name string) (driver.Conn, error) {
	c, err := d.base.Open(name)
	if err != nil {
		return nil, err
	}
	return newCachingConn(c)
}

// baseConn is what payd needs of the SQLite driver's connection.
type baseConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.SessionResetter
	driver.Validator
	driver.Pinger
}

var errNotCacheable = errors.New("store: the SQLite driver's connection lacks an interface the statement cache needs")

func newCachingConn(c driver.Conn) (driver.Conn, error) {
	bc, ok := c.(baseConn)
	if !ok {
		c.Close()
		return nil, errNotCacheable
	}
	return &cachingConn{baseConn: bc, stmts: map[string]*list.Element{}, lru: list.New()}, nil
}

type cachingConn struct {
	baseConn
	mu     sync.Mutex
	closed bool
	stmts  map[string]*list.Element // query → element of lru holding *cachedStmt
	lru    *list.List               // front: most recently used
}

type cachedStmt struct {
	query string
	stmt  driver.Stmt
	busy  bool // its rows are open
}

// stmtExec and stmtQuery are the context-taking methods of the driver's
// statements.
type stmtExec interface {
	driver.StmtExecContext
	driver.StmtQueryContext
}

// take returns the cached statement for query, compiling it if needed, and
// marks it used; transient is true when the cached one is busy and the
// statement returned must be closed by the caller after use.
func (c *cachingConn) take(ctx context.Context, query string) (cs *cachedStmt, transient bool, err error) {
	c.mu.Lock()
	if e, ok := c.stmts[query]; ok {
		cs = e.Value.(*cachedStmt)
		if !cs.busy {
			c.lru.MoveToFront(e)
			c.mu.Unlock()
			return cs, false, nil
		}
		c.mu.Unlock()
		s, err := c.baseConn.PrepareContext(ctx, query)
		if err != nil {
			return nil, false, err
		}
		return &cachedStmt{query: query, stmt: s}, true, nil
	}
	c.mu.Unlock()
	s, err := c.baseConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, false, err
	}
	if _, ok := s.(stmtExec); !ok {
		s.Close()
		return nil, false, errNotCacheable
	}
	cs = &cachedStmt{query: query, stmt: s}
	c.mu.Lock()
	c.stmts[query] = c.lru.PushFront(cs)
	c.evictLocked()
	c.mu.Unlock()
	return cs, false, nil
}

// evictLocked closes the least recently used statements that are not busy
// until the cache is within its size.
func (c *cachingConn) evictLocked() {
	for e := c.lru.Back(); e != nil && c.lru.Len() > stmtCacheSize; {
		prev := e.Prev()
		if cs := e.Value.(*cachedStmt); !cs.busy {
			c.lru.Remove(e)
			delete(c.stmts, cs.query)
			cs.stmt.Close()
		}
		e = prev
	}
}

// drop forgets a statement that failed in a way that may have left it
// unusable.
func (c *cachingConn) drop(cs *cachedStmt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.stmts[cs.query]; ok && e.Value.(*cachedStmt) == cs {
		c.lru.Remove(e)
		delete(c.stmts, cs.query)
	}
	cs.stmt.Close()
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if tracing.On() {
		return c.execTraced(ctx, query, args) // tracing.go
	}
	return c.exec(ctx, query, args)
}

func (c *cachingConn) exec(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, transient, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if transient {
		defer cs.stmt.Close()
	}
	return cs.stmt.(stmtExec).ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if tracing.On() {
		return c.queryTraced(ctx, query, args) // tracing.go
	}
	return c.query(ctx, query, args)
}

func (c *cachingConn) query(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, transient, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if !transient {
		c.mu.Lock()
		cs.busy = true
		c.mu.Unlock()
	}
	rows, err := cs.stmt.(stmtExec).QueryContext(ctx, args)
	if err != nil {
		if transient {
			cs.stmt.Close()
		} else {
			c.drop(cs)
		}
		return nil, err
	}
	return &cachedRows{Rows: rows, c: c, cs: cs, transient: transient}, nil
}

// Close finalizes the kept statements, except those whose rows are still
// open (their rows finalize them when closed), and closes the connection.
func (c *cachingConn) Close() error {
	c.mu.Lock()
	for e := c.lru.Front(); e != nil; e = e.Next() {
		if cs := e.Value.(*cachedStmt); !cs.busy {
			cs.stmt.Close()
		}
	}
	c.stmts, c.lru, c.closed = map[string]*list.Element{}, list.New(), true
	c.mu.Unlock()
	return c.baseConn.Close()
}

// cachedRows hands its statement back to the cache when closed.
type cachedRows struct {
	driver.Rows
	c         *cachingConn
	cs        *cachedStmt
	transient bool
	closed    bool
}

func (r *cachedRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.Rows.Close() // resets the statement for its next run
	if r.transient {
		if cerr := r.cs.stmt.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if err != nil {
		r.c.drop(r.cs)
		return err
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	r.cs.busy = false
	if r.c.closed {
		return r.cs.stmt.Close()
	}
	return nil
}
