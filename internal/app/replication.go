package app

import (
	"context"
	"strings"

	"github.com/payd/payd/internal/store"
)

// unsafeCommitWarning is logged once at serve start when the PostgreSQL
// primary commits without waiting for a standby.
const unsafeCommitWarning = "the PostgreSQL primary has no synchronous standby configured: answered payments can be lost if the primary fails"

// warnWithoutSynchronousStandby logs unsafeCommitWarning when payd writes
// to a PostgreSQL primary whose commits do not wait for a standby
// (synchronous_standby_names empty, or synchronous_commit off or local):
// a payment answered 201 may then be missing from the standby promoted
// after the primary fails. SQLite (one machine) has no standby to ask
// about.
func (m *Main) warnWithoutSynchronousStandby(ctx context.Context) {
	if m.DB.Dialect() != store.Postgres {
		return
	}
	var names, commit string
	if err := m.DB.QueryRow(ctx, "SELECT current_setting('synchronous_standby_names'), current_setting('synchronous_commit')").Scan(&names, &commit); err != nil {
		m.Logger.Warn("could not read the database's synchronous replication settings", "err", err)
		return
	}
	if strings.TrimSpace(names) == "" || commit == "off" || commit == "local" {
		m.Logger.Warn(unsafeCommitWarning, "synchronous_standby_names", names, "synchronous_commit", commit)
	}
}
