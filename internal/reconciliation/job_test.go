package reconciliation

import (
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestOpenIntentsReadThroughTheirIndex: the reconciliation scan reads the
// partial index of open live intents, not every intent, on both engines
// (on PostgreSQL with sequential scans discouraged, since a planner may
// prefer one on a table this small: what is checked is that the index
// serves the query at all).
func TestOpenIntentsReadThroughTheirIndex(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.Now()
		args := []any{store.Micros(now.Add(-minTimeout)), store.Micros(now), batch}
		plan := storetest.QueryPlan(t, db, openIntentsQuery, args...)
		if !strings.Contains(plan, "payment_intents_open") {
			t.Fatalf("the open intents' scan does not read payment_intents_open:\n%s", plan)
		}
	})
}
