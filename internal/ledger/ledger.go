// Package ledger is payd's double-entry book. Every movement of money is a
// Transaction whose entries sum to zero in each currency; Post writes it in
// the caller's database transaction, so the money moves if and only if the
// state change that causes it commits.
//
// Sign convention: an entry's amount is added to its account's balance. The
// merchant-facing accounts (available, reserved, pending) hold the merchant's
// money as a positive balance and may never go negative; the clearing and
// funding accounts are the other side of each movement and carry the
// opposite sign (a provider clearing account at -X means the provider owes X).
package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/store"
)

// AccountKind names what an account is for.
type AccountKind string

// The kinds of account payd keeps per merchant, mode and currency.
const (
	Available          AccountKind = "available"           // the merchant's spendable balance
	Reserved           AccountKind = "reserved"            // float held for payouts in flight
	Pending            AccountKind = "pending"             // captured but not yet settled by the provider
	ProviderClearing   AccountKind = "provider_clearing"   // per provider: what it owes us (-) or we owe it (+)
	SettlementClearing AccountKind = "settlement_clearing" // interbank settlement in flight
	SandboxFunding     AccountKind = "sandbox_funding"     // the source of sandbox top-ups (test mode only)
	External           AccountKind = "external"            // money leaving or entering the system otherwise
)

// merchantFacing accounts may never go below zero.
func (k AccountKind) merchantFacing() bool {
	return k == Available || k == Reserved || k == Pending
}

// Errors returned by Post.
var (
	ErrUnbalanced        = errors.New("ledger: entries do not sum to zero")
	ErrInsufficientFunds = errors.New("ledger: insufficient funds")
	ErrInvalidEntry      = errors.New("ledger: invalid entry")
)

// AccountRef names an account; it is created on first use.
type AccountRef struct {
	MerchantID string
	Livemode   bool
	Currency   string
	Kind       AccountKind
	Provider   string // only for ProviderClearing
}

// Entry moves Amount (signed, minor units) into Account.
type Entry struct {
	Account AccountRef
	Amount  int64
}

// KindDispute is the ledger kind of a dispute's withdrawal: the only kind
// allowed to take available below zero.
const KindDispute = "dispute"

// OverdrawKinds are the transaction kinds whose debit of available may take
// it below zero (Entry.Overdraw). Verify accepts a negative available account
// only when one of these has touched it.
var OverdrawKinds = []string{KindDispute}

// Transaction is a balanced set of entries.
type Transaction struct {
	MerchantID string
	Livemode   bool
	Kind       string // e.g. "payment_succeeded", "payout_reserve", "sandbox_topup"
	Reference  string // the object that caused it (pi_..., po_...)
	Entries    []Entry
	// Overdraw lets this transaction's debit of an Available account take it
	// below zero: money the merchant owes back (a dispute's withdrawal). Only
	// a kind in OverdrawKinds may set it; every other debit of a
	// merchant-facing account is refused when the balance is short.
	Overdraw bool
}

// Validate checks the transaction without touching the database: at least two
// entries, no zero or overflowing amounts, and a zero sum in every currency.
func (t Transaction) Validate() error {
	if len(t.Entries) < 2 {
		return fmt.Errorf("%w: a transaction needs at least two entries", ErrInvalidEntry)
	}
	sums := map[string]int64{}
	for i, e := range t.Entries {
		if e.Amount == 0 || e.Amount == math.MinInt64 {
			return fmt.Errorf("%w: entry %d has amount %d", ErrInvalidEntry, i, e.Amount)
		}
		if e.Account.Currency == "" || e.Account.Kind == "" || e.Account.MerchantID == "" {
			return fmt.Errorf("%w: entry %d names no account", ErrInvalidEntry, i)
		}
		s, err := money.Add(sums[e.Account.Currency], e.Amount)
		if err != nil {
			return fmt.Errorf("%w: entry %d overflows", ErrInvalidEntry, i)
		}
		sums[e.Account.Currency] = s
	}
	if t.Overdraw && !slices.Contains(OverdrawKinds, t.Kind) {
		return fmt.Errorf("%w: a %q transaction may not overdraw (only %v may)", ErrInvalidEntry, t.Kind, OverdrawKinds)
	}
	for cur, s := range sums {
		if s != 0 {
			return fmt.Errorf("%w: %s sums to %d", ErrUnbalanced, cur, s)
		}
	}
	return nil
}

// Post validates t and writes it inside tx, updating account balances
// (slots.go: a merchant's concurrent credits do not queue on one row). It
// returns ErrUnbalanced or ErrInvalidEntry for a malformed transaction and
// ErrInsufficientFunds when a merchant-facing account would go negative; in
// every error case the caller must roll back (nothing is left behind when it
// does). Accounts are touched in a fixed order so concurrent posts cannot
// deadlock.
func Post(ctx context.Context, tx *store.Tx, t Transaction) (string, error) {
	if err := t.Validate(); err != nil {
		return "", err
	}
	id := ids.New("ltx_")
	now := store.Micros(tx.Now())
	// The transaction's and the entries' inserts fail only when the whole
	// transaction does: they go with the next statement that needs an
	// answer (the balance updates) or with the commit.
	if err := tx.ExecLater(ctx, `INSERT INTO ledger_transactions (id, merchant_id, livemode, kind, reference, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, id, t.MerchantID, t.Livemode, t.Kind, t.Reference, now); err != nil {
		return "", err
	}
	entries := append([]Entry(nil), t.Entries...)
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Account.key() < entries[j].Account.key() })
	accts := make([]string, len(entries))
	for i, e := range entries {
		acct, err := accountID(ctx, tx, e.Account)
		if err != nil {
			return "", err
		}
		accts[i] = acct
	}
	moved, err := moveTogether(ctx, tx, entries, accts)
	if err != nil {
		return "", err
	}
	rows := make([]entryRow, len(entries))
	for i, e := range entries {
		if !moved[i] {
			if t.Overdraw && e.Account.Kind == Available && e.Amount < 0 {
				if err := applyOverdraw(ctx, tx, accts[i], e); err != nil {
					return "", err
				}
			} else if err := applyBalance(ctx, tx, accts[i], e); err != nil {
				return "", err
			}
		}
		rows[i] = entryRow{id, accts[i], e.Account.Currency, e.Amount}
	}
	q, args := insertEntries(rows)
	if err := tx.ExecLater(ctx, q, args...); err != nil {
		return "", err
	}
	return id, nil
}

// entryRow is one ledger_entries row.
type entryRow struct {
	txID, account, currency string
	amount                  int64
}

// insertEntries is one INSERT of rows (a transaction's entries, or a chunk
// of PostMany's) and its arguments: one statement, not one per entry.
func insertEntries(rows []entryRow) (string, []any) {
	args := make([]any, 0, len(rows)*4)
	for _, r := range rows {
		args = append(args, r.txID, r.account, r.currency, r.amount)
	}
	return "INSERT INTO ledger_entries (transaction_id, account_id, currency, amount) VALUES " + store.Rows(len(rows), 4), args
}

func (a AccountRef) key() string {
	return fmt.Sprintf("%s|%t|%s|%s|%s", a.MerchantID, a.Livemode, a.Currency, a.Kind, a.Provider)
}

// accountID finds or creates the account.
func accountID(ctx context.Context, tx *store.Tx, a AccountRef) (string, error) {
	// Account ids never change once an account exists, so they are cached
	// per database (safe across processes); an id enters the cache only after
	// the transaction that read or created it committed.
	key := "ledger_account:" + a.key()
	if id, ok := tx.Cache().Load(key); ok {
		return id.(string), nil
	}
	id, err := lookupOrCreateAccount(ctx, tx, a)
	if err == nil {
		tx.AfterCommit(func() { tx.Cache().Store(key, id) })
	}
	return id, err
}

func lookupOrCreateAccount(ctx context.Context, tx *store.Tx, a AccountRef) (string, error) {
	var id string
	err := tx.QueryRow(ctx, `SELECT id FROM ledger_accounts WHERE merchant_id = ? AND livemode = ? AND currency = ? AND kind = ? AND provider = ?`,
		a.MerchantID, a.Livemode, a.Currency, string(a.Kind), a.Provider).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !store.IsNotFound(err) {
		return "", err
	}
	id = ids.New("lac_")
	res, err := tx.Exec(ctx, `INSERT INTO ledger_accounts (id, merchant_id, livemode, currency, kind, provider, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (merchant_id, livemode, currency, kind, provider) DO NOTHING`,
		id, a.MerchantID, a.Livemode, a.Currency, string(a.Kind), a.Provider, store.Micros(tx.Now()))
	if err != nil {
		return "", err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		if err := createSlots(ctx, tx, id); err != nil {
			return "", err
		}
	}
	err = tx.QueryRow(ctx, `SELECT id FROM ledger_accounts WHERE merchant_id = ? AND livemode = ? AND currency = ? AND kind = ? AND provider = ?`,
		a.MerchantID, a.Livemode, a.Currency, string(a.Kind), a.Provider).Scan(&id)
	return id, err
}
