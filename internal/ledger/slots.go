package ledger

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"

	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/store"
)

// Balances without a hot row.
//
// An account's balance is the sum of its rows in ledger_balances, one per
// slot. A posting that adds to an account (a credit, or any movement on a
// clearing or funding account, which have no floor) takes the first slot no
// other transaction holds (SKIP LOCKED), so a merchant's concurrent payment
// successes update different rows and commit side by side instead of
// queueing on one row lock. A debit of a merchant-facing account takes one
// free slot that covers it; when none does, it locks every slot of the
// account in slot order (waiting for the postings in flight), checks the sum
// and draws from the slots in that order. Every slot of a merchant-facing
// account stays at or above zero, so the account does too, whatever races.
//
// Each slot stays within ±⌊MaxInt64/N⌋, so the sum of N slots always fits in
// an int64: the overflow guard of a single-row balance, kept without reading
// the other slots. A posting too large for any one slot is refused as an
// overflow.
//
// An account's slots are created, at zero, with the account, so a posting
// never waits for another's insert. SQLite has a single writer, so there is
// nothing to spread: it keeps one slot and reads one row, as before.

// slotCount is how many rows one account's balance spreads over on tx's
// engine (store.Engine.BalanceSlots).
func slotCount(tx *store.Tx) int { return tx.Engine().BalanceSlots() }

// createSlots creates every balance row of a new account, at zero, in the
// transaction that creates the account: concurrent postings then find free
// rows without waiting for anyone's insert.
func createSlots(ctx context.Context, tx *store.Tx, acct string) error {
	n := slotCount(tx)
	q := "INSERT INTO ledger_balances (account_id, slot, balance) VALUES (?, 0, 0)" + strings.Repeat(", (?, ?, 0)", n-1)
	args := make([]any, 0, 2*n)
	args = append(args, acct)
	for i := 1; i < n; i++ {
		args = append(args, acct, i)
	}
	_, err := tx.Exec(ctx, q, args...)
	return err
}

// slotBounds is the range every slot's balance stays in.
func slotBounds(n int) (lo, hi int64) {
	return math.MinInt64 / int64(n), math.MaxInt64 / int64(n)
}

// applyBalance adds the entry's amount to its account (id acct). It returns
// ErrInsufficientFunds when a merchant-facing account would go negative and
// ErrInvalidEntry when the balance would leave its bounds.
func applyBalance(ctx context.Context, tx *store.Tx, acct string, e Entry) error {
	n := slotCount(tx)
	if e.Amount < 0 && e.Account.Kind.merchantFacing() {
		ok, err := debit(ctx, tx, n, acct, -e.Amount)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %s %s", ErrInsufficientFunds, e.Account.Kind, e.Account.Currency)
		}
		return nil
	}
	ok, err := move(ctx, tx, n, acct, e.Amount)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: balance of %s %s would overflow", ErrInvalidEntry, e.Account.Kind, e.Account.Currency)
	}
	return nil
}

// applyOverdraw takes the entry's amount (a debit) out of its available
// account even below zero (Transaction.Overdraw).
func applyOverdraw(ctx context.Context, tx *store.Tx, acct string, e Entry) error {
	ok, err := overdraw(ctx, tx, slotCount(tx), acct, -e.Amount)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: balance of %s %s would overflow", ErrInvalidEntry, e.Account.Kind, e.Account.Currency)
	}
	return nil
}

// moveTogether applies, in one round trip, every entry of a posting that
// adds to an account without the never-negative guard (no entry debits a
// merchant-facing account), on PostgreSQL: each entry is one statement that
// takes a free slot or else queues on one (moveStmt), and the statements run
// in the accounts' fixed order, so a posting waits for the same locks in the
// same order as one entry at a time. It reports which entries it applied
// (none when it does not apply); the caller applies the others.
func moveTogether(ctx context.Context, tx *store.Tx, entries []Entry, accts []string) ([]bool, error) {
	moved := make([]bool, len(entries))
	n := slotCount(tx)
	if n == 1 || len(entries) < 2 {
		return moved, nil
	}
	stmts := make([]store.Stmt, len(entries))
	for i, e := range entries {
		if e.Amount < 0 && e.Account.Kind.merchantFacing() {
			return moved, nil
		}
		st, ok := moveStmt(tx.Dialect(), n, accts[i], e.Amount)
		if !ok {
			return moved, nil
		}
		stmts[i] = st
	}
	changed, err := tx.ExecAll(ctx, stmts)
	if err != nil {
		return nil, err
	}
	for i, k := range changed {
		moved[i] = k == 1
		if moved[i] {
			movedTogether.Add(1)
		}
	}
	return moved, nil
}

// movedTogether counts the entries moveTogether applied (tests tell the
// one-round-trip path from the fallback with it).
var movedTogether atomic.Int64

// moveStmt is move as one PostgreSQL statement: add amount to a free slot
// or, when every slot is busy, to a random one (waiting for it); it returns
// one row when the amount went in, none when no slot could take it within
// its bounds.
func moveStmt(d store.Dialect, n int, acct string, amount int64) (store.Stmt, bool) {
	free, ok := freeSlotMove(d, n, acct, amount)
	if !ok {
		return store.Stmt{}, false
	}
	guard, bound := moveGuard(n, amount)
	q := `WITH free AS (` + free.Query + ` RETURNING 1),
		queued AS (` + addToSlot("SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM free)", guard) + ` RETURNING 1)
		SELECT 1 FROM free UNION ALL SELECT 1 FROM queued`
	args := append(append([]any{}, free.Args...), acct, rand.IntN(n), amount, bound)
	return store.Stmt{Query: q, Args: args}, true
}

// move adds amount to a slot that can take it without leaving the slot
// bounds (the guard sits in the SQL, so the bound holds under races). It
// reports false when no slot could take it.
func move(ctx context.Context, tx *store.Tx, n int, acct string, amount int64) (bool, error) {
	free, ok := freeSlotMove(tx.Dialect(), n, acct, amount)
	if !ok {
		return false, nil
	}
	if n > 1 {
		res, err := tx.Exec(ctx, free.Query, free.Args...)
		if err != nil {
			return false, err
		}
		if k, _ := res.RowsAffected(); k == 1 {
			return true, nil
		}
	}
	return moveQueued(ctx, tx, n, acct, amount)
}

// freeSlotMove is the statement that adds amount to a slot no other
// transaction holds (it never waits; it changes no row when every slot is
// busy or cannot take the amount). ok is false when no slot can ever take
// amount.
func freeSlotMove(d store.Dialect, n int, acct string, amount int64) (stmt store.Stmt, ok bool) {
	lo, hi := slotBounds(n)
	guard, bound := moveGuard(n, amount)
	if amount > hi || amount < lo {
		return store.Stmt{}, false
	}
	return store.Stmt{Query: `UPDATE ledger_balances SET balance = balance + ?
			WHERE account_id = ? AND ` + guard + ` AND slot = (SELECT slot FROM ledger_balances
			WHERE account_id = ? AND ` + guard + ` ORDER BY slot LIMIT 1` + d.ForUpdateSkipLocked() + `)`,
		Args: []any{amount, acct, bound, acct, bound}}, true
}

// moveGuard is the condition a slot's balance must meet to take amount.
func moveGuard(n int, amount int64) (guard string, bound int64) {
	lo, hi := slotBounds(n)
	if amount < 0 {
		return "balance >= ?", lo - amount
	}
	return "balance <= ?", hi - amount
}

// moveQueued adds amount when no free slot took it: every slot is busy (or
// cannot take the amount), or the account predates its slots. It creates a
// slot or queues on one, chosen at random.
func moveQueued(ctx context.Context, tx *store.Tx, n int, acct string, amount int64) (bool, error) {
	guard, bound := moveGuard(n, amount)
	slot := 0
	if n > 1 {
		slot = rand.IntN(n)
	}
	res, err := tx.Exec(ctx, addToSlot("VALUES (?, ?, ?)", guard), acct, slot, amount, bound)
	if err != nil {
		return false, err
	}
	k, _ := res.RowsAffected()
	return k == 1, nil
}

// addToSlot is the statement that adds an amount to a balance slot, creating
// the slot if it is missing, only where guard (a condition on the slot's row,
// with one argument: moveGuard) holds: source gives (account_id, slot, amount).
func addToSlot(source, guard string) string {
	return `INSERT INTO ledger_balances (account_id, slot, balance) ` + source + `
		ON CONFLICT (account_id, slot) DO UPDATE SET balance = ledger_balances.balance + excluded.balance
		WHERE ledger_balances.` + guard
}

// debit takes amount (positive) out of a merchant-facing account, keeping
// every slot at or above zero. It reports false when the account's balance
// does not cover it.
func debit(ctx context.Context, tx *store.Tx, n int, acct string, amount int64) (bool, error) {
	if n == 1 {
		res, err := tx.Exec(ctx, "UPDATE ledger_balances SET balance = balance - ? WHERE account_id = ? AND slot = 0 AND balance >= ?",
			amount, acct, amount)
		if err != nil {
			return false, err
		}
		k, _ := res.RowsAffected()
		return k == 1, nil
	}
	// One free slot that covers the whole amount: the common case, no wait.
	// Not while another slot is below zero (an overdrawn account, see
	// overdraw): one slot covering the amount does not mean the sum does.
	// An overdraw locks every slot until it commits, so this statement finds
	// none free meanwhile and falls to the locked path below.
	res, err := tx.Exec(ctx, `UPDATE ledger_balances SET balance = balance - ?
		WHERE account_id = ? AND balance >= ? AND slot = (SELECT slot FROM ledger_balances
		WHERE account_id = ? AND balance >= ? ORDER BY slot LIMIT 1`+tx.Dialect().ForUpdateSkipLocked()+`)
		AND NOT EXISTS (SELECT 1 FROM ledger_balances o WHERE o.account_id = ? AND o.balance < 0)`,
		amount, acct, amount, acct, amount, acct)
	if err != nil {
		return false, err
	}
	if k, _ := res.RowsAffected(); k == 1 {
		return true, nil
	}
	// Lock every slot in slot order (after the postings in flight on them
	// commit), then draw from them in that order.
	slots, err := lockSlots(ctx, tx, acct)
	if err != nil {
		return false, err
	}
	// The sum counts a slot below zero (an overdrawn account) too: the debit
	// must be covered by the account, not by its positive slots alone.
	var total int64
	for _, s := range slots {
		if total, err = money.Add(total, s.balance); err != nil {
			return false, err
		}
	}
	if total < amount {
		return false, nil
	}
	left := amount
	for _, s := range slots {
		if left == 0 {
			break
		}
		take := min(s.balance, left)
		if take <= 0 {
			continue
		}
		if _, err := tx.Exec(ctx, "UPDATE ledger_balances SET balance = balance - ? WHERE account_id = ? AND slot = ? AND balance >= ?",
			take, acct, s.slot, take); err != nil {
			return false, err
		}
		left -= take
	}
	return true, nil
}

// overdraw takes amount (positive) out of an available account that may go
// below zero (a dispute's withdrawal). It locks every slot in slot order,
// empties the positive ones in that order and puts what is still owed on
// slot 0, the first slot later credits fill. It reports false when slot 0
// would leave its bounds.
func overdraw(ctx context.Context, tx *store.Tx, n int, acct string, amount int64) (bool, error) {
	lo, _ := slotBounds(n)
	left := amount
	if n > 1 {
		slots, err := lockSlots(ctx, tx, acct)
		if err != nil {
			return false, err
		}
		for _, s := range slots {
			if left == 0 {
				break
			}
			take := min(s.balance, left)
			if take <= 0 || s.slot == 0 {
				continue
			}
			if _, err := tx.Exec(ctx, "UPDATE ledger_balances SET balance = balance - ? WHERE account_id = ? AND slot = ? AND balance >= ?",
				take, acct, s.slot, take); err != nil {
				return false, err
			}
			left -= take
		}
		if left == 0 {
			return true, nil
		}
	}
	res, err := tx.Exec(ctx, "UPDATE ledger_balances SET balance = balance - ? WHERE account_id = ? AND slot = 0 AND balance >= ?",
		left, acct, lo+left)
	if err != nil {
		return false, err
	}
	k, _ := res.RowsAffected()
	return k == 1, nil
}

type slotBalance struct {
	slot    int
	balance int64
}

// lockSlots reads an account's slots and, on PostgreSQL, locks them until the
// transaction ends, in slot order so two lockers queue instead of
// deadlocking.
func lockSlots(ctx context.Context, tx *store.Tx, acct string) ([]slotBalance, error) {
	rows, err := tx.Query(ctx, "SELECT slot, balance FROM ledger_balances WHERE account_id = ? ORDER BY slot"+tx.Dialect().ForUpdate(), acct)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []slotBalance
	for rows.Next() {
		var s slotBalance
		if err := rows.Scan(&s.slot, &s.balance); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
