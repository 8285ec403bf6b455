package main

import (
	"context"
	"fmt"
	"time"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
)

func init() {
	register(command{name: "ledger", summary: "prove the book balances (exit 1 when it does not)", run: runLedger, subs: []string{"verify"}})
	describe("ledger verify", usage{
		synopsis: "[--database-url URL]",
		about:    "Runs every ledger invariant over one consistent snapshot of the database (safe while payd runs): every transaction balances, every balance equals its entries, and no source holds a movement twice (a payment intent credited, a payout paid, a refund held or settled, a transfer settled, a dispute withdrawn or reinstated more than once, even when the copy is in balance). Prints \"ledger balances\" and exits 0, or names the first broken invariant (every doubled source, up to 20 per rule) and exits 1.",
		vars:     databaseVars,
	})
}

// runLedger runs `payd ledger verify [--database-url URL]`: ledger.Verify over
// one consistent snapshot of the database, safe while payd runs. It prints
// "ledger balances" and exits 0, or names the first broken invariant and
// exits 1.
func runLedger(ctx context.Context, e *env, args []string) error {
	fs := newFlags("ledger verify")
	dbURL := fs.String("database-url", "", "database URL (PAYD_DATABASE_URL)")
	if err := parseFlags(e, fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return badUsage(e, fs, "unexpected arguments")
	}
	m, err := open(ctx, e, *dbURL)
	if err != nil {
		return err
	}
	defer m.Close()
	start := time.Now()
	err = m.DB.InSnapshot(ctx, func(tx *store.Tx) error { return ledger.Verify(ctx, tx) })
	if err != nil {
		return fmt.Errorf("the ledger does NOT balance: %w", err)
	}
	var txs, entries int64
	m.DB.QueryRow(ctx, "SELECT COUNT(*) FROM ledger_transactions").Scan(&txs)
	m.DB.QueryRow(ctx, "SELECT COUNT(*) FROM ledger_entries").Scan(&entries)
	fmt.Fprintf(e.stdout, "ledger balances: %d transactions, %d entries checked in %s (%s)\n",
		txs, entries, time.Since(start).Round(time.Millisecond), m.DB.Dialect())
	return nil
}
