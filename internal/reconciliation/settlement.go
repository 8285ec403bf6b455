package reconciliation

import (
	"sort"
	"time"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/providers/protocol"
)

// Discrepancy kinds (docs/providers.md, Reconciliation).
const (
	MissingInLedger     = "missing_in_ledger"
	MissingAtProvider   = "missing_at_provider"
	AmountMismatch      = "amount_mismatch"
	CurrencyMismatch    = "currency_mismatch"
	TypeMismatch        = "type_mismatch"
	DuplicateAtProvider = "duplicate_at_provider"
)

// SettlementReconciliation is the comparison of a provider's daily report
// with the ledger for one merchant, provider and UTC day.
type SettlementReconciliation struct {
	Object          string        `json:"object"` // settlement_reconciliation
	Provider        string        `json:"provider"`
	Date            string        `json:"date"`
	Livemode        bool          `json:"livemode"`
	Matched         int           `json:"matched"`
	ProviderEntries int           `json:"provider_entries"`
	LedgerEntries   int           `json:"ledger_entries"`
	Totals          []Total       `json:"totals"`
	Discrepancies   []Discrepancy `json:"discrepancies"`
	GeneratedAt     time.Time     `json:"generated_at"`
}

// Total compares the day's sums per currency.
type Total struct {
	Currency              string `json:"currency"`
	ProviderPaymentsMinor int64  `json:"provider_payments_minor"`
	LedgerPaymentsMinor   int64  `json:"ledger_payments_minor"`
	ProviderPayoutsMinor  int64  `json:"provider_payouts_minor"`
	LedgerPayoutsMinor    int64  `json:"ledger_payouts_minor"`
}

// Discrepancy is one difference between the report and the ledger.
type Discrepancy struct {
	Kind                string `json:"kind"`
	Reference           string `json:"reference"`
	ProviderID          string `json:"provider_id,omitempty"`
	Type                string `json:"type"` // payment or payout
	Currency            string `json:"currency"`
	ProviderAmountMinor *int64 `json:"provider_amount_minor"`
	LedgerAmountMinor   *int64 `json:"ledger_amount_minor"`
	LedgerCurrency      string `json:"ledger_currency,omitempty"`
}

// Compare lists every difference between a provider's report of the UTC day
// starting at day and the ledger's movements (those posted that day, and
// those of the report's references whenever posted). resolve maps a
// provider reference to the ledger's reference (payd's object id).
func Compare(provider string, day time.Time, rep protocol.SettlementReport, movements []ledger.Movement, resolve func(string) string) (SettlementReconciliation, error) {
	next := day.AddDate(0, 0, 1)
	out := SettlementReconciliation{Object: "settlement_reconciliation", Provider: provider, Date: day.Format(time.DateOnly),
		Totals: []Total{}, Discrepancies: []Discrepancy{}}
	totals := map[string]*Total{}
	total := func(cur string) *Total {
		t := totals[cur]
		if t == nil {
			t = &Total{Currency: cur}
			totals[cur] = t
		}
		return t
	}
	ledgerByRef := map[string][]ledger.Movement{}
	for _, m := range movements {
		ledgerByRef[m.Reference] = append(ledgerByRef[m.Reference], m)
		if !m.PostedAt.Before(day) && m.PostedAt.Before(next) {
			out.LedgerEntries++
			t := total(m.Currency)
			var err error
			if m.Amount < 0 {
				t.LedgerPaymentsMinor, err = money.Add(t.LedgerPaymentsMinor, -m.Amount)
			} else {
				t.LedgerPayoutsMinor, err = money.Add(t.LedgerPayoutsMinor, m.Amount)
			}
			if err != nil {
				return out, err
			}
		}
	}
	matched := map[string]bool{}
	seen := map[string]bool{}
	for _, e := range rep.Entries {
		out.ProviderEntries++
		ref := resolve(e.Reference)
		amt := e.AmountMinor
		d := Discrepancy{Reference: ref, ProviderID: e.ID, Type: e.Type, Currency: e.Currency, ProviderAmountMinor: &amt}
		t := total(e.Currency)
		var err error
		if e.Type == "payout" {
			t.ProviderPayoutsMinor, err = money.Add(t.ProviderPayoutsMinor, e.AmountMinor)
		} else {
			t.ProviderPaymentsMinor, err = money.Add(t.ProviderPaymentsMinor, e.AmountMinor)
		}
		if err != nil {
			return out, err
		}
		if seen[ref] {
			d.Kind = DuplicateAtProvider
			out.Discrepancies = append(out.Discrepancies, d)
			continue
		}
		seen[ref] = true
		ms := ledgerByRef[ref]
		if len(ms) == 0 {
			d.Kind = MissingInLedger
			out.Discrepancies = append(out.Discrepancies, d)
			continue
		}
		matched[ref] = true
		m := ms[0]
		for _, c := range ms {
			if c.Currency == e.Currency {
				m = c
			}
		}
		ledgerType, ledgerAmt := "payment", -m.Amount
		if m.Amount > 0 {
			ledgerType, ledgerAmt = "payout", m.Amount
		}
		d.LedgerAmountMinor = &ledgerAmt
		switch {
		case ledgerType != e.Type:
			d.Kind = TypeMismatch
		case m.Currency != e.Currency:
			d.Kind, d.LedgerCurrency = CurrencyMismatch, m.Currency
		case ledgerAmt != e.AmountMinor:
			d.Kind = AmountMismatch
		default:
			out.Matched++
			continue
		}
		out.Discrepancies = append(out.Discrepancies, d)
	}
	for _, m := range movements {
		if matched[m.Reference] || m.PostedAt.Before(day) || !m.PostedAt.Before(next) {
			continue
		}
		typ, amt := "payment", -m.Amount
		if m.Amount > 0 {
			typ, amt = "payout", m.Amount
		}
		out.Discrepancies = append(out.Discrepancies, Discrepancy{Kind: MissingAtProvider, Reference: m.Reference, Type: typ,
			Currency: m.Currency, LedgerAmountMinor: &amt})
	}
	for _, t := range totals {
		out.Totals = append(out.Totals, *t)
	}
	sort.Slice(out.Totals, func(i, j int) bool { return out.Totals[i].Currency < out.Totals[j].Currency })
	sort.SliceStable(out.Discrepancies, func(i, j int) bool { return out.Discrepancies[i].Reference < out.Discrepancies[j].Reference })
	return out, nil
}
