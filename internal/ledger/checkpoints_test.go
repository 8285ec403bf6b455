package ledger_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestCheckpoints: the job writes one checkpoint every N entries of each
// available account, holding the running sum up to it; it skips entries
// younger than the settling time; Verify catches a wrong checkpoint; and the
// sandbox purge drops the checkpoints of the accounts it folds, after which
// the job rebuilds them on what is left.
func TestCheckpoints(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		db.SetClock(func() time.Time { return now })
		post := func(amount int64) {
			t.Helper()
			if err := db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, "mer_cp", "DJF", amount) }); err != nil {
				t.Fatal(err)
			}
			now = now.Add(time.Hour)
		}
		amounts := []int64{5, 7, 11, 13, 17, 19, 23, 29, 31, 37}
		for _, a := range amounts {
			post(a)
		}
		n, err := ledger.WriteCheckpoints(ctx, db, 3, 150*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		// Entries 3, 6 and 9 qualify; entry 9 was posted 2 h before now,
		// inside the settling time, so only two.
		if n != 2 {
			t.Fatalf("wrote %d checkpoints, want 2", n)
		}
		points := checkpoints(t, db)
		want := []int64{5 + 7 + 11, 5 + 7 + 11 + 13 + 17 + 19}
		if len(points) != 2 || points[0].Balance != want[0] || points[1].Balance != want[1] {
			t.Fatalf("checkpoints %+v, want balances %v", points, want)
		}
		if n, err := ledger.WriteCheckpoints(ctx, db, 3, 0); err != nil || n != 1 {
			t.Fatalf("second run wrote %d (%v), want 1 (entry 9)", n, err)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
		c, ok, err := ledger.CheckpointAtOrAfter(ctx, db, points[0].acct, points[0].EntryID+1)
		if err != nil || !ok || c.EntryID != points[1].EntryID {
			t.Fatalf("CheckpointAtOrAfter: %+v %v %v, want entry %d", c, ok, err, points[1].EntryID)
		}

		if _, err := db.Exec(ctx, "UPDATE ledger_checkpoints SET balance = balance + 1 WHERE entry_id = ?", points[1].EntryID); err != nil {
			t.Fatal(err)
		}
		if err := ledger.Verify(ctx, db); err == nil || !strings.Contains(err.Error(), "checkpoint") {
			t.Fatalf("Verify of a wrong checkpoint: %v", err)
		}
		if _, err := db.Exec(ctx, "UPDATE ledger_checkpoints SET balance = balance - 1 WHERE entry_id = ?", points[1].EntryID); err != nil {
			t.Fatal(err)
		}

		// Fold the first five postings: the checkpoints go, and come back
		// on the carry-forward's numbering.
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := ledger.CompactTestMode(ctx, tx, time.Date(2026, 6, 1, 16, 30, 0, 0, time.UTC))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got := checkpoints(t, db); len(got) != 0 {
			t.Fatalf("checkpoints after the purge: %+v", got)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
		if n, err := ledger.WriteCheckpoints(ctx, db, 2, 0); err != nil || n != 3 {
			t.Fatalf("rebuild wrote %d (%v), want 3 (6 entries left)", n, err)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}

type point struct {
	acct string
	ledger.Checkpoint
}

func checkpoints(t *testing.T, db *store.DB) []point {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT account_id, entry_id, balance FROM ledger_checkpoints ORDER BY account_id, entry_id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []point
	for rows.Next() {
		var p point
		if err := rows.Scan(&p.acct, &p.EntryID, &p.Balance); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}
