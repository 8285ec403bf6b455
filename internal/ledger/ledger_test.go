package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

func acct(m string, cur string, k ledger.AccountKind) ledger.AccountRef {
	return ledger.AccountRef{MerchantID: m, Currency: cur, Kind: k}
}

func TestValidate(t *testing.T) {
	m := "mer_1"
	cases := []struct {
		name string
		tx   ledger.Transaction
		want error
	}{
		{"one entry", ledger.Transaction{Entries: []ledger.Entry{{acct(m, "DJF", ledger.Available), 1}}}, ledger.ErrInvalidEntry},
		{"unbalanced", ledger.Transaction{Entries: []ledger.Entry{{acct(m, "DJF", ledger.Available), 10}, {acct(m, "DJF", ledger.SandboxFunding), -9}}}, ledger.ErrUnbalanced},
		{"currencies mixed", ledger.Transaction{Entries: []ledger.Entry{{acct(m, "DJF", ledger.Available), 10}, {acct(m, "USD", ledger.SandboxFunding), -10}}}, ledger.ErrUnbalanced},
		{"zero", ledger.Transaction{Entries: []ledger.Entry{{acct(m, "DJF", ledger.Available), 0}, {acct(m, "DJF", ledger.SandboxFunding), 0}}}, ledger.ErrInvalidEntry},
		{"overflow", ledger.Transaction{Entries: []ledger.Entry{{acct(m, "DJF", ledger.Available), math.MaxInt64}, {acct(m, "DJF", ledger.Reserved), 1}, {acct(m, "DJF", ledger.SandboxFunding), -1}}}, ledger.ErrInvalidEntry},
		{"balanced", ledger.Transaction{Entries: []ledger.Entry{{acct(m, "DJF", ledger.Available), 10}, {acct(m, "DJF", ledger.SandboxFunding), -10}}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.tx.Validate()
			if !errors.Is(err, c.want) && !(err == nil && c.want == nil) {
				t.Fatalf("got %v want %v", err, c.want)
			}
		})
	}
}

func topup(ctx context.Context, tx *store.Tx, m, cur string, amt int64) error {
	_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m, Kind: "sandbox_topup", Entries: []ledger.Entry{
		{acct(m, cur, ledger.Available), amt}, {acct(m, cur, ledger.SandboxFunding), -amt}}})
	return err
}

func TestUnbalancedLeavesNothing(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: "mer_1", Entries: []ledger.Entry{
				{acct("mer_1", "DJF", ledger.Available), 10}, {acct("mer_1", "DJF", ledger.SandboxFunding), -9}}})
			return err
		})
		if !errors.Is(err, ledger.ErrUnbalanced) {
			t.Fatalf("got %v", err)
		}
		var n int
		db.QueryRow(ctx, "SELECT COUNT(*) FROM ledger_transactions").Scan(&n)
		if n != 0 {
			t.Fatalf("%d transactions left behind", n)
		}
	})
}

func TestInsufficientFundsAndOverflowAreRefused(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, "mer_1", "DJF", 100) }); err != nil {
			t.Fatal(err)
		}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: "mer_1", Kind: "reserve", Entries: []ledger.Entry{
				{acct("mer_1", "DJF", ledger.Available), -101}, {acct("mer_1", "DJF", ledger.Reserved), 101}}})
			return err
		})
		if !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("overdraw: got %v", err)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, "mer_1", "DJF", math.MaxInt64) })
		if !errors.Is(err, ledger.ErrInvalidEntry) {
			t.Fatalf("overflowing balance: got %v", err)
		}
		bal, _ := ledger.AccountBalance(ctx, db, acct("mer_1", "DJF", ledger.Available))
		if bal != 100 {
			t.Fatalf("balance %d after refused posts, want 100", bal)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRandomPostingsKeepTheBookBalanced is the ledger's property test: random
// sequences of postings (some of them invalid, some overdrawing) keep every
// currency summing to zero and every balance equal to its entries.
func TestRandomPostingsKeepTheBookBalanced(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		r := rand.New(rand.NewPCG(1, 2))
		merchants := []string{"mer_a", "mer_b", "mer_c"}
		currencies := []string{"DJF", "USD", "ETB"}
		kinds := []ledger.AccountKind{ledger.Available, ledger.Reserved, ledger.Pending, ledger.ProviderClearing, ledger.SandboxFunding, ledger.External}
		for i := 0; i < 300; i++ {
			cur := currencies[r.IntN(len(currencies))]
			n := 2 + r.IntN(3)
			var entries []ledger.Entry
			var sum int64
			for j := 0; j < n-1; j++ {
				a := r.Int64N(1_000_000) - 400_000
				if a == 0 {
					a = 1
				}
				sum += a
				entries = append(entries, ledger.Entry{Account: acct(merchants[r.IntN(3)], cur, kinds[r.IntN(len(kinds))]), Amount: a})
			}
			last := -sum
			if r.IntN(10) == 0 {
				last += 1 // deliberately unbalanced
			}
			if last == 0 {
				continue
			}
			entries = append(entries, ledger.Entry{Account: acct(merchants[r.IntN(3)], cur, ledger.External), Amount: last})
			err := db.InTx(ctx, func(tx *store.Tx) error {
				_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: "mer_a", Kind: "random", Entries: entries})
				return err
			})
			if err != nil && !errors.Is(err, ledger.ErrUnbalanced) && !errors.Is(err, ledger.ErrInsufficientFunds) {
				t.Fatalf("post %d: %v", i, err)
			}
			if i%50 == 0 {
				if err := ledger.Verify(ctx, db); err != nil {
					t.Fatalf("after post %d: %v", i, err)
				}
			}
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}

func BenchmarkPost(b *testing.B) {
	for _, e := range storetest.Engines() {
		b.Run(string(e), func(b *testing.B) {
			db := storetest.Open(b, e)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, "mer_1", "DJF", 5) }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "postings/s")
		})
	}
}

// BenchmarkPostParallel posts from 16 goroutines at once, each for its own
// merchant (PostgreSQL commits group their WAL flushes under concurrency).
func BenchmarkPostParallel(b *testing.B) {
	for _, e := range storetest.Engines() {
		b.Run(string(e), func(b *testing.B) {
			db := storetest.Open(b, e)
			ctx := context.Background()
			var n atomic.Int64
			b.SetParallelism(8) // 8 × GOMAXPROCS(2) = 16 posters
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				m := fmt.Sprintf("mer_%d", n.Add(1))
				for pb.Next() {
					if err := db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, m, "DJF", 5) }); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "postings/s")
		})
	}
}

// TestVerifyFindsAnEntryWithoutItsAccount: with no foreign key on PostgreSQL,
// Verify is what proves every entry's account exists in its currency.
func TestVerifyFindsAnEntryWithoutItsAccount(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return topup(ctx, tx, "mer_1", "DJF", 100) }); err != nil {
			t.Fatal(err)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
		var txID, accID string
		if err := db.QueryRow(ctx, "SELECT transaction_id, account_id FROM ledger_entries WHERE amount > 0").Scan(&txID, &accID); err != nil {
			t.Fatal(err)
		}
		// Pairs that balance, so only the account check can see them.
		insert := func(account, currency string) error {
			_, err := db.Exec(ctx, `INSERT INTO ledger_entries (transaction_id, account_id, currency, amount)
				VALUES (?, ?, ?, 5), (?, ?, ?, -5)`, txID, account, currency, txID, account, currency)
			return err
		}
		// An existing account in another currency than the entry's.
		if err := insert(accID, "USD"); err != nil {
			t.Fatal(err)
		}
		if err := ledger.Verify(ctx, db); err == nil || !strings.Contains(err.Error(), accID) {
			t.Fatalf("Verify with an entry in another currency than its account's: %v", err)
		}
		if _, err := db.Exec(ctx, "DELETE FROM ledger_entries WHERE currency = 'USD'"); err != nil {
			t.Fatal(err)
		}
		// An account that was never created: SQLite's foreign key refuses
		// it; PostgreSQL has none, and Verify finds it.
		err := insert("lac_missing", "DJF")
		if !db.Engine().ForeignKeysLockParents() {
			if err == nil {
				t.Fatal("SQLite took an entry on a missing account")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := ledger.Verify(ctx, db); err == nil || !strings.Contains(err.Error(), "lac_missing") {
			t.Fatalf("Verify with an entry on a missing account: %v", err)
		}
	})
}
