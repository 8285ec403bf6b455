package live_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sim"
)

type reconciliation struct {
	Matched         int `json:"matched"`
	ProviderEntries int `json:"provider_entries"`
	LedgerEntries   int `json:"ledger_entries"`
	Discrepancies   []struct {
		Kind      string `json:"kind"`
		Reference string `json:"reference"`
	} `json:"discrepancies"`
}

// testSettlementReconciliation compares the provider's daily report with
// the ledger: clean after real traffic, then every tampering listed.
func testSettlementReconciliation(t *testing.T, e *apptest.Env, _ *apptest.Sim) {
	var tamper atomic.Bool
	s := apptest.StartSim(t, sim.Config{PushDelay: 20 * time.Millisecond, ReportFilter: func(provider string, r *protocol.SettlementReport) {
		if !tamper.Load() || len(r.Entries) < 2 {
			return
		}
		// Drop the first (payd has it, the provider "does not"), change the
		// amount of the second, and add one payd never saw.
		r.Entries = append([]protocol.SettlementEntry{}, r.Entries[1:]...)
		r.Entries[0].AmountMinor++
		r.Entries = append(r.Entries, protocol.SettlementEntry{Type: "payment", ID: "pay_ghost", Reference: "pi_ghost",
			AmountMinor: 77, Currency: "DJF", SettledAt: time.Now().UTC()})
	}})
	m := goLive(t, e, s, "5s", "wallet_c", "wallet_b")
	fund(t, m, 5000)
	in := m.create(t, map[string]any{"amount": 300, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377990002"}, 201)
	m.settle(t, in.ID)
	if r := m.post("/v1/payouts", map[string]any{"amount": 1200, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377990003"}); r.Status != 201 {
		t.Fatalf("payout: %d %s", r.Status, r.Body)
	}
	day := time.Now().UTC().Format(time.DateOnly)
	get := func(provider string) reconciliation {
		t.Helper()
		var out reconciliation
		r := m.get("/v1/providers/" + provider + "/settlement_reconciliation?date=" + day)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", provider, r.Status, r.Body)
		}
		r.JSON(t, &out)
		return out
	}
	if got := get("wallet_c"); got.Matched != 2 || len(got.Discrepancies) != 0 || got.ProviderEntries != 2 || got.LedgerEntries != 2 {
		t.Fatalf("wallet_c: %+v", got)
	}
	if got := get("wallet_b"); got.Matched != 1 || len(got.Discrepancies) != 0 {
		t.Fatalf("wallet_b (payouts by their keys): %+v", got)
	}
	tamper.Store(true)
	got := get("wallet_c")
	kinds := map[string]int{}
	for _, d := range got.Discrepancies {
		kinds[d.Kind]++
	}
	if kinds["missing_in_ledger"] != 1 || kinds["missing_at_provider"] != 1 || kinds["amount_mismatch"] != 1 || len(got.Discrepancies) != 3 {
		t.Fatalf("tampered report: %+v", got)
	}
	if r := m.get("/v1/providers/wallet_c/settlement_reconciliation?date=21-11-2026"); r.Status != 400 || r.ErrorCode() != "parameter_invalid" {
		t.Fatalf("bad date: %d %s", r.Status, r.Body)
	}
	if r := e.Get("/v1/providers/wallet_c/settlement_reconciliation?date=" + day); r.Status != 400 || r.ErrorCode() != "live_mode_only" {
		t.Fatalf("test key: %d %s", r.Status, r.Body)
	}
	if r := m.get("/v1/providers/bank_b/settlement_reconciliation?date=" + day); r.Status != 503 {
		t.Fatalf("provider not connected: %d %s", r.Status, r.Body)
	}
	m.requireNoSecrets(t)
}
