package reports

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/csvcell"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/store"
)

// SettlementRow is one line of the settlement report: a day's payments and
// refunds in one currency through one provider at one outlet.
type SettlementRow struct {
	Date     string `json:"date"`
	Currency string `json:"currency"`
	Provider string `json:"provider"`
	// OutletID is the outlet of the terminal that took the payments; empty
	// for payments not taken on a terminal.
	OutletID      string `json:"outlet_id"`
	PaymentsCount int64  `json:"payments_count"`
	GrossMinor    int64  `json:"gross_minor"`
	// RefundsMinor is what refunds took from available that day, less what
	// failed or canceled refunds gave back: positive when refunds were paid.
	RefundsMinor int64 `json:"refunds_minor"`
	NetMinor     int64 `json:"net_minor"` // GrossMinor − RefundsMinor
}

// SettlementReport is GET /v1/reports/settlement.
type SettlementReport struct {
	Object   string          `json:"object"` // "settlement_report"
	Date     string          `json:"date"`
	Timezone string          `json:"timezone"`
	Rows     []SettlementRow `json:"rows"`
	// Disputes sums the day's dispute movements per currency (JSON only: the
	// CSV's columns are the rows'). They make no rows: the rows add up to the
	// day's payment and refund balance transactions alone.
	Disputes []SettlementDisputes `json:"disputes"`
}

// SettlementDisputes is one currency's dispute movements of a report day.
type SettlementDisputes struct {
	Currency string `json:"currency"`
	// Count is how many disputes were opened that day.
	Count int64 `json:"disputes_count"`
	// WithdrawnMinor is what the day's new disputes took from available
	// (positive); ReinstatedMinor what the day's won disputes gave back.
	WithdrawnMinor  int64 `json:"withdrawn_minor"`
	ReinstatedMinor int64 `json:"reinstated_minor"`
}

// SettlementParams chooses the report: a calendar day in a time zone,
// optionally one currency.
type SettlementParams struct {
	Date     string // YYYY-MM-DD
	Timezone string // IANA name
	Currency string

	from, until time.Time // the day's bounds
}

// maxTimezoneLength bounds the time zone name (the longest IANA name is
// about 30 characters).
const maxTimezoneLength = 64

// ParseSettlementQuery reads date (required), timezone (default UTC) and
// currency. A bad value is a 400 naming its param.
func ParseSettlementQuery(q url.Values) (SettlementParams, error) {
	sp := SettlementParams{Date: q.Get("date"), Timezone: q.Get("timezone"), Currency: q.Get("currency")}
	if sp.Date == "" {
		return sp, errs.Missing("date")
	}
	day, err := time.Parse(time.DateOnly, sp.Date)
	if err != nil || day.Year() < 1970 || day.Year() > 9999 {
		return sp, errs.Invalid("date", "parameter_invalid", "date must be a calendar day written YYYY-MM-DD")
	}
	if sp.Timezone == "" {
		sp.Timezone = "UTC"
	}
	loc, err := loadZone(sp.Timezone)
	if err != nil {
		return sp, errs.Invalid("timezone", "parameter_invalid", "timezone must be an IANA time zone name such as Africa/Djibouti")
	}
	if sp.Currency != "" {
		if _, err := money.Exponent(sp.Currency); err != nil {
			return sp, errs.Invalid("currency", "parameter_invalid", "currency must be an ISO 4217 code such as DJF")
		}
	}
	// Midnight to midnight in the zone: 23 or 25 hours on the days clocks change.
	sp.from = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc)
	sp.until = time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 0, 0, loc)
	return sp, nil
}

// loadZone loads an IANA zone by name, refusing what time.LoadLocation would
// read from elsewhere ("Local", paths).
func loadZone(name string) (*time.Location, error) {
	if len(name) > maxTimezoneLength || name == "Local" || strings.HasPrefix(name, "/") || strings.Contains(name, "..") || strings.ContainsAny(name, "\\\x00") {
		return nil, fmt.Errorf("not an IANA zone name")
	}
	return time.LoadLocation(name)
}

// Bounds returns the report day's first instant and the next day's.
func (sp SettlementParams) Bounds() (from, until time.Time) { return sp.from, sp.until }

// reportTypes are the balance transaction types that make report rows.
var reportTypes = []Type{TypePayment, TypeRefund, TypeRefundFailure}

// Settlement builds the day's report: every payment, refund and
// refund_failure balance transaction of the day (by its created_at), grouped
// by currency, the provider that took the payment and the terminal's outlet.
// Each currency's rows sum exactly to those balance transactions. The read
// uses the (merchant_id, livemode, kind, created_at) index, so its cost is
// the day's postings, not the ledger's size.
func (s *Service) Settlement(ctx context.Context, p auth.Principal, sp SettlementParams) (SettlementReport, error) {
	rep := SettlementReport{Object: "settlement_report", Date: sp.Date, Timezone: sp.Timezone, Rows: []SettlementRow{},
		Disputes: []SettlementDisputes{}}
	if err := s.settlementDisputes(ctx, p, sp, &rep); err != nil {
		return rep, err
	}
	var kinds []string
	for _, t := range reportTypes {
		in, _ := kindFilter(t)
		kinds = append(kinds, in...)
	}
	posts, err := s.dayPostings(ctx, p, sp, kinds)
	if err != nil {
		return rep, err
	}
	refs := map[Type][]string{} // each reference once, by type
	seenRef := map[string]bool{}
	for _, x := range posts {
		if x.ref != "" && !seenRef[x.ref] {
			seenRef[x.ref] = true
			refs[x.typ] = append(refs[x.typ], x.ref)
		}
	}
	intentOf, err := s.intentsOf(ctx, p, refs)
	if err != nil {
		return rep, err
	}
	intents := make([]string, 0, len(intentOf))
	seen := map[string]bool{}
	for _, pi := range intentOf {
		if pi != "" && !seen[pi] {
			seen[pi] = true
			intents = append(intents, pi)
		}
	}
	origins, err := s.payments.Origins(ctx, p, intents)
	if err != nil {
		return rep, err
	}
	type key struct{ currency, provider, outlet string }
	by := map[key]*SettlementRow{}
	for _, x := range posts {
		o := origins[intentOf[x.ref]]
		k := key{x.currency, o.Provider, o.OutletID}
		r := by[k]
		if r == nil {
			r = &SettlementRow{Date: sp.Date, Currency: x.currency, Provider: o.Provider, OutletID: o.OutletID}
			by[k] = r
		}
		var err error
		switch x.typ {
		case TypePayment:
			r.PaymentsCount++
			r.GrossMinor, err = money.Add(r.GrossMinor, x.amount)
		default: // refunds take from available (negative), failures give back (positive)
			r.RefundsMinor, err = money.Add(r.RefundsMinor, -x.amount)
		}
		if err != nil {
			return rep, fmt.Errorf("reports: settlement sums overflow: %w", err)
		}
	}
	for _, r := range by {
		net, err := money.Add(r.GrossMinor, -r.RefundsMinor)
		if err != nil {
			return rep, fmt.Errorf("reports: settlement net overflows: %w", err)
		}
		r.NetMinor = net
		rep.Rows = append(rep.Rows, *r)
	}
	sort.Slice(rep.Rows, func(i, j int) bool {
		a, b := rep.Rows[i], rep.Rows[j]
		if a.Currency != b.Currency {
			return a.Currency < b.Currency
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		return a.OutletID < b.OutletID
	})
	return rep, nil
}

// settlementDisputes fills the report's dispute sums per currency from the
// day's dispute and dispute_reversal balance transactions.
func (s *Service) settlementDisputes(ctx context.Context, p auth.Principal, sp SettlementParams, rep *SettlementReport) error {
	var kinds []string
	for _, t := range []Type{TypeDispute, TypeDisputeReversal} {
		in, _ := kindFilter(t)
		kinds = append(kinds, in...)
	}
	posts, err := s.dayPostings(ctx, p, sp, kinds)
	if err != nil {
		return err
	}
	by := map[string]*SettlementDisputes{}
	for _, x := range posts {
		d := by[x.currency]
		if d == nil {
			d = &SettlementDisputes{Currency: x.currency}
			by[x.currency] = d
		}
		var err error
		switch x.typ {
		case TypeDispute:
			d.Count++
			d.WithdrawnMinor, err = money.Add(d.WithdrawnMinor, -x.amount)
		default:
			d.ReinstatedMinor, err = money.Add(d.ReinstatedMinor, x.amount)
		}
		if err != nil {
			return fmt.Errorf("reports: dispute sums overflow: %w", err)
		}
	}
	for _, d := range by {
		rep.Disputes = append(rep.Disputes, *d)
	}
	sort.Slice(rep.Disputes, func(i, j int) bool { return rep.Disputes[i].Currency < rep.Disputes[j].Currency })
	return nil
}

// posting is one balance transaction of a report day.
type posting struct {
	typ           Type
	ref, currency string
	amount        int64
}

// dayPostings reads the day's postings of kinds on the principal's available
// accounts in two index-served steps: the day's ledger transactions through
// (merchant_id, livemode, kind, created_at), then their entries through
// (transaction_id), so the cost follows the day's volume. (One join lets
// PostgreSQL's planner hash the account's whole history instead.)
func (s *Service) dayPostings(ctx context.Context, p auth.Principal, sp SettlementParams, kinds []string) ([]posting, error) {
	accts, err := s.availableAccounts(ctx, p, sp.Currency)
	if err != nil || len(accts) == 0 {
		return nil, err
	}
	rows, err := s.db.Query(ctx, `SELECT id, kind, reference FROM ledger_transactions
		WHERE merchant_id = ? AND livemode = ? AND kind IN (`+store.Placeholders(len(kinds))+`) AND created_at >= ? AND created_at < ?`,
		append(append([]any{p.MerchantID, p.Livemode}, store.Args(kinds)...), store.Micros(sp.from), store.Micros(sp.until))...)
	if err != nil {
		return nil, err
	}
	type txn struct{ kind, ref string }
	txns := map[string]txn{}
	var txIDs []string
	for rows.Next() {
		var id string
		var t txn
		if err := rows.Scan(&id, &t.kind, &t.ref); err != nil {
			rows.Close()
			return nil, err
		}
		txns[id] = t
		txIDs = append(txIDs, id)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, err
	}
	available := make(map[string]bool, len(accts))
	for _, a := range accts {
		available[a.id] = true
	}
	var out []posting
	for start := 0; start < len(txIDs); start += inChunk {
		part := txIDs[start:min(start+inChunk, len(txIDs))]
		// Only the transaction condition, so both engines look the entries up
		// by transaction (with an account condition SQLite may walk the
		// account's whole history instead); the accounts are checked here.
		rows, err := s.db.Query(ctx, "SELECT transaction_id, account_id, currency, amount FROM ledger_entries WHERE transaction_id IN ("+
			store.Placeholders(len(part))+")", store.Args(part)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id, acct string
			var x posting
			if err := rows.Scan(&id, &acct, &x.currency, &x.amount); err != nil {
				rows.Close()
				return nil, err
			}
			if !available[acct] {
				continue
			}
			t := txns[id]
			x.typ, x.ref = TypeOf(t.kind), t.ref
			out = append(out, x)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// intentsOf maps each posting's reference to its payment intent: a payment's
// reference is the intent, a refund's is resolved through the refunds.
func (s *Service) intentsOf(ctx context.Context, p auth.Principal, refs map[Type][]string) (map[string]string, error) {
	out := map[string]string{}
	for _, ref := range refs[TypePayment] {
		out[ref] = ref
	}
	refunds := append(append([]string(nil), refs[TypeRefund]...), refs[TypeRefundFailure]...)
	if len(refunds) == 0 {
		return out, nil
	}
	m, err := s.refunds(ctx, p, refunds)
	if err != nil {
		return nil, err
	}
	for re, pi := range m {
		out[re] = pi
	}
	return out, nil
}

// SettlementCSVHeader is the first line of the CSV report.
var SettlementCSVHeader = []string{"date", "currency", "provider", "outlet_id", "payments_count", "gross_minor", "refunds_minor", "net_minor"}

// WriteSettlementCSV writes the report as CSV: the header, then one line per
// row. Text cells are made formula-safe (an outlet id is the merchant's own
// text).
func WriteSettlementCSV(w io.Writer, rep SettlementReport) error {
	cw := csv.NewWriter(w)
	cw.Write(SettlementCSVHeader)
	for _, r := range rep.Rows {
		cw.Write([]string{r.Date, csvcell.Safe(r.Currency), csvcell.Safe(r.Provider), csvcell.Safe(r.OutletID),
			strconv.FormatInt(r.PaymentsCount, 10), strconv.FormatInt(r.GrossMinor, 10),
			strconv.FormatInt(r.RefundsMinor, 10), strconv.FormatInt(r.NetMinor, 10)})
	}
	cw.Flush()
	return cw.Error()
}
