package ledger_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

func reserve(ctx context.Context, tx *store.Tx, m, cur string, amt int64) error {
	_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m, Kind: "payout_reserve", Entries: []ledger.Entry{
		{acct(m, cur, ledger.Available), -amt}, {acct(m, cur, ledger.Reserved), amt}}})
	return err
}

// TestCreditsOfOneMerchantDoNotQueue holds 16 transactions open at once, each
// after crediting the same merchant: with one balance row per account the
// second would wait for the first's row lock and they could never all be
// open together. SQLite has one writer, so there they simply run in turn.
func TestCreditsOfOneMerchantDoNotQueue(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const n = 16
		concurrent := db.Engine().ConcurrentWriters()
		// The accounts exist before the race: creating an account is a
		// unique insert, which concurrent creators do wait for.
		if err := db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, "mer_hot", "DJF", 10) }); err != nil {
			t.Fatal(err)
		}
		waitAll, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var arrived sync.WaitGroup
		arrived.Add(n)
		allIn := make(chan struct{})
		go func() { arrived.Wait(); close(allIn) }()
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.InTx(ctx, func(tx *store.Tx) error {
					if err := topup(ctx, tx, "mer_hot", "DJF", 10); err != nil {
						return err
					}
					if concurrent {
						arrived.Done()
						select {
						case <-allIn:
						case <-waitAll.Done():
							return errors.New("the merchant's credits queue on one row: not all 16 transactions could hold a credit at once")
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		avail := acct("mer_hot", "DJF", ledger.Available)
		const total = 10 * (n + 1)
		if bal, err := ledger.AccountBalance(ctx, db, avail); err != nil || bal != total {
			t.Fatalf("balance %d, %v; want %d", bal, err, total)
		}
		slots, err := ledger.SlotsOf(ctx, db, avail)
		if err != nil {
			t.Fatal(err)
		}
		if concurrent && slots < 2 {
			t.Fatalf("%d balance rows after %d concurrent credits", slots, n)
		}
		// A debit larger than any one slot draws from all of them; one more
		// unit is refused.
		if err := db.InTx(ctx, func(tx *store.Tx) error { return reserve(ctx, tx, "mer_hot", "DJF", total) }); err != nil {
			t.Fatalf("reserve the whole balance over %d slots: %v", slots, err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return reserve(ctx, tx, "mer_hot", "DJF", 1) }); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("overdraw after emptying: %v", err)
		}
		if bal, _ := ledger.AccountBalance(ctx, db, avail); bal != 0 {
			t.Fatalf("available %d after reserving everything", bal)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}

// TestConcurrentCreditsAndDebitsStayExact races 64 credits and debits
// (top-ups and payout reserves) of one merchant: every debit that succeeds is
// covered, every refused one was not, and the balances equal the sums.
func TestConcurrentCreditsAndDebitsStayExact(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const n = 64
		db.SQL().SetMaxOpenConns(16) // the PostgreSQL server is shared: 64 racers, 16 connections
		if err := db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, "mer_race", "DJF", 300) }); err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(3, 4))
		amounts := make([]int64, n)
		for i := range amounts {
			amounts[i] = 1 + r.Int64N(2_000)
		}
		var mu sync.Mutex
		var credited, debited int64 = 300, 0
		refused := 0
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				amt := amounts[i]
				var err error
				if i%2 == 0 {
					err = db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, "mer_race", "DJF", amt) })
				} else {
					err = db.InTx(ctx, func(tx *store.Tx) error { return reserve(ctx, tx, "mer_race", "DJF", amt) })
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && i%2 == 0:
					credited += amt
				case err == nil:
					debited += amt
				case errors.Is(err, ledger.ErrInsufficientFunds):
					refused++
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		bals, err := ledger.Balances(ctx, db, "mer_race", false)
		if err != nil || len(bals) != 1 {
			t.Fatalf("balances %v, %v", bals, err)
		}
		if bals[0].Available != credited-debited || bals[0].Reserved != debited {
			t.Fatalf("available %d reserved %d; want %d and %d (%d debits refused)",
				bals[0].Available, bals[0].Reserved, credited-debited, debited, refused)
		}
		t.Logf("%d debits refused for want of funds", refused)
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPostingQueuesWhenEverySlotIsBusy: with every balance row of the
// accounts held by open transactions, one more posting queues on a row (on
// PostgreSQL its balance updates go in one round trip, each taking a free
// row or else waiting for one) and goes in once a holder commits.
func TestPostingQueuesWhenEverySlotIsBusy(t *testing.T) {
	db := storetest.Open(t, storetest.Postgres)
	ctx := context.Background()
	if err := db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, "mer_busy", "DJF", 10) }); err != nil {
		t.Fatal(err)
	}
	const holders = 32 // every slot of both accounts
	db.SetPoolSize(holders + 4)
	release := make(chan struct{})
	var held, done sync.WaitGroup
	held.Add(holders)
	for i := 0; i < holders; i++ {
		done.Add(1)
		go func() {
			defer done.Done()
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if err := topup(ctx, tx, "mer_busy", "DJF", 10); err != nil {
					return err
				}
				held.Done()
				<-release
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	held.Wait()
	together := ledger.MovedTogether()
	last := make(chan error, 1)
	go func() {
		last <- db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, "mer_busy", "DJF", 10) })
	}()
	select {
	case err := <-last:
		t.Fatalf("a posting went in while every slot was held (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if err := <-last; err != nil {
		t.Fatal(err)
	}
	done.Wait()
	// The queued posting's two entries went through the one-round-trip
	// update (each waiting on a held row), not the entry-by-entry fallback.
	if n := ledger.MovedTogether() - together; n < 2 {
		t.Fatalf("%d entries moved together after the slots were released, want at least the last posting's 2", n)
	}
	avail := acct("mer_busy", "DJF", ledger.Available)
	if bal, err := ledger.AccountBalance(ctx, db, avail); err != nil || bal != 10*(holders+2) {
		t.Fatalf("balance %d, %v; want %d", bal, err, 10*(holders+2))
	}
	if err := ledger.Verify(ctx, db); err != nil {
		t.Fatal(err)
	}
}
