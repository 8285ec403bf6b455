package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/store"
)

// Checkpoints are the running balance of an available account at every Nth
// of its entries: the sum of the account's entries up to and including that
// entry. They let a balance transaction deep in a long history know the
// balance right after it by summing at most N entries from the nearest
// checkpoint above it, instead of every entry newer than it.
//
// No posting writes them (that would make every posting of a merchant update
// one row, the hot row balance slots exist to avoid): a background job
// (WriteCheckpoints) extends each account's chain well after the postings,
// only at entries whose posting is older than a settling time. On PostgreSQL
// entry numbers come from a sequence and a transaction that took a lower
// number can commit after one that took a higher; payd's transactions last
// seconds (a request that calls outside commits before the call), so an
// entry older than the settling time has every lower-numbered entry of its
// account committed or rolled back. Verify recomputes every checkpoint, so a
// wrong one cannot go unnoticed.
//
// The sandbox purge folds old test-mode entries into a newer carry-forward,
// which changes the running sums: it deletes the checkpoints of the accounts
// it folds (CompactTestMode), and the job rebuilds them. Both lock the
// account's row first, so a chain extended while a purge runs is either
// seen and deleted by the purge or built on what the purge left.

// CheckpointEvery is how many entries of an account lie between two of its
// checkpoints in production: a balance transaction's balance then costs at
// most this many index entries to compute.
const CheckpointEvery = 1000

// CheckpointSettle is how old an entry's posting must be before a checkpoint
// is taken at it.
const CheckpointSettle = 10 * time.Minute

// Checkpoint is an account's running balance at one of its entries.
type Checkpoint struct {
	EntryID int64
	Balance int64 // the sum of the account's entries with id <= EntryID
}

// CheckpointAtOrAfter returns the account's oldest checkpoint at or after
// entry, if any.
func CheckpointAtOrAfter(ctx context.Context, q store.Querier, accountID string, entry int64) (Checkpoint, bool, error) {
	var c Checkpoint
	err := q.QueryRow(ctx, `SELECT entry_id, balance FROM ledger_checkpoints WHERE account_id = ? AND entry_id >= ?
		ORDER BY account_id, entry_id LIMIT 1`, accountID, entry).Scan(&c.EntryID, &c.Balance)
	if errors.Is(err, sql.ErrNoRows) || store.IsNotFound(err) {
		return Checkpoint{}, false, nil
	}
	return c, err == nil, err
}

// WriteCheckpoints extends every available account's chain of checkpoints,
// one every `every` entries, up to the newest entry whose posting is older
// than settle. It returns how many checkpoints it wrote. Each checkpoint is
// its own short transaction.
func WriteCheckpoints(ctx context.Context, db *store.DB, every int, settle time.Duration) (int, error) {
	if every < 1 {
		return 0, fmt.Errorf("ledger: checkpoint interval %d", every)
	}
	accounts, err := store.Strings(ctx, db, "SELECT id FROM ledger_accounts WHERE kind = ? ORDER BY id", string(Available))
	if err != nil {
		return 0, err
	}
	written := 0
	for _, acct := range accounts {
		// A read-only look first: most runs find most accounts with fewer
		// than `every` new entries, and a write transaction per account
		// would take SQLite's writer for nothing.
		if due, err := checkpointDue(ctx, db, acct, every); err != nil || !due {
			if err != nil {
				return written, err
			}
			continue
		}
		for {
			if err := ctx.Err(); err != nil {
				return written, err
			}
			var ok bool
			err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				ok, err = extendCheckpoints(ctx, tx, acct, every, tx.Now().Add(-settle))
				return err
			})
			if err != nil {
				return written, err
			}
			if !ok {
				break
			}
			written++
		}
	}
	return written, nil
}

// checkpointDue reports whether the account has at least `every` entries
// after its newest checkpoint.
func checkpointDue(ctx context.Context, q store.Querier, acct string, every int) (bool, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT id FROM ledger_entries WHERE account_id = ? AND id > COALESCE(
		(SELECT MAX(entry_id) FROM ledger_checkpoints WHERE account_id = ?), 0) ORDER BY account_id, id LIMIT 1 OFFSET ?`,
		acct, acct, every-1).Scan(&n)
	if store.IsNotFound(err) || errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// extendCheckpoints writes the account's next checkpoint when the account
// has `every` entries past its newest one and the last of them was posted
// before settled. It reports whether it wrote one.
func extendCheckpoints(ctx context.Context, tx *store.Tx, acct string, every int, settled time.Time) (bool, error) {
	// The account's row orders this against the purge (see above). NO KEY
	// UPDATE leaves postings, which only reference the row, unblocked.
	var id string
	if err := tx.QueryRow(ctx, "SELECT id FROM ledger_accounts WHERE id = ?"+tx.Dialect().ForNoKeyUpdate(), acct).Scan(&id); err != nil {
		return false, err
	}
	var prev Checkpoint
	err := tx.QueryRow(ctx, `SELECT entry_id, balance FROM ledger_checkpoints WHERE account_id = ?
		ORDER BY account_id DESC, entry_id DESC LIMIT 1`, acct).Scan(&prev.EntryID, &prev.Balance)
	if err != nil && !store.IsNotFound(err) && !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	var next, created int64
	err = tx.QueryRow(ctx, `SELECT e.id, t.created_at FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
		WHERE e.id = (SELECT id FROM ledger_entries WHERE account_id = ? AND id > ? ORDER BY account_id, id LIMIT 1 OFFSET ?)`,
		acct, prev.EntryID, every-1).Scan(&next, &created)
	if store.IsNotFound(err) || errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if created >= store.Micros(settled) {
		return false, nil
	}
	var sum int64
	if err := tx.QueryRow(ctx, "SELECT COALESCE(SUM(amount), 0) FROM ledger_entries WHERE account_id = ? AND id > ? AND id <= ?",
		acct, prev.EntryID, next).Scan(&sum); err != nil {
		return false, err
	}
	bal, err := money.Add(prev.Balance, sum)
	if err != nil {
		return false, fmt.Errorf("ledger: checkpoint of %s: %w", acct, err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO ledger_checkpoints (account_id, entry_id, balance) VALUES (?, ?, ?)", acct, next, bal); err != nil {
		return false, err
	}
	return true, nil
}

// verifyCheckpoints checks every checkpoint against the sum of its account's
// entries up to it, one stretch between two checkpoints at a time.
func verifyCheckpoints(ctx context.Context, q store.Querier) error {
	rows, err := q.Query(ctx, "SELECT account_id, entry_id, balance FROM ledger_checkpoints ORDER BY account_id, entry_id")
	if err != nil {
		return err
	}
	type point struct {
		acct string
		Checkpoint
	}
	var points []point
	for rows.Next() {
		var p point
		if err := rows.Scan(&p.acct, &p.EntryID, &p.Balance); err != nil {
			rows.Close()
			return err
		}
		points = append(points, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var prev point
	for _, p := range points {
		if p.acct != prev.acct {
			prev = point{acct: p.acct}
		}
		var sum int64
		if err := q.QueryRow(ctx, "SELECT COALESCE(SUM(amount), 0) FROM ledger_entries WHERE account_id = ? AND id > ? AND id <= ?",
			p.acct, prev.EntryID, p.EntryID).Scan(&sum); err != nil {
			return err
		}
		if want, err := money.Add(prev.Balance, sum); err != nil || want != p.Balance {
			return fmt.Errorf("checkpoint of %s at entry %d holds %d but the entries up to it sum to %d", p.acct, p.EntryID, p.Balance, want)
		}
		prev = p
	}
	return nil
}
