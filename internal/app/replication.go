package app

import "context"

// unsafeCommitWarning is logged once at serve start when the PostgreSQL
// primary commits without waiting for a standby.
const unsafeCommitWarning = "the PostgreSQL primary has no synchronous standby configured: answered payments can be lost if the primary fails"

// warnWithoutSynchronousStandby logs unsafeCommitWarning when payd writes
// to a replicated database whose commits do not wait for a standby
// (PostgreSQL: synchronous_standby_names empty, or synchronous_commit off
// or local): a payment answered 201 may then be missing from the standby
// promoted after the primary fails. SQLite (one machine) has no standby to
// ask about.
func (m *Main) warnWithoutSynchronousStandby(ctx context.Context) {
	r, err := m.DB.Replication(ctx)
	if err != nil {
		m.Logger.Warn("could not read the database's synchronous replication settings", "err", err)
		return
	}
	if r.Replicated && !r.Synchronous() {
		m.Logger.Warn(unsafeCommitWarning, "synchronous_standby_names", r.StandbyNames, "synchronous_commit", r.SynchronousCommit)
	}
}
