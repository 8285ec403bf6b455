package reconciliation

import (
	"testing"
	"time"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/providers/protocol"
)

func TestCompare(t *testing.T) {
	day := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	at := day.Add(10 * time.Hour)
	entry := func(typ, ref string, amt int64, cur string) protocol.SettlementEntry {
		return protocol.SettlementEntry{Type: typ, ID: "p_" + ref, Reference: ref, AmountMinor: amt, Currency: cur, SettledAt: at}
	}
	rep := protocol.SettlementReport{Date: "2026-11-21", Entries: []protocol.SettlementEntry{
		entry("payment", "pi_ok", 500, "DJF"),
		entry("payout", "po_ok", 900, "DJF"),
		entry("payment", "pi_late", 100, "DJF"),    // posted by payd just after midnight
		entry("payment", "pi_missing", 300, "DJF"), // never posted by payd
		entry("payment", "pi_amount", 400, "DJF"),  // payd posted 320
		entry("payment", "pi_currency", 50, "USD"), // payd posted DJF
		entry("payout", "pi_type", 70, "DJF"),      // payd has a payment
		entry("payment", "pi_ok", 500, "DJF"),      // listed twice
		entry("payout", "key_ok", 10, "DJF"),       // a payout under its idempotency key
	}}
	moves := []ledger.Movement{
		{Reference: "pi_ok", Currency: "DJF", Amount: -500, PostedAt: at},
		{Reference: "po_ok", Currency: "DJF", Amount: 900, PostedAt: at},
		{Reference: "pi_late", Currency: "DJF", Amount: -100, PostedAt: day.AddDate(0, 0, 1).Add(time.Second)},
		{Reference: "pi_amount", Currency: "DJF", Amount: -320, PostedAt: at},
		{Reference: "pi_currency", Currency: "DJF", Amount: -50, PostedAt: at},
		{Reference: "pi_type", Currency: "DJF", Amount: -70, PostedAt: at},
		{Reference: "pi_unreported", Currency: "DJF", Amount: -600, PostedAt: at},
		{Reference: "pi_yesterday", Currency: "DJF", Amount: -5, PostedAt: day.Add(-time.Second)}, // not this day's
		{Reference: "po_7", Currency: "DJF", Amount: 10, PostedAt: at},
	}
	resolve := func(ref string) string {
		if ref == "key_ok" {
			return "po_7"
		}
		return ref
	}
	got, err := Compare("bank_a", day, rep, moves, resolve)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"pi_missing":    MissingInLedger,
		"pi_amount":     AmountMismatch,
		"pi_currency":   CurrencyMismatch,
		"pi_type":       TypeMismatch,
		"pi_ok":         DuplicateAtProvider,
		"pi_unreported": MissingAtProvider,
	}
	if len(got.Discrepancies) != len(want) {
		t.Fatalf("%d discrepancies, want %d: %+v", len(got.Discrepancies), len(want), got.Discrepancies)
	}
	for _, d := range got.Discrepancies {
		if want[d.Reference] != d.Kind {
			t.Errorf("%s: %s, want %s", d.Reference, d.Kind, want[d.Reference])
		}
	}
	if got.Matched != 4 || got.ProviderEntries != 9 || got.LedgerEntries != 7 {
		t.Fatalf("matched %d provider %d ledger %d", got.Matched, got.ProviderEntries, got.LedgerEntries)
	}
	if len(got.Totals) != 2 || got.Totals[0].Currency != "DJF" || got.Totals[0].LedgerPayoutsMinor != 910 || got.Totals[1].ProviderPaymentsMinor != 50 {
		t.Fatalf("totals %+v", got.Totals)
	}

	clean, _ := Compare("bank_a", day, protocol.SettlementReport{Entries: rep.Entries[:2]}, moves[:2], resolve)
	if len(clean.Discrepancies) != 0 || clean.Matched != 2 {
		t.Fatalf("clean day: %+v", clean)
	}
}
