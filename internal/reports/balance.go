package reports

import (
	"context"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
)

// BalanceTransaction is one movement of a merchant's available balance: one
// ledger transaction's effect on its available account in one currency.
type BalanceTransaction struct {
	ID     string `json:"id"`     // txn_...
	Object string `json:"object"` // "balance_transaction"
	Type   Type   `json:"type"`
	// AmountMinor is what available gained (positive) or lost (negative).
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	// Source is the id of the object that caused the movement (pi_, po_,
	// re_, a bank transfer's UETR, a batch's po_bulk_ or batch_); for a
	// sandbox top-up, the id its answer carried.
	Source string `json:"source"`
	// BalanceAfterMinor is available in Currency right after this movement.
	BalanceAfterMinor int64     `json:"balance_after_minor"`
	Livemode          bool      `json:"livemode"`
	CreatedAt         time.Time `json:"created_at"`

	entryID int64
	account string
}

// idPrefix starts every balance transaction id.
const idPrefix = "txn_"

// transactionID names the balance transaction of a ledger entry: the time of
// its ledger transaction (so ids sort by time, as every id does) and the
// entry's own number, which makes it unique and lets Get find it by index.
func transactionID(createdAt time.Time, entryID int64) string {
	return ids.At(idPrefix, createdAt, uint64(entryID))
}

// entryOf reads the entry number back from a balance transaction id.
func entryOf(id string) (int64, bool) {
	_, seq, ok := ids.Parse(idPrefix, id)
	if !ok || seq == 0 || seq > 1<<62 {
		return 0, false
	}
	return int64(seq), true
}

// ListParams filters GET /v1/balance_transactions.
type ListParams struct {
	Page     pagination.Page
	Type     Type
	Source   string
	Currency string
	// CreatedFrom and CreatedUntil bound created_at: From <= created_at < Until.
	CreatedFrom, CreatedUntil *time.Time

	after, before int64 // the cursors' entry numbers
}

// maxSourceLength bounds the source filter (ids and UETRs are far shorter).
const maxSourceLength = 255

// ParseListQuery reads the list's query string: limit, starting_after,
// ending_before, type, source, currency and created[gte|gt|lte|lt].
func ParseListQuery(q url.Values) (ListParams, error) {
	var lp ListParams
	var err error
	if lp.Page, err = pagination.Parse(q); err != nil {
		return lp, err
	}
	for param, cur := range map[string]string{"starting_after": lp.Page.StartingAfter, "ending_before": lp.Page.EndingBefore} {
		if cur == "" {
			continue
		}
		n, ok := entryOf(cur)
		if !ok {
			return lp, errs.Invalid(param, "parameter_invalid", "%s must be a balance transaction id (txn_...)", param)
		}
		if param == "starting_after" {
			lp.after = n
		} else {
			lp.before = n
		}
	}
	if v := q.Get("type"); v != "" {
		if !validType(Type(v)) {
			names := make([]string, len(Types))
			for i, t := range Types {
				names[i] = string(t)
			}
			return lp, errs.Invalid("type", "parameter_invalid", "type must be one of %s", strings.Join(names, ", "))
		}
		lp.Type = Type(v)
	}
	if v := q.Get("source"); v != "" {
		if len(v) > maxSourceLength {
			return lp, errs.Invalid("source", "parameter_invalid", "source must be at most %d characters", maxSourceLength)
		}
		lp.Source = v
	}
	if v := q.Get("currency"); v != "" {
		if _, err := money.Exponent(v); err != nil {
			return lp, errs.Invalid("currency", "parameter_invalid", "currency must be an ISO 4217 code such as DJF")
		}
		lp.Currency = v
	}
	if lp.CreatedFrom, lp.CreatedUntil, err = pagination.ParseCreated(q); err != nil {
		return lp, err
	}
	return lp, nil
}

// account is one of the merchant's available accounts.
type account struct {
	id, currency string
}

// availableAccounts returns the principal's available accounts (one per
// currency it ever held), optionally of one currency.
func (s *Service) availableAccounts(ctx context.Context, p auth.Principal, currency string) ([]account, error) {
	q := "SELECT id, currency FROM ledger_accounts WHERE merchant_id = ? AND livemode = ? AND kind = ?"
	args := []any{p.MerchantID, p.Livemode, string(ledger.Available)}
	if currency != "" {
		q += " AND currency = ?"
		args = append(args, currency)
	}
	rows, err := s.db.Query(ctx, q+" ORDER BY currency", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []account
	for rows.Next() {
		var a account
		if err := rows.Scan(&a.id, &a.currency); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// entryColumns are what a balance transaction is read from.
const entryColumns = "e.id, e.account_id, e.currency, e.amount, t.id, t.kind, t.reference, t.created_at"

func scanEntry(row interface{ Scan(...any) error }, livemode bool) (BalanceTransaction, error) {
	var bt BalanceTransaction
	var txID, kind, ref string
	var created int64
	if err := row.Scan(&bt.entryID, &bt.account, &bt.Currency, &bt.AmountMinor, &txID, &kind, &ref, &created); err != nil {
		return bt, err
	}
	bt.Object = "balance_transaction"
	bt.Type = TypeOf(kind)
	bt.Source = ref
	if ref == "" {
		bt.Source = txID // a sandbox top-up answers with its ledger transaction's id
	}
	bt.Livemode = livemode
	bt.CreatedAt = store.FromMicros(created)
	bt.ID = transactionID(bt.CreatedAt, bt.entryID)
	return bt, nil
}

// List returns the principal's balance transactions, newest first.
//
// Each currency's available account is read along the
// (account_id, id, amount) index, newest entry first, and the currencies'
// pages are merged; a page costs the same on the first page and the
// thousandth. Filters on type and created are conditions on that walk: a
// rare type or an old time window reads the entries it passes over.
func (s *Service) List(ctx context.Context, p auth.Principal, lp ListParams) (pagination.List[BalanceTransaction], error) {
	accts, err := s.availableAccounts(ctx, p, lp.Currency)
	if err != nil || len(accts) == 0 {
		return pagination.NewList[BalanceTransaction](nil, false), err
	}
	cond, args := filterClause(lp)
	asc := lp.before != 0
	var all []BalanceTransaction
	if lp.Source != "" {
		// Few postings carry one source: start from the reference index.
		ids := make([]string, len(accts))
		for i, a := range accts {
			ids[i] = a.id
		}
		q := "SELECT " + entryColumns + " FROM ledger_transactions t CROSS JOIN ledger_entries e" +
			" WHERE (t.reference = ? OR (t.reference = '' AND t.id = ?)) AND e.transaction_id = t.id AND e.account_id IN (" +
			store.Placeholders(len(ids)) + ")" + cond + pageOrder(lp, asc, "")
		all, err = s.readEntries(ctx, p, q, append(append([]any{lp.Source, lp.Source}, store.Args(ids)...), args...))
		if err != nil {
			return pagination.List[BalanceTransaction]{}, err
		}
	} else {
		for _, a := range accts {
			q := "SELECT " + entryColumns + " FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id" +
				" WHERE e.account_id = ?" + cond + pageOrder(lp, asc, "e.account_id")
			rows, err := s.readEntries(ctx, p, q, append([]any{a.id}, args...))
			if err != nil {
				return pagination.List[BalanceTransaction]{}, err
			}
			all = append(all, rows...)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if asc {
			return all[i].entryID < all[j].entryID
		}
		return all[i].entryID > all[j].entryID
	})
	if len(all) > lp.Page.Limit+1 {
		all = all[:lp.Page.Limit+1]
	}
	items, more := pagination.Finish(lp.Page, all)
	if err := s.fillBalances(ctx, p, items); err != nil {
		return pagination.List[BalanceTransaction]{}, err
	}
	return pagination.NewList(items, more), nil
}

// filterClause is the WHERE conditions of the filters and cursors (after the
// account condition), with their arguments.
func filterClause(lp ListParams) (string, []any) {
	var b strings.Builder
	var args []any
	switch {
	case lp.after != 0:
		b.WriteString(" AND e.id < ?")
		args = append(args, lp.after)
	case lp.before != 0:
		b.WriteString(" AND e.id > ?")
		args = append(args, lp.before)
	}
	if lp.Type != "" {
		in, notIn := kindFilter(lp.Type)
		if len(in) > 0 {
			b.WriteString(" AND t.kind IN (" + store.Placeholders(len(in)) + ")")
			args = append(args, store.Args(in)...)
		}
		if len(notIn) > 0 {
			b.WriteString(" AND t.kind NOT IN (" + store.Placeholders(len(notIn)) + ")")
			args = append(args, store.Args(notIn)...)
		}
	}
	if lp.CreatedFrom != nil {
		b.WriteString(" AND t.created_at >= ?")
		args = append(args, store.Micros(*lp.CreatedFrom))
	}
	if lp.CreatedUntil != nil {
		b.WriteString(" AND t.created_at < ?")
		args = append(args, store.Micros(*lp.CreatedUntil))
	}
	return b.String(), args
}

// pageOrder orders by entry number (newest first, or oldest first for an
// ending_before page) and asks for one row more than the page. Ordering by
// the account column too, fixed by the WHERE, lets PostgreSQL walk the
// (account_id, id) index backwards and stop after the limit.
func pageOrder(lp ListParams, asc bool, scopeCol string) string {
	dir := " DESC"
	if asc {
		dir = " ASC"
	}
	order := " ORDER BY "
	if scopeCol != "" {
		order += scopeCol + dir + ", "
	}
	return order + "e.id" + dir + " LIMIT " + strconv.Itoa(lp.Page.Limit+1)
}

func (s *Service) readEntries(ctx context.Context, p auth.Principal, q string, args []any) ([]BalanceTransaction, error) {
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []BalanceTransaction
	for rows.Next() {
		bt, err := scanEntry(rows, p.Livemode)
		if err != nil {
			return nil, err
		}
		out = append(out, bt)
	}
	return out, rows.Err()
}

// Get returns one balance transaction of the principal's; another
// merchant's or mode's is not found.
func (s *Service) Get(ctx context.Context, p auth.Principal, id string) (BalanceTransaction, error) {
	notFound := errs.NotFound("balance transaction", id)
	entry, ok := entryOf(id)
	if !ok {
		return BalanceTransaction{}, notFound
	}
	bt, err := scanEntry(s.db.QueryRow(ctx, "SELECT "+entryColumns+` FROM ledger_entries e
		JOIN ledger_transactions t ON t.id = e.transaction_id
		JOIN ledger_accounts a ON a.id = e.account_id
		WHERE e.id = ? AND a.merchant_id = ? AND a.livemode = ? AND a.kind = ?`,
		entry, p.MerchantID, p.Livemode, string(ledger.Available)), p.Livemode)
	if store.IsNotFound(err) || (err == nil && bt.ID != id) {
		return BalanceTransaction{}, notFound
	}
	if err != nil {
		return BalanceTransaction{}, err
	}
	one := []BalanceTransaction{bt}
	if err := s.fillBalances(ctx, p, one); err != nil {
		return BalanceTransaction{}, err
	}
	return one[0], nil
}
