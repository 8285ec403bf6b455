package billing

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestInvoiceNumbersUnderConcurrency: invoices made at the same time by
// many requests get the numbers INV-000001.. of their merchant and mode,
// each once, with no gap; the other mode counts on its own; a reread shows
// the same number.
func TestInvoiceNumbersUnderConcurrency(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		c := e.customer(nil, "wallet_c", providers.MagicMSISDN(providers.Success), nil)
		const n = 12
		var wg sync.WaitGroup
		got := make([]string, n)
		errc := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				v, err := e.svc.CreateInvoice(ctx, store.NoClaim, e.p, InvoiceParams{Customer: c.ID, Currency: "DJF",
					Lines: []ItemParams{{Description: "Line", AmountMinor: ptr(int64(100))}}})
				if err != nil {
					errc <- err
					return
				}
				if v.Number == nil {
					errc <- fmt.Errorf("invoice %s has no number", v.ID)
					return
				}
				got[i] = *v.Number
				if r, err := e.svc.GetInvoice(ctx, e.p, v.ID); err != nil || r.Number == nil || *r.Number != *v.Number {
					errc <- fmt.Errorf("reread of %s: %v %v", v.ID, r.Number, err)
				}
			})
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		sort.Strings(got)
		for i, s := range got {
			if want := fmt.Sprintf("INV-%06d", i+1); s != want {
				t.Fatalf("numbers %v: position %d is %s, want %s", got, i, s, want)
			}
		}
		live := auth.Principal{ID: e.p.ID, MerchantID: e.p.MerchantID, Livemode: true}
		lc, err := e.svc.CreateCustomer(ctx, store.NoClaim, live, CustomerParams{Name: ptr("Live")})
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.svc.CreateInvoice(ctx, store.NoClaim, live, InvoiceParams{Customer: lc.ID, Currency: "DJF", Lines: []ItemParams{{Description: "Line", AmountMinor: ptr(int64(100))}}})
		if err != nil || v.Number == nil || *v.Number != "INV-000001" {
			t.Fatalf("live mode's first invoice: %v %v", v.Number, err)
		}
	})
}

// TestClockObjectsShowClockTime: a customer, a subscription and the
// invoices made on a test clock carry the clock's time in created_at, as
// made and as read back, before and after the clock moves; the wall clock
// is years away.
func TestClockObjectsShowClockTime(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		start := time.Date(2020, 3, 1, 9, 0, 0, 0, time.UTC)
		clk := e.clock(start)
		c := e.customer(&clk.ID, "wallet_c", goodWallet, nil)
		if !c.CreatedAt.Equal(start) {
			t.Fatalf("customer created_at %s, want the clock's %s", c.CreatedAt, start)
		}
		s := e.subscribe(c.ID, 1500, nil)
		if !s.CreatedAt.Equal(start) {
			t.Fatalf("subscription created_at %s, want %s", s.CreatedAt, start)
		}
		v, err := e.svc.CreateInvoice(ctx, store.NoClaim, e.p, InvoiceParams{Customer: c.ID, Currency: "DJF", Lines: []ItemParams{{Description: "Setup", AmountMinor: ptr(int64(500))}}})
		if err != nil || !v.CreatedAt.Equal(start) {
			t.Fatalf("one-off invoice created_at %s (%v), want %s", v.CreatedAt, err, start)
		}
		next := start.AddDate(0, 1, 0)
		e.advance(clk, next)
		if _, err := e.svc.FinalizeInvoice(ctx, store.NoClaim, e.p, v.ID); err != nil {
			t.Fatal(err)
		}
		if r, _ := e.svc.GetInvoice(ctx, e.p, v.ID); !r.CreatedAt.Equal(start) {
			t.Errorf("one-off invoice read back after finalizing: created_at %s, want %s", r.CreatedAt, start)
		}
		invs := e.invoices(s.ID)
		if len(invs) != 2 || !invs[0].CreatedAt.Equal(start) || !invs[1].CreatedAt.Equal(next) {
			t.Fatalf("subscription invoices: %d, created %v", len(invs), createdTimes(invs))
		}
		if got, _ := e.svc.GetCustomer(ctx, e.p, c.ID); !got.CreatedAt.Equal(start) {
			t.Errorf("customer read back: created_at %s", got.CreatedAt)
		}
		if got := e.sub(s.ID); !got.CreatedAt.Equal(start) {
			t.Errorf("subscription read back: created_at %s", got.CreatedAt)
		}
	})
}

func createdTimes(invs []Invoice) []time.Time {
	out := make([]time.Time, len(invs))
	for i, v := range invs {
		out[i] = v.CreatedAt
	}
	return out
}

// TestInvoiceNumberBackfill runs migration 2700's back-fill on invoices made
// before it (their numbers and counters cleared): they are numbered in the
// order they were made, per merchant and mode, and the next invoice carries
// on from the last.
func TestInvoiceNumberBackfill(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "store", "migrations", "2700_invoice_numbers.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var backfill []string
	for _, stmt := range strings.Split(string(src), ";") {
		var code []string
		for _, line := range strings.Split(stmt, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "--") {
				code = append(code, line)
			}
		}
		if c := strings.TrimSpace(strings.Join(code, "\n")); strings.HasPrefix(c, "UPDATE invoices") || strings.HasPrefix(c, "INSERT INTO invoice_numbers") {
			backfill = append(backfill, c)
		}
	}
	if len(backfill) != 2 {
		t.Fatalf("found %d back-fill statements in migration 2700, want 2", len(backfill))
	}
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		c := e.customer(nil, "wallet_c", providers.MagicMSISDN(providers.Success), nil)
		var made []string
		for range 3 {
			v, err := e.svc.CreateInvoice(ctx, store.NoClaim, e.p, InvoiceParams{Customer: c.ID, Currency: "DJF", Lines: []ItemParams{{Description: "Line", AmountMinor: ptr(int64(100))}}})
			if err != nil {
				t.Fatal(err)
			}
			made = append(made, v.ID)
		}
		for _, q := range []string{"UPDATE invoices SET number = NULL", "DELETE FROM invoice_numbers"} {
			if _, err := db.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range backfill {
			if _, err := db.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		for i, id := range made {
			v, err := e.svc.GetInvoice(ctx, e.p, id)
			if want := fmt.Sprintf("INV-%06d", i+1); err != nil || v.Number == nil || *v.Number != want {
				t.Fatalf("invoice %d after the back-fill: %v %v, want %s", i, v.Number, err, want)
			}
		}
		v, err := e.svc.CreateInvoice(ctx, store.NoClaim, e.p, InvoiceParams{Customer: c.ID, Currency: "DJF", Lines: []ItemParams{{Description: "Line", AmountMinor: ptr(int64(100))}}})
		if err != nil || v.Number == nil || *v.Number != "INV-000004" {
			t.Fatalf("next invoice: %v %v", v.Number, err)
		}
	})
}
