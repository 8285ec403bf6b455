package store

import "context"

// QueuedWriters is how many write transactions wait for SQLite's writer
// (always 0 on PostgreSQL).
func QueuedWriters(db *DB) int {
	if db.group == nil {
		return 0
	}
	db.group.mu.Lock()
	defer db.group.mu.Unlock()
	return len(db.group.queue)
}

// GroupCommits is how many grouped commits SQLite made (0 on PostgreSQL).
func GroupCommits(db *DB) int64 {
	if db.group == nil {
		return 0
	}
	return db.group.batches.Load()
}

// WriteWaiters is how many units wait for SQLite's writer (0 on PostgreSQL).
func WriteWaiters(db *DB) int32 { return db.writeWaiters.Load() }

// SharesParked reports whether u's open SQLite transaction goes on in
// another unit's parked one (group commit).
func SharesParked(u *Unit) bool { return u.sharedTx() != nil }

// DropWriterConn closes the SQLite writer's own connection, as a driver that
// gave it up would leave it (no-op on PostgreSQL).
func DropWriterConn(db *DB) {
	if w := db.writer.Load(); w != nil {
		w.Close()
	}
}

// IsTransient reports whether err is a failure a request runs again for
// (an aborted group, a deadlock, a busy database).
func IsTransient(err error) bool { return isTransient(err) }

// ApplyMigration applies m as Migrate applies each migration it has not
// recorded (on PostgreSQL with its lock waits bounded and retried).
func ApplyMigration(ctx context.Context, db *DB, m Migration) error {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return db.applyRetrying(ctx, conn, m)
}
