package reports_test

import (
	"context"
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/reports"
)

// world is what the property test's operations share.
type world struct {
	e    *apptest.Env
	rng  *rand.Rand
	now  time.Time
	paid []paidIntent    // succeeded intents, for refunds
	days map[string]bool // UTC days with postings
}

type paidIntent struct {
	id, currency     string
	amount, refunded int64
}

// operation is one step of a random sequence. To cover a new kind of
// movement, add an entry to operations.
type operation struct {
	name string
	run  func(t *testing.T, w *world)
}

var operations = []operation{
	{"topup", func(t *testing.T, w *world) {
		topup(t, w.e, []string{"DJF", "USD"}[w.rng.IntN(2)], int64(1+w.rng.IntN(20_000)))
	}},
	{"payment", func(t *testing.T, w *world) {
		amount := int64(1 + w.rng.IntN(9_000))
		w.paid = append(w.paid, paidIntent{id: pay(t, w.e, amount), currency: "DJF", amount: amount})
	}},
	{"card_present", func(t *testing.T, w *world) {
		amount := int64(1 + w.rng.IntN(5_000))
		outlet := []string{"", "shop-1", "shop-2"}[w.rng.IntN(3)]
		w.paid = append(w.paid, paidIntent{id: cardPresent(t, w.e, amount, "USD", outlet), currency: "USD", amount: amount})
	}},
	{"payout", func(t *testing.T, w *world) {
		if a := available(t, w.e)["DJF"]; a > 0 {
			payout(t, w.e, 1+w.rng.Int64N(a), "")
		}
	}},
	{"payout_failed", func(t *testing.T, w *world) {
		if a := available(t, w.e)["DJF"]; a > 0 {
			payout(t, w.e, 1+w.rng.Int64N(a), "insufficient_funds")
		}
	}},
	// A refund through POST /v1/refunds: part of what is left of a paid
	// intent, within available; one in three is refused by the sandbox
	// (account_closed), which gives its amount back.
	{"refund", func(t *testing.T, w *world) {
		if len(w.paid) == 0 {
			return
		}
		i := w.rng.IntN(len(w.paid))
		pi := w.paid[i]
		amount := min(pi.amount-pi.refunded, available(t, w.e)[pi.currency])
		if amount <= 0 {
			return
		}
		amount = 1 + w.rng.Int64N(amount)
		h := map[string]string{"Idempotency-Key": idemKey()}
		failed := w.rng.IntN(3) == 0
		if failed {
			h["X-Service-Scenario"] = "account_closed"
		}
		r := w.e.Do(apptest.Request{Method: "POST", Path: "/v1/refunds", Key: w.e.SK, Headers: h,
			Body: map[string]any{"payment_intent": pi.id, "amount_minor": amount}})
		if r.Status != 201 {
			t.Fatalf("refund %d of %s: %d %s", amount, pi.id, r.Status, r.Body)
		}
		if got, want := r.Map(t)["status"], map[bool]string{false: "succeeded", true: "failed"}[failed]; got != want {
			t.Fatalf("refund status %v, want %s", got, want)
		}
		if !failed {
			w.paid[i].refunded += amount
		}
	}},
}

// TestBalanceTransactionsProperty: random sequences of payments, payouts
// (paid and refused), top-ups and refunds (succeeded and failed), spread over
// several days, with balance checkpoints written now and then, keep
// every invariant: the balance transactions of each currency sum to
// available and chain through balance_after_minor, the ledger verifies, and
// every day's settlement report, in any time zone, sums per currency to that
// day's payment, refund and refund_failure balance transactions.
func TestBalanceTransactionsProperty(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		w := &world{e: e, rng: rand.New(rand.NewPCG(seed, 13)), now: time.Date(2026, 6, 1, 20, 0, 0, 0, time.UTC),
			days: map[string]bool{}}
		w.setClock()
		const steps = 40
		for i := 0; i < steps; i++ {
			op := operations[w.rng.IntN(len(operations))]
			if i == 0 {
				op = operations[0] // start with money to move
			}
			op.run(t, w)
			w.days[w.now.Format(time.DateOnly)] = true
			w.now = w.now.Add(time.Duration(w.rng.IntN(9*60)) * time.Minute)
			w.setClock()
			if i%10 == 9 {
				checkHistory(t, e, listAll(t, e, nil, 1+w.rng.IntN(20)))
				// Checkpoints every few entries, as the background job
				// writes them; later pages start from them.
				if _, err := ledger.WriteCheckpoints(context.Background(), e.Main.DB, 1+w.rng.IntN(4), time.Duration(w.rng.IntN(3))*time.Hour); err != nil {
					t.Fatal(err)
				}
			}
		}
		checkHistory(t, e, listAll(t, e, nil, 100))
		svc := e.Main.Reports()
		p := auth.Principal{ID: "key_test", MerchantID: e.Merchant.MerchantID}
		zones := []string{"UTC", "Africa/Djibouti", "Africa/Addis_Ababa", "America/Los_Angeles", "Pacific/Kiritimati", "Asia/Kathmandu"}
		for day := range w.days {
			for _, d := range []string{day, shiftDay(day, 1)} {
				q := url.Values{"date": {d}, "timezone": {zones[w.rng.IntN(len(zones))]}}
				sp, err := reports.ParseSettlementQuery(q)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := svc.Settlement(context.Background(), p, sp)
				if err != nil {
					t.Fatal(err)
				}
				net, moves := netByCurrency(rep.Rows), dayMovements(t, e, sp)
				for cur := range merge(net, moves) {
					if net[cur] != moves[cur] {
						t.Fatalf("%s in %s, %s: rows net %d, balance transactions %d", d, q.Get("timezone"), cur, net[cur], moves[cur])
					}
				}
			}
		}
	}, noWorkers)
}

func shiftDay(day string, n int) string {
	d, _ := time.Parse(time.DateOnly, day)
	return d.AddDate(0, 0, n).Format(time.DateOnly)
}

// setClock stops payd's clock at w.now (background workers read it too, so
// the clock holds a copy, never w.now itself).
func (w *world) setClock() {
	at := w.now
	w.e.Main.DB.SetClock(func() time.Time { return at })
}
