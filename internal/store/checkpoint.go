package store

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// WAL checkpoints off SQLite's writer.
//
// SQLite copies the write-ahead log back into the database file (a
// checkpoint) by default inside the COMMIT that takes the log past 1,000
// pages: the writer that happens to cross the line does the copy, its fsyncs
// included, while every other writer waits for it. payd turns that off
// (wal_autocheckpoint(0) on every connection) and checkpoints from a
// goroutine of its own, in two steps:
//
//  1. a PASSIVE checkpoint on a connection of its own, without the writer:
//     it copies the committed pages while writers go on appending to the
//     log on the other core;
//  2. when the log holds ckptRestartFrames pages or more and step 1 could
//     not copy it all, a second PASSIVE checkpoint while holding the
//     writer. It has only the pages committed during step 1 left to copy,
//     and it leaves the log fully copied, so the next write transaction
//     starts the log over from its beginning instead of letting it grow
//     for as long as writes keep coming.
//
// A reader's open snapshot still holds back the pages it may need, as with
// SQLite's own checkpoints. The last connection to close checkpoints the
// rest (SQLite does that on close).

const (
	// The checkpointer runs a round every ckptCommits commits, and every
	// ckptEvery if there were any since the last round.
	ckptCommits = 128
	ckptEvery   = 100 * time.Millisecond
	// ckptRestartFrames is the log length (in pages) past which the
	// checkpointer finishes under the writer so that the log restarts:
	// SQLite's own default checkpoint threshold.
	ckptRestartFrames = 1000
)

// checkpointer runs SQLite's checkpoints until stop is closed.
type checkpointer struct {
	ctx  context.Context // ends when the DB closes, with a round in progress
	stop context.CancelFunc
	wake chan struct{}
	done sync.WaitGroup
	// covered is the commit count a round last began at: every commit up to
	// it has been through a finished round (tests wait on it).
	covered atomic.Int64
}

// poke asks for a round now (it never blocks a commit).
func (c *checkpointer) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (db *DB) startCheckpointer() {
	c := &checkpointer{wake: make(chan struct{}, 1)}
	c.ctx, c.stop = context.WithCancel(context.Background())
	db.ckpt = c
	c.done.Add(1)
	go func() {
		defer c.done.Done()
		t := time.NewTicker(ckptEvery)
		defer t.Stop()
		var seen int64
		for {
			select {
			case <-c.ctx.Done():
				return
			case <-t.C:
			case <-c.wake:
			}
			if n := db.commits.Load(); n != seen {
				seen = n
				db.checkpointWAL(c.ctx)
				c.covered.Store(n)
			}
		}
	}()
}

func (c *checkpointer) close() {
	c.stop()
	c.done.Wait()
}

// checkpointWAL runs one checkpoint round (steps 1 and 2 above) and returns
// the log's length in pages after it, or -1 when the round failed (a busy
// or closed database: the next round tries again).
func (db *DB) checkpointWAL(ctx context.Context) int {
	_, log, copied, err := db.walCheckpoint(ctx)
	if err != nil {
		return -1
	}
	if log < ckptRestartFrames || copied == log {
		// Short, or copied whole: the next write starts the log over.
		return log
	}
	// The writer before a connection, as every writer takes them: one
	// waiting for the writer while holding a connection could wait for a
	// unit that holds the writer and waits for a connection.
	if err := db.lockWriteClean(ctx); err != nil {
		return -1
	}
	defer db.unlockWrite()
	if _, log, _, err = db.walCheckpoint(ctx); err != nil {
		return -1
	}
	return log
}

// walCheckpoint runs a PASSIVE checkpoint on a pooled connection and
// returns SQLite's answer: whether it was blocked, the log's length and how
// much of it is copied, in pages.
func (db *DB) walCheckpoint(ctx context.Context) (busy, log, copied int, err error) {
	err = db.sql.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied)
	return
}
