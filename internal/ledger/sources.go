package ledger

import (
	"context"
	"fmt"
	"strings"

	"github.com/payd/payd/internal/store"
)

// A balanced book can still hold a double effect: a payment credited twice,
// or a payout's reserve and its paid posting both copied, balance exactly and
// pass every sum. The source rules catch those. Each ledger transaction names
// its source in reference (a payment intent, a payout, a refund, a transfer's
// UETR, a dispute) and each source makes a known number of movements of each
// kind. The kinds are the capabilities' own (payments, payouts, refunds,
// banking, disputes); they are written here as data because the rule is one
// on what the ledger holds, checked by `payd ledger verify` without any
// capability wired.

// sourceRule bounds, for one source, how many transactions of some kinds it
// holds: count(kinds) <= 1 + count(releasedBy). A kind no source may repeat
// has no releasedBy.
type sourceRule struct {
	what       string   // what a breach means, for the report
	kinds      []string // the movements counted
	releasedBy []string // movements after which the counted one may legitimately come again
}

// sourceRules lists every rule. A payout reserves again only after its money
// came back (a failure or a cancel released the earlier reserve): a retry.
var sourceRules = []sourceRule{
	{what: "payment intent credited more than once", kinds: []string{"payment_succeeded"}},
	{what: "payout paid more than once", kinds: []string{"payout_paid"}},
	{what: "payout reserved again without a release", kinds: []string{"payout_reserve"}, releasedBy: []string{"payout_failed", "payout_canceled"}},
	{what: "refund held more than once", kinds: []string{"refund"}},
	{what: "refund settled or released more than once", kinds: []string{"refund_settlement", "refund_failure"}},
	{what: "transfer settled more than once", kinds: []string{"transfer_settlement"}},
	{what: "transfer accepted more than once", kinds: []string{"transfer_accept"}},
	{what: "dispute's funds withdrawn more than once", kinds: []string{"dispute"}},
	{what: "dispute's funds reinstated more than once", kinds: []string{"dispute_reversal"}},
}

// maxSourceFaults bounds the report: a database with thousands of doubled
// sources says how many and names the first ones.
const maxSourceFaults = 20

// SourceFault is one source that holds more movements than it may.
type SourceFault struct {
	MerchantID string
	Livemode   bool
	Reference  string // the source: pi_…, po_…, re_…, a UETR, dp_…
	Rule       string // what the breach means
	Count      int64  // the movements counted
	Allowed    int64  // the most it may hold
}

func (f SourceFault) String() string {
	return fmt.Sprintf("%s %s (merchant %s, livemode %t): %d movements, at most %d allowed",
		f.Reference, f.Rule, f.MerchantID, f.Livemode, f.Count, f.Allowed)
}

// SourceFaultsError reports every source that breaks a rule (the first
// maxSourceFaults of each rule, and how many there were in all).
type SourceFaultsError struct {
	Faults []SourceFault
	Total  int64
}

func (e *SourceFaultsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d sources hold a movement twice", e.Total)
	for _, f := range e.Faults {
		b.WriteString("\n  ")
		b.WriteString(f.String())
	}
	if n := e.Total - int64(len(e.Faults)); n > 0 {
		fmt.Fprintf(&b, "\n  … and %d more", n)
	}
	return b.String()
}

// verifySources checks every source rule: one scan of the transactions of
// the rule's kinds, grouped by source (a movement with no reference names
// no source, and no rule applies to it). It returns a *SourceFaultsError naming
// every breach (bounded), or nil.
func verifySources(ctx context.Context, q store.Querier) error {
	var report SourceFaultsError
	for _, r := range sourceRules {
		faults, total, err := breaches(ctx, q, r)
		if err != nil {
			return err
		}
		report.Faults = append(report.Faults, faults...)
		report.Total += total
	}
	if report.Total == 0 {
		return nil
	}
	return &report
}

// breaches runs one rule and returns its first breaches and their number.
func breaches(ctx context.Context, q store.Querier, r sourceRule) ([]SourceFault, int64, error) {
	all := append(append([]string{}, r.kinds...), r.releasedBy...)
	args := make([]any, 0, len(r.kinds)+len(all))
	counted := inList(len(r.kinds))
	for _, k := range r.kinds {
		args = append(args, k)
	}
	released := "0"
	if len(r.releasedBy) > 0 {
		released = "SUM(CASE WHEN kind IN " + inList(len(r.releasedBy)) + " THEN 1 ELSE 0 END)"
		for _, k := range r.releasedBy {
			args = append(args, k)
		}
	}
	for _, k := range all {
		args = append(args, k)
	}
	// The counted and released sums are computed once in the inner query;
	// the outer one keeps the breaches and counts them all beside the page.
	rows, err := q.Query(ctx, `SELECT merchant_id, livemode, reference, n, allowed, COUNT(*) OVER () FROM (
		SELECT merchant_id, livemode, reference,
			CAST(SUM(CASE WHEN kind IN `+counted+` THEN 1 ELSE 0 END) AS BIGINT) AS n,
			CAST(1 + `+released+` AS BIGINT) AS allowed
		FROM ledger_transactions WHERE kind IN `+inList(len(all))+` AND reference <> ''
		GROUP BY merchant_id, livemode, reference) s
		WHERE n > allowed ORDER BY reference LIMIT `+fmt.Sprint(maxSourceFaults), args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []SourceFault
	var total int64
	for rows.Next() {
		f := SourceFault{Rule: r.what}
		if err := rows.Scan(&f.MerchantID, &f.Livemode, &f.Reference, &f.Count, &f.Allowed, &total); err != nil {
			return nil, 0, err
		}
		out = append(out, f)
	}
	return out, total, rows.Err()
}

// inList is "(?, ?, …)" with n placeholders.
func inList(n int) string { return "(" + store.Placeholders(n) + ")" }
