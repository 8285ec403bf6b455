package reports_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
)

// TestBalanceTransactions: every movement of available is one balance
// transaction of the right type, source and sign; balance_after_minor
// chains; filters, cursors, retrieval and isolation behave as lists do.
func TestBalanceTransactions(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		topup(t, e, "DJF", 10_000)
		pi := pay(t, e, 2_500)
		po := payout(t, e, 1_000, "")
		failed := payout(t, e, 700, "insufficient_funds")
		topup(t, e, "USD", 300)

		all := listAll(t, e, nil, 100)
		type want struct {
			typ    string
			amount int64
			cur    string
			source string
		}
		wants := []want{ // newest first
			{"topup", 300, "USD", ""},
			{"payout_failure", 700, "DJF", failed},
			{"payout", -700, "DJF", failed},
			{"payout", -1_000, "DJF", po},
			{"payment", 2_500, "DJF", pi},
			{"topup", 10_000, "DJF", ""},
		}
		if len(all) != len(wants) {
			t.Fatalf("%d balance transactions, want %d: %+v", len(all), len(wants), all)
		}
		for i, w := range wants {
			x := all[i]
			if x.Object != "balance_transaction" || !strings.HasPrefix(x.ID, "txn_") || x.Type != w.typ || x.AmountMinor != w.amount ||
				x.Currency != w.cur || x.Livemode || !strings.HasSuffix(x.CreatedAt, "Z") {
				t.Fatalf("row %d = %+v, want %+v", i, x, w)
			}
			if w.source != "" && x.Source != w.source {
				t.Fatalf("row %d source %q, want %q", i, x.Source, w.source)
			}
			if w.typ == "topup" && !strings.HasPrefix(x.Source, "ltx_") {
				t.Fatalf("top-up source %q, want the top-up's id", x.Source)
			}
		}
		if all[1].BalanceAfterMinor != 11_500 || all[3].BalanceAfterMinor != 11_500 || all[0].BalanceAfterMinor != 300 {
			t.Fatalf("balances after: %+v", all)
		}
		checkHistory(t, e, all)

		// Every page size gives the same history, forwards and backwards.
		for _, limit := range []int{1, 2, 4} {
			if got := listAll(t, e, nil, limit); !sameIDs(got, all) {
				t.Fatalf("limit %d: %v, want %v", limit, ids(got), ids(all))
			}
		}
		back := list(t, e, url.Values{"ending_before": {all[3].ID}, "limit": {"2"}})
		if !back.HasMore || !sameIDs(back.Data, all[1:3]) {
			t.Fatalf("ending_before: %+v", back)
		}

		for _, c := range []struct {
			q    url.Values
			want []txn
		}{
			{url.Values{"type": {"payout"}}, all[2:4]},
			{url.Values{"type": {"payment"}}, all[4:5]},
			{url.Values{"type": {"adjustment"}}, nil},
			{url.Values{"currency": {"USD"}}, all[0:1]},
			{url.Values{"source": {failed}}, all[1:3]},
			{url.Values{"source": {all[5].Source}}, all[5:6]},
			{url.Values{"source": {pi}, "type": {"payout"}}, nil},
			{url.Values{"created[gte]": {all[0].CreatedAt}}, nil}, // checked below: at least the newest
			{url.Values{"created[lt]": {"2000-01-01T00:00:00Z"}}, nil},
		} {
			got := listAll(t, e, c.q, 10)
			if c.q.Has("created[gte]") {
				if len(got) == 0 || got[0].ID != all[0].ID {
					t.Fatalf("%s: %v", c.q.Encode(), ids(got))
				}
				continue
			}
			if !sameIDs(got, c.want) {
				t.Fatalf("%s: %v, want %v", c.q.Encode(), ids(got), ids(c.want))
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("%s: %+v differs from the unfiltered %+v", c.q.Encode(), got[i], c.want[i])
				}
			}
		}

		r := e.Get("/v1/balance_transactions/" + all[2].ID)
		var one txn
		r.JSON(t, &one)
		if r.Status != 200 || one != all[2] {
			t.Fatalf("retrieve: %d %s, want %+v", r.Status, r.Body, all[2])
		}

		// Another merchant, the live mode and forged ids see nothing.
		other, err := e.Main.Merchants.Create(context.Background(), merchants.CreateParams{Name: "Other"})
		if err != nil {
			t.Fatal(err)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/balance_transactions/" + all[2].ID, Key: other.SecretKeys[0]}); r.Status != 404 || r.ErrorCode() != "resource_missing" {
			t.Fatalf("other merchant retrieve: %d %s", r.Status, r.Body)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/balance_transactions", Key: other.SecretKeys[0]}); r.Status != 200 || strings.Contains(string(r.Body), "txn_") {
			t.Fatalf("other merchant list: %d %s", r.Status, r.Body)
		}
		forged := "txn_" + strings.Repeat("0", 25) + "1"
		for _, id := range []string{forged, "txn_x", "pi_123", all[2].ID[:len(all[2].ID)-1] + "Z"} {
			if r := e.Get("/v1/balance_transactions/" + id); r.Status != 404 {
				t.Fatalf("retrieve %s: %d %s", id, r.Status, r.Body)
			}
		}

		for _, c := range []struct{ query, param string }{
			{"type=refunds", "type"},
			{"currency=djf", "currency"},
			{"limit=101", "limit"},
			{"starting_after=pi_123", "starting_after"},
			{"ending_before=txn_bad", "ending_before"},
			{"created[gte]=yesterday", "created[gte]"},
			{"source=" + strings.Repeat("x", 256), "source"},
		} {
			r := e.Get("/v1/balance_transactions?" + c.query)
			if r.Status != 400 || !strings.Contains(string(r.Body), `"param":"`+c.param+`"`) {
				t.Fatalf("%s: %d %s, want 400 naming %s", c.query, r.Status, r.Body, c.param)
			}
		}
	})
}

// TestSandboxCompactionIsAnAdjustment: the sandbox purge folds old test-mode
// postings into one carry-forward; the merchant sees it as an adjustment and
// its balance transactions still sum to available.
func TestSandboxCompactionIsAnAdjustment(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		now := time.Now().UTC()
		e.Main.DB.SetClock(func() time.Time { return now.Add(-40 * 24 * time.Hour) })
		topup(t, e, "DJF", 5_000)
		pay(t, e, 1_200)
		payout(t, e, 200, "")
		e.Main.DB.SetClock(func() time.Time { return now })
		pay(t, e, 300)
		if err := e.Main.DB.InTx(ctx, func(tx *store.Tx) error {
			_, err := ledger.CompactTestMode(ctx, tx, now.Add(-30*24*time.Hour))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		all := listAll(t, e, nil, 2)
		if len(all) != 2 || all[0].Type != "adjustment" || all[0].AmountMinor != 6_000 || all[1].Type != "payment" {
			t.Fatalf("after the purge: %+v", all)
		}
		checkHistory(t, e, all)
		if adj := listAll(t, e, url.Values{"type": {"adjustment"}}, 10); len(adj) != 1 || adj[0] != all[0] {
			t.Fatalf("type=adjustment: %+v", adj)
		}
	}, noWorkers)
}

func ids(xs []txn) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.ID
	}
	return out
}

func sameIDs(a, b []txn) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}
