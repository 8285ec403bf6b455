package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestAskingTheEngineAllocatesNothing: the seam costs a method call and no
// allocation, so the write path (the ledger asks BalanceSlots per entry) pays
// nothing for it.
func TestAskingTheEngineAllocatesNothing(t *testing.T) {
	db, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "e.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, d := range []Dialect{SQLite, Postgres} {
		tx := &Tx{dialect: d}
		n := 0
		if allocs := testing.AllocsPerRun(1000, func() {
			n += tx.Engine().BalanceSlots()
			if tx.Engine().ConcurrentWriters() {
				n++
			}
			if _, ok := tx.Writer(); ok {
				n++
			}
		}); allocs != 0 {
			t.Errorf("%s: %v allocations per ask", d, allocs)
		}
	}
	if db.Engine().Name() != "sqlite" {
		t.Fatalf("a SQLite database's engine is %s", db.Engine().Name())
	}
}
