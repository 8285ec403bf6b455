package store

import (
	"context"
	"strings"
)

// Replication is how a commit waits for standbys.
type Replication struct {
	// Replicated is false on an engine with no standbys at all (SQLite:
	// one file on one machine); the fields below are then empty.
	Replicated bool
	// StandbyNames and SynchronousCommit are PostgreSQL's
	// synchronous_standby_names and synchronous_commit for this session.
	StandbyNames, SynchronousCommit string
}

// Synchronous reports whether a commit returns only once a standby has it:
// a standby is named and synchronous_commit waits for it.
func (r Replication) Synchronous() bool {
	return strings.TrimSpace(r.StandbyNames) != "" && r.SynchronousCommit != "off" && r.SynchronousCommit != "local"
}

// Replication reads how this database's commits wait for standbys.
func (db *DB) Replication(ctx context.Context) (Replication, error) {
	if db.dialect != Postgres {
		return Replication{}, nil
	}
	r := Replication{Replicated: true}
	err := db.QueryRow(ctx, "SELECT current_setting('synchronous_standby_names'), current_setting('synchronous_commit')").
		Scan(&r.StandbyNames, &r.SynchronousCommit)
	return r, err
}
