package ledger

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/store"
)

// Movement is the net of one reference's entries on a provider clearing
// account in one currency: negative when the provider owes the merchant (a
// captured payment), positive when the merchant owes the provider (a paid
// payout).
type Movement struct {
	Reference string
	Currency  string
	Amount    int64
	// PostedAt is the reference's first posting on the account.
	PostedAt time.Time
}

// refChunk bounds the references of one IN (...) list.
const refChunk = 500

// ProviderMovements returns the movements on a merchant's clearing accounts
// with provider that were posted in [from, to), and those of refs whenever
// they were posted, ordered by reference and currency. The settlement
// reconciliation compares them with the provider's daily report.
func ProviderMovements(ctx context.Context, q store.Querier, merchantID string, livemode bool, provider string,
	from, to time.Time, refs []string) ([]Movement, error) {
	const base = `SELECT e.id, t.reference, e.currency, e.amount, t.created_at
		FROM ledger_entries e
		JOIN ledger_transactions t ON t.id = e.transaction_id
		JOIN ledger_accounts a ON a.id = e.account_id
		WHERE a.merchant_id = ? AND a.livemode = ? AND a.kind = ? AND a.provider = ? AND t.reference <> ''`
	args := []any{merchantID, livemode, string(ProviderClearing), provider}
	type entry struct {
		ref, currency string
		amount, at    int64
	}
	entries := map[int64]entry{}
	read := func(query string, extra ...any) error {
		rows, err := q.Query(ctx, query, append(append([]any{}, args...), extra...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var e entry
			if err := rows.Scan(&id, &e.ref, &e.currency, &e.amount, &e.at); err != nil {
				return err
			}
			entries[id] = e
		}
		return rows.Err()
	}
	if err := read(base+" AND t.created_at >= ? AND t.created_at < ?", store.Micros(from), store.Micros(to)); err != nil {
		return nil, err
	}
	for start := 0; start < len(refs); start += refChunk {
		part := refs[start:min(start+refChunk, len(refs))]
		in := make([]any, len(part))
		for i, r := range part {
			in[i] = r
		}
		if err := read(base+" AND t.reference IN (?"+strings.Repeat(", ?", len(part)-1)+")", in...); err != nil {
			return nil, err
		}
	}
	type key struct{ ref, currency string }
	by := map[key]*Movement{}
	for _, e := range entries {
		k := key{e.ref, e.currency}
		m := by[k]
		at := store.FromMicros(e.at)
		if m == nil {
			m = &Movement{Reference: e.ref, Currency: e.currency, PostedAt: at}
			by[k] = m
		}
		sum, err := money.Add(m.Amount, e.amount)
		if err != nil {
			return nil, err
		}
		m.Amount = sum
		if at.Before(m.PostedAt) {
			m.PostedAt = at
		}
	}
	out := make([]Movement, 0, len(by))
	for _, m := range by {
		if m.Amount != 0 {
			out = append(out, *m)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Reference != out[j].Reference {
			return out[i].Reference < out[j].Reference
		}
		return out[i].Currency < out[j].Currency
	})
	return out, nil
}
