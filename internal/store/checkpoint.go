package store

import (
	"context"
	"sync"
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
//  2. when the log holds ckptRestartFrames pages or more, a second PASSIVE
//     checkpoint while holding the writer. It has only the pages committed
//     during step 1 left to copy, and it leaves the log fully copied, so
//     the next write transaction starts the log over from its beginning
//     instead of letting it grow for as long as writes keep coming.
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
	stop chan struct{}
	wake chan struct{}
	done sync.WaitGroup
}

// poke asks for a round now (it never blocks a commit).
func (c *checkpointer) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (db *DB) startCheckpointer() {
	c := &checkpointer{stop: make(chan struct{}), wake: make(chan struct{}, 1)}
	db.ckpt = c
	c.done.Add(1)
	go func() {
		defer c.done.Done()
		t := time.NewTicker(ckptEvery)
		defer t.Stop()
		var seen int64
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
			case <-c.wake:
			}
			if n := db.commits.Load(); n != seen {
				seen = n
				db.checkpointWAL(context.Background())
			}
		}
	}()
}

func (c *checkpointer) close() {
	close(c.stop)
	c.done.Wait()
}

// checkpointWAL runs one checkpoint round (steps 1 and 2 above) and returns
// the log's length in pages after it, or -1 when the round failed (a busy
// or closed database: the next round tries again).
func (db *DB) checkpointWAL(ctx context.Context) int {
	// The connection is taken before the writer: units hold the writer
	// before they take a connection, so waiting for a connection while
	// holding the writer could wait forever.
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return -1
	}
	defer conn.Close()
	var busy, log, copied int
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied); err != nil {
		return -1
	}
	if log < ckptRestartFrames {
		return log
	}
	if err := db.lockWriteClean(ctx); err != nil {
		return -1
	}
	defer db.unlockWrite()
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied); err != nil {
		return -1
	}
	return log
}
