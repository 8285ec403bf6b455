package reconciliation

import (
	"context"
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
		ctx := context.Background()
		now := time.Now()
		args := []any{store.Micros(now.Add(-minTimeout)), store.Micros(now), batch}
		var plan strings.Builder
		err := db.InTx(ctx, func(tx *store.Tx) error {
			explain := "EXPLAIN QUERY PLAN "
			if db.Dialect() == store.Postgres {
				explain = "EXPLAIN "
				if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
					return err
				}
			}
			rows, err := tx.Query(ctx, explain+openIntentsQuery, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				for i := range vals {
					vals[i] = new(any)
				}
				if err := rows.Scan(vals...); err != nil {
					return err
				}
				for _, v := range vals {
					if s, ok := (*v.(*any)).(string); ok {
						plan.WriteString(s + "\n")
					}
				}
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan.String(), "payment_intents_open") {
			t.Fatalf("the open intents' scan does not read payment_intents_open:\n%s", plan.String())
		}
	})
}
