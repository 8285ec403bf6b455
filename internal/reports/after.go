package reports

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/money"
)

// balance_after_minor is computed, not stored. Storing a running balance
// would mean updating one row per merchant and currency on every posting,
// the very row concurrent credits must not queue on. Instead:
//
//	after(e) = B − Σ amount of the account's entries in (e, b]
//
// where B is a balance known at entry b above e: the account's nearest
// checkpoint above e (ledger.WriteCheckpoints keeps one every
// ledger.CheckpointEvery entries, written by a background job well after the
// postings), or, for rows newer than the newest checkpoint, available now.
// The sum runs along the (account_id, id, amount) index, read-only and in one
// statement per account and page (one bucket per row of the page), so a page
// costs the same near the newest entry and a million entries back.

// snapshotTries bounds the re-reads of an account's balance while postings
// land between the reads.
const snapshotTries = 5

// fillBalances sets BalanceAfterMinor on items (any order, any accounts).
func (s *Service) fillBalances(ctx context.Context, p auth.Principal, items []BalanceTransaction) error {
	byAccount := map[string][]int{}
	for i, bt := range items {
		byAccount[bt.account] = append(byAccount[bt.account], i)
	}
	for acct, idx := range byAccount {
		sort.Slice(idx, func(a, b int) bool { return items[idx[a]].entryID > items[idx[b]].entryID })
		ref := ledger.AccountRef{MerchantID: p.MerchantID, Livemode: p.Livemode, Currency: items[idx[0]].Currency, Kind: ledger.Available}
		bal, last, err := s.balanceAbove(ctx, acct, ref, items[idx[0]].entryID)
		if err != nil {
			return err
		}
		entries := make([]int64, len(idx))
		for i, j := range idx {
			entries[i] = items[j].entryID
		}
		newer, err := s.newerSums(ctx, acct, entries, last)
		if err != nil {
			return err
		}
		after := bal
		for i, j := range idx {
			if newer[i] == math.MinInt64 {
				return fmt.Errorf("reports: sum of entries on %s out of range", acct)
			}
			if after, err = money.Add(after, -newer[i]); err != nil {
				return fmt.Errorf("reports: balance of %s out of range: %w", acct, err)
			}
			items[j].BalanceAfterMinor = after
		}
	}
	return nil
}

// balanceAbove returns a known balance of the account at or after entry, and
// the entry it stands at: the nearest checkpoint above entry when there is
// one (a row deep in the history), otherwise the balance now.
func (s *Service) balanceAbove(ctx context.Context, acct string, ref ledger.AccountRef, entry int64) (int64, int64, error) {
	c, ok, err := ledger.CheckpointAtOrAfter(ctx, s.db, acct, entry)
	if err != nil || ok {
		return c.Balance, c.EntryID, err
	}
	return s.availableAt(ctx, acct, ref)
}

// availableAt returns the account's balance and the number of its newest
// entry that balance includes. The two reads are repeated until no posting
// on the account landed between them (on SQLite, whose writers are serial,
// that makes them one snapshot; on PostgreSQL a posting whose entry number
// is older than one already committed could still slip in, which only a
// transaction open across the reads would rule out).
func (s *Service) availableAt(ctx context.Context, acct string, ref ledger.AccountRef) (int64, int64, error) {
	var bal, last int64
	for try := 0; try < snapshotTries; try++ {
		before, err := s.lastEntry(ctx, acct)
		if err != nil {
			return 0, 0, err
		}
		if bal, err = ledger.AccountBalance(ctx, s.db, ref); err != nil {
			return 0, 0, err
		}
		if last, err = s.lastEntry(ctx, acct); err != nil {
			return 0, 0, err
		}
		if last == before {
			break
		}
	}
	return bal, last, nil
}

func (s *Service) lastEntry(ctx context.Context, acct string) (int64, error) {
	var last int64
	err := s.db.QueryRow(ctx, "SELECT COALESCE(MAX(id), 0) FROM ledger_entries WHERE account_id = ?", acct).Scan(&last)
	return last, err
}

// newerSums returns, for entries (newest first), the sum of the account's
// entries between each and the one before it in the list: for entries[0]
// those in (entries[0], last], for entries[i] those in (entries[i],
// entries[i-1]]. One statement reads them all along the index.
func (s *Service) newerSums(ctx context.Context, acct string, entries []int64, last int64) ([]int64, error) {
	var cols []string
	var args []any
	for i, e := range entries {
		if i == 0 {
			cols = append(cols, "COALESCE(SUM(CASE WHEN id > ? THEN amount ELSE 0 END), 0)")
			args = append(args, e)
			continue
		}
		cols = append(cols, "COALESCE(SUM(CASE WHEN id > ? AND id <= ? THEN amount ELSE 0 END), 0)")
		args = append(args, e, entries[i-1])
	}
	args = append(args, acct, entries[len(entries)-1], last)
	out := make([]int64, len(entries))
	dst := make([]any, len(out))
	for i := range out {
		dst[i] = &out[i]
	}
	err := s.db.QueryRow(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM ledger_entries WHERE account_id = ? AND id > ? AND id <= ?", args...).Scan(dst...)
	return out, err
}
