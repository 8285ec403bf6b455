package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestFaultCommits: a unit commit whose answer FaultCommits loses answers
// ErrCommitUnknown, having committed (CommitLostAfter) or not
// (CommitLostBefore); with the hook removed, commits are answered again.
func TestFaultCommits(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		cases := []struct {
			id    string
			fault store.CommitFault
			rows  int
		}{
			{"mer_fault_after", store.CommitLostAfter, 1},
			{"mer_fault_before", store.CommitLostBefore, 0},
			{"mer_fault_none", store.CommitNormally, 1},
		}
		for _, tc := range cases {
			db.FaultCommits(func(context.Context) store.CommitFault { return tc.fault })
			ctx, u := db.NewUnit(context.Background(), store.UnitHooks{})
			if err := u.Work().InTx(ctx, func(tx *store.Tx) error { return insertMerchant(ctx, tx, tc.id) }); err != nil {
				t.Fatal(err)
			}
			err := u.Commit(ctx, nil)
			db.FaultCommits(nil)
			if lost := errors.Is(err, store.ErrCommitUnknown); lost != (tc.fault != store.CommitNormally) || (!lost && err != nil) {
				t.Fatalf("%s: commit answered %v", tc.id, err)
			}
			if n := countMerchants(t, db, tc.id); n != tc.rows {
				t.Fatalf("%s: %d rows, want %d", tc.id, n, tc.rows)
			}
		}
	})
}
