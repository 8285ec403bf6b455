package payouts_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/store/storetest"
)

// TestSanctionsReload: the list is read at start and again on reload
// (SIGHUP); a failed reload keeps the previous list.
func TestSanctionsReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sdn := filepath.Join(dir, "sdn.csv")
	write := func(body string) {
		if err := os.WriteFile(sdn, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`1,"WABERI, Kadra","individual","SDGT",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\n")
	e := apptest.Start(t, storetest.SQLite, func(c *app.Config) { c.SanctionsList = sdn })
	topup(t, e, "DJF", 100_000)
	create := func(name string) payout {
		var p payout
		r := e.Post("/v1/payouts", map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456", "recipient_name": name})
		r.JSON(t, &p)
		return p
	}
	if p := create("Kadra Waberi"); p.Status != "held" {
		t.Fatalf("listed at start: %+v", p)
	}
	if p := create("Ismail Guelleh Robleh"); p.Status != "succeeded" || p.Screening.Status != "clear" {
		t.Fatalf("not yet listed: %+v", p)
	}
	write(`1,"WABERI, Kadra","individual","SDGT",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\n" +
		`2,"ROBLEH, Ismail Guelleh","individual","SDGT",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\n")
	e.Main.Reload(context.Background())
	if p := create("Ismail Guelleh Robleh"); p.Status != "held" {
		t.Fatalf("listed after reload: %+v", p)
	}
	write("not, a, list\n")
	e.Main.Reload(context.Background())
	if p := create("Ismail Guelleh Robleh"); p.Status != "held" {
		t.Fatalf("a broken reload dropped the list: %+v", p)
	}
	if got := e.Main.Sanctions().Size(); got != 2 {
		t.Fatalf("list size %d after a failed reload", got)
	}
}
