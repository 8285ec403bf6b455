package billing

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/sandbox"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
)

// env is a billing service over a fresh database with one merchant, the
// sandbox as its payment rail, and the default retry schedule.
type env struct {
	t   testing.TB
	db  *store.DB
	svc *Service
	pay *payments.Service
	p   auth.Principal
}

func newEnv(t testing.TB, db *store.DB) *env {
	t.Helper()
	box, err := secretbox.New(strings.Repeat("5a", 32))
	if err != nil {
		t.Fatal(err)
	}
	m, err := merchants.NewService(db, box).Create(context.Background(), merchants.CreateParams{Name: "Djibouti Fibre"})
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry()
	reg.UseSandboxPayments(sandbox.New(sandbox.Config{PublicURL: "http://payd.test", PushDelay: 50 * time.Millisecond, TimeoutDelay: time.Millisecond}))
	pay := payments.NewService(payments.Config{DB: db, Providers: reg})
	sched, _ := ParseRetrySchedule("1d,3d,5d")
	svc := NewService(Config{DB: db, Payments: pay, PublicURL: func() string { return "http://payd.test" }, RetrySchedule: sched})
	return &env{t: t, db: db, svc: svc, pay: pay, p: auth.Principal{ID: "key_test", MerchantID: m.MerchantID, Kind: "secret"}}
}

func ptr[T any](v T) *T { return &v }

func (e *env) clock(at time.Time) TestClock {
	e.t.Helper()
	c, err := e.svc.CreateClock(context.Background(), store.NoClaim, e.p, ClockParams{FrozenTime: ptr(at.Unix())})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// advance moves a clock and runs the advance to its end, as the job does.
func (e *env) advance(c TestClock, to time.Time) {
	e.t.Helper()
	if _, err := e.svc.AdvanceClock(context.Background(), store.NoClaim, e.p, c.ID, ClockParams{FrozenTime: ptr(to.Unix())}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.svc.RunAdvance(context.Background(), c.ID); err != nil {
		e.t.Fatal(err)
	}
	// The set-based path must have worked: a failed batch of intents falls
	// back to one at a time, which gives the same outcome.
	if n := e.pay.BatchFallbacks(); n != 0 {
		e.t.Fatalf("%d batches of payment intents fell back to one at a time", n)
	}
	got, err := e.svc.GetClock(context.Background(), e.p, c.ID)
	if err != nil || got.Status != ClockReady || got.FrozenTime != to.Unix() {
		e.t.Fatalf("clock after advance: %+v, %v", got, err)
	}
}

// customer makes a customer paying by default with provider and number.
func (e *env) customer(clock *string, provider, msisdn string, md map[string]string) Customer {
	e.t.Helper()
	in := CustomerParams{Name: ptr("Amina Said"), TestClock: clock}
	if provider != "" {
		in.DefaultPayment = &DefaultPayment{Provider: provider, Metadata: md}
		if msisdn != "" {
			in.DefaultPayment.CustomerMSISDN = &msisdn
		}
	}
	c, err := e.svc.CreateCustomer(context.Background(), store.NoClaim, e.p, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) subscribe(cus string, amount int64, mod func(*SubscriptionParams)) Subscription {
	e.t.Helper()
	in := SubscriptionParams{Customer: cus, Currency: "DJF", Interval: "month",
		Items: []ItemParams{{Description: "Fibre 100", AmountMinor: ptr(amount)}}}
	if mod != nil {
		mod(&in)
	}
	s, err := e.svc.CreateSubscription(context.Background(), store.NoClaim, e.p, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) sub(id string) Subscription {
	e.t.Helper()
	s, err := e.svc.GetSubscription(context.Background(), e.p, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// invoices returns a subscription's invoices, oldest first.
func (e *env) invoices(sub string) []Invoice {
	e.t.Helper()
	rows, err := e.db.Query(context.Background(), "SELECT "+invColumns+" FROM invoices WHERE subscription_id = ? ORDER BY period_start", sub)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []Invoice
	for rows.Next() {
		v, err := scanInvoice(rows)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, e.svc.view(v))
	}
	return out
}

// count runs a COUNT(*) query.
func (e *env) count(q string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// events counts the events of a type about an object.
func (e *env) events(objectID, typ string) int {
	return e.count("SELECT COUNT(*) FROM events WHERE object_id = ? AND type = ?", objectID, typ)
}

func (e *env) verifyLedger() {
	e.t.Helper()
	if err := ledger.Verify(context.Background(), e.db); err != nil {
		e.t.Fatalf("ledger: %v", err)
	}
}

// available is the merchant's available test-mode balance in DJF.
func (e *env) available() int64 {
	e.t.Helper()
	bs, err := ledger.Balances(context.Background(), e.db, e.p.MerchantID, false)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, b := range bs {
		if b.Currency == "DJF" {
			return b.Available
		}
	}
	return 0
}
