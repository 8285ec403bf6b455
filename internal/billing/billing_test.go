package billing

import (
	"context"
	"testing"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

const goodWallet = "+25377123456"

// TestYearOnAClock: a monthly subscription anchored on Jan 31 on wallet_c
// push, advanced a year a month at a time: 13 invoices (creation and 12
// period starts), period starts clamped and back to the 31st, each paid
// exactly once with its ledger credit.
func TestYearOnAClock(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		start := time.Date(2026, 1, 31, 8, 0, 0, 0, time.UTC)
		clk := e.clock(start)
		c := e.customer(&clk.ID, "wallet_c", goodWallet, nil)
		s := e.subscribe(c.ID, 1500, nil)
		if s.Status != Active || !s.CurrentPeriodEnd.Equal(time.Date(2026, 2, 28, 8, 0, 0, 0, time.UTC)) {
			t.Fatalf("new subscription: %s, period end %s", s.Status, s.CurrentPeriodEnd)
		}
		for m := 1; m <= 12; m++ {
			e.advance(clk, PeriodStart(start, Month, 1, m))
		}
		invs := e.invoices(s.ID)
		if len(invs) != 13 {
			t.Fatalf("%d invoices after a year, want 13", len(invs))
		}
		wantDays := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31}
		for i, v := range invs {
			if v.Status != Paid || v.AmountPaid != 1500 || v.PaymentIntent == nil || v.AttemptCount != 1 {
				t.Errorf("invoice %d: %s paid %d intent %v attempts %d", i, v.Status, v.AmountPaid, v.PaymentIntent, v.AttemptCount)
			}
			if v.PeriodStart.Day() != wantDays[i] {
				t.Errorf("invoice %d starts %s", i, v.PeriodStart)
			}
			if n := e.events(v.ID, EventInvoicePaid); n != 1 {
				t.Errorf("invoice %d: %d invoice.paid events", i, n)
			}
			if e.events(v.ID, EventInvoiceCreated) != 1 || e.events(v.ID, EventInvoiceFinalized) != 1 {
				t.Errorf("invoice %d: created/finalized events missing", i)
			}
		}
		if got := e.available(); got != 13*1500 {
			t.Errorf("available %d, want %d", got, 13*1500)
		}
		if got := e.sub(s.ID); got.Status != Active || got.LatestInvoice == nil || *got.LatestInvoice != invs[12].ID {
			t.Errorf("subscription after a year: %+v", got)
		}
		e.verifyLedger()
	})
}

// TestRetriesToUnpaid: an attempt refused by the wallet is retried 1, 3
// and 5 days later; after the last retry fails the subscription is unpaid
// and the invoice stays open. A later period paid brings it back to
// active.
func TestRetriesToUnpaid(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		clk := e.clock(start)
		// wallet_a's push flow, whose sandbox offers insufficient_funds:
		// every attempt is a real intent the wallet refuses.
		c := e.customer(&clk.ID, "wallet_a", providers.MagicMSISDN(providers.InsufficientFunds), nil)
		s := e.subscribe(c.ID, 2000, nil)
		inv := e.invoices(s.ID)[0]

		e.advance(clk, start) // the first attempt, at once
		v := e.invoices(s.ID)[0]
		if v.AttemptCount != 1 || v.NextPaymentAttempt == nil || !v.NextPaymentAttempt.Equal(start.Add(24*time.Hour)) {
			t.Fatalf("after the first attempt: count %d next %v", v.AttemptCount, v.NextPaymentAttempt)
		}
		if got := e.sub(s.ID).Status; got != PastDue {
			t.Fatalf("subscription %s after a failed attempt, want past_due", got)
		}
		e.advance(clk, start.Add(4*24*time.Hour)) // retries on day 1 and day 4
		if v = e.invoices(s.ID)[0]; v.AttemptCount != 3 || !v.NextPaymentAttempt.Equal(start.Add(9*24*time.Hour)) {
			t.Fatalf("after day 4: count %d next %v", v.AttemptCount, v.NextPaymentAttempt)
		}
		e.advance(clk, start.Add(10*24*time.Hour))
		v = e.invoices(s.ID)[0]
		if v.Status != Open || v.AttemptCount != 4 || v.NextPaymentAttempt != nil {
			t.Fatalf("after the last retry: %s count %d next %v", v.Status, v.AttemptCount, v.NextPaymentAttempt)
		}
		if got := e.sub(s.ID).Status; got != Unpaid {
			t.Fatalf("subscription %s after the last retry, want unpaid", got)
		}
		if n := e.events(inv.ID, EventInvoicePaymentFail); n != 4 {
			t.Errorf("%d invoice.payment_failed, want 4", n)
		}
		if n := e.count("SELECT COUNT(*) FROM payment_intents WHERE status = 'canceled' AND provider = 'wallet_a'"); n != 4 {
			t.Errorf("%d refused intents, want 4", n)
		}
		// The customer changes wallets; April's invoice is paid and the
		// subscription is active again, March's stays open.
		if _, err := e.svc.UpdateCustomer(context.Background(), store.NoClaim, e.p, c.ID, CustomerParams{DefaultPayment: &DefaultPayment{Provider: "wallet_c",
			CustomerMSISDN: ptr(goodWallet)}}); err != nil {
			t.Fatal(err)
		}
		e.advance(clk, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC))
		invs := e.invoices(s.ID)
		if len(invs) != 2 || invs[0].Status != Open || invs[1].Status != Paid {
			t.Fatalf("after April: %d invoices, %s, %s", len(invs), invs[0].Status, invs[len(invs)-1].Status)
		}
		if got := e.sub(s.ID).Status; got != Active {
			t.Errorf("subscription %s after April paid, want active", got)
		}
		if got := e.available(); got != 2000 {
			t.Errorf("available %d, want 2000", got)
		}
		e.verifyLedger()
	})
}

// TestTrialEnd: a 14-day trial opens no invoice; its end opens the first
// period, anchored there, and the subscription becomes active.
func TestTrialEnd(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		start := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
		clk := e.clock(start)
		c := e.customer(&clk.ID, "wallet_c", goodWallet, nil)
		s := e.subscribe(c.ID, 900, func(p *SubscriptionParams) { p.TrialDays = ptr(14) })
		end := start.AddDate(0, 0, 14)
		if s.Status != Trialing || s.TrialEnd == nil || !s.TrialEnd.Equal(end) || s.LatestInvoice != nil {
			t.Fatalf("trialing subscription: %+v", s)
		}
		e.advance(clk, end.Add(-time.Second))
		if n := len(e.invoices(s.ID)); n != 0 {
			t.Fatalf("%d invoices during the trial", n)
		}
		e.advance(clk, end)
		invs := e.invoices(s.ID)
		got := e.sub(s.ID)
		if len(invs) != 1 || invs[0].Status != Paid || !invs[0].PeriodStart.Equal(end) || !got.CurrentPeriodEnd.Equal(end.AddDate(0, 1, 0)) {
			t.Fatalf("after the trial: %d invoices, period end %s", len(invs), got.CurrentPeriodEnd)
		}
		if got.Status != Active {
			t.Errorf("status %s after the trial", got.Status)
		}
		e.verifyLedger()
	})
}

// TestProration: doubling the price half-way through a 30-day period puts
// a credit for the unused half of the old price and a charge for the
// remaining half of the new one on the next invoice; proration_behavior
// none adds nothing.
func TestProration(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		start := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
		clk := e.clock(start)
		c := e.customer(&clk.ID, "wallet_c", goodWallet, nil)
		s := e.subscribe(c.ID, 3000, nil)
		e.advance(clk, start.AddDate(0, 0, 15))
		up, err := e.svc.UpdateSubscription(context.Background(), store.NoClaim, e.p, s.ID, UpdateParams{Items: []ItemParams{{Description: "Fibre 500", AmountMinor: ptr(int64(6000))}}})
		if err != nil || up.Items[0].AmountMinor != 6000 {
			t.Fatalf("update: %+v %v", up, err)
		}
		e.advance(clk, start.AddDate(0, 1, 0))
		invs := e.invoices(s.ID)
		v := invs[1]
		if len(v.Lines) != 3 || v.AmountDue != 6000-1500+3000 {
			t.Fatalf("May's invoice: %d lines, due %d: %+v", len(v.Lines), v.AmountDue, v.Lines)
		}
		if !v.Lines[1].Proration || v.Lines[1].AmountMinor != -1500 || v.Lines[2].AmountMinor != 3000 {
			t.Errorf("proration lines: %+v", v.Lines[1:])
		}
		if _, err := e.svc.UpdateSubscription(context.Background(), store.NoClaim, e.p, s.ID, UpdateParams{Items: []ItemParams{{Description: "Fibre 100", AmountMinor: ptr(int64(3000))}},
			ProrationBehavior: ptr("none")}); err != nil {
			t.Fatal(err)
		}
		e.advance(clk, start.AddDate(0, 2, 0))
		if v := e.invoices(s.ID)[2]; len(v.Lines) != 1 || v.AmountDue != 3000 {
			t.Errorf("June's invoice after a change without proration: %+v", v.Lines)
		}
		e.verifyLedger()
	})
}

// TestCancel: cancel at period end ends the subscription at its period's
// end with no new invoice; cancel now ends it at once and stops retries.
func TestCancel(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		clk := e.clock(start)
		c := e.customer(&clk.ID, "wallet_c", goodWallet, nil)
		s := e.subscribe(c.ID, 1000, nil)
		got, err := e.svc.CancelSubscription(ctx, store.NoClaim, e.p, s.ID, CancelParams{AtPeriodEnd: ptr(true)})
		if err != nil || !got.CancelAtPeriodEnd || got.Status != Active {
			t.Fatalf("cancel at period end: %+v %v", got, err)
		}
		e.advance(clk, start.AddDate(0, 2, 0))
		got = e.sub(s.ID)
		if got.Status != Canceled || got.EndedAt == nil || !got.EndedAt.Equal(start.AddDate(0, 1, 0)) || len(e.invoices(s.ID)) != 1 {
			t.Fatalf("after the period end: %s ended %v, %d invoices", got.Status, got.EndedAt, len(e.invoices(s.ID)))
		}
		if e.events(s.ID, EventSubscriptionDeleted) != 1 {
			t.Error("no customer.subscription.deleted")
		}
		if _, err := e.svc.CancelSubscription(ctx, store.NoClaim, e.p, s.ID, CancelParams{}); !errs.IsCode(err, "invalid_state") {
			t.Errorf("cancel of a canceled subscription: %v", err)
		}

		bad := e.customer(&clk.ID, "wallet_a", providers.MagicMSISDN(providers.InsufficientFunds), nil)
		s2 := e.subscribe(bad.ID, 1000, nil)
		e.advance(clk, start.AddDate(0, 2, 1)) // the first attempt and a retry fail
		attempts := e.invoices(s2.ID)[0].AttemptCount
		if _, err := e.svc.CancelSubscription(ctx, store.NoClaim, e.p, s2.ID, CancelParams{}); err != nil {
			t.Fatal(err)
		}
		e.advance(clk, start.AddDate(0, 4, 0))
		v := e.invoices(s2.ID)
		if len(v) != 1 || v[0].Status != Open || v[0].AttemptCount != attempts || v[0].NextPaymentAttempt != nil {
			t.Errorf("a canceled subscription's invoice: %d invoices, %+v", len(v), v[0])
		}
		// Deleting the customer cancels what it has left.
		s3 := e.subscribe(c.ID, 500, nil)
		if _, err := e.svc.DeleteCustomer(ctx, store.NoClaim, e.p, c.ID); err != nil {
			t.Fatal(err)
		}
		if e.sub(s3.ID).Status != Canceled {
			t.Error("deleting the customer did not cancel its subscription")
		}
		if _, err := e.svc.GetCustomer(ctx, e.p, c.ID); !errs.IsCode(err, "resource_missing") {
			t.Errorf("deleted customer: %v", err)
		}
		e.verifyLedger()
	})
}

// TestOneOffInvoice: draft → open → paid through the default payment;
// void and mark_uncollectible follow the transition table.
func TestOneOffInvoice(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		c := e.customer(nil, "wallet_c", providers.MagicMSISDN(providers.Success), nil)
		v, err := e.svc.CreateInvoice(ctx, store.NoClaim, e.p, InvoiceParams{Customer: c.ID, Currency: "DJF",
			Lines: []ItemParams{{Description: "Installation", AmountMinor: ptr(int64(5000))}, {Description: "Router", AmountMinor: ptr(int64(2500)), Quantity: ptr(int64(2))}}})
		if err != nil || v.Status != Draft || v.AmountDue != 10000 || v.HostedInvoiceURL != nil {
			t.Fatalf("draft: %+v %v", v, err)
		}
		if _, err := e.svc.VoidInvoice(ctx, store.NoClaim, e.p, v.ID); !errs.IsCode(err, "invalid_state") {
			t.Errorf("void of a draft: %v", err)
		}
		if v, err = e.svc.FinalizeInvoice(ctx, store.NoClaim, e.p, v.ID); err != nil || v.Status != Open || v.HostedInvoiceURL == nil {
			t.Fatalf("finalize: %+v %v", v, err)
		}
		if _, err := e.svc.FinalizeInvoice(ctx, store.NoClaim, e.p, v.ID); !errs.IsCode(err, "invalid_state") {
			t.Errorf("second finalize: %v", err)
		}
		if v, err = e.svc.PayInvoice(ctx, store.NoClaim, e.p, v.ID, PayParams{}); err != nil || v.Status != Paid || v.AmountPaid != 10000 {
			t.Fatalf("pay: %+v %v", v, err)
		}
		if _, err := e.svc.PayInvoice(ctx, store.NoClaim, e.p, v.ID, PayParams{}); !errs.IsCode(err, "invalid_state") {
			t.Errorf("second pay: %v", err)
		}
		if e.events(v.ID, EventInvoicePaid) != 1 || e.available() != 10000 {
			t.Errorf("invoice.paid %d, available %d", e.events(v.ID, EventInvoicePaid), e.available())
		}

		w, _ := e.svc.CreateInvoice(ctx, store.NoClaim, e.p, InvoiceParams{Customer: c.ID, Currency: "DJF", Lines: []ItemParams{{Description: "Repair", AmountMinor: ptr(int64(700))}},
			CollectionMethod: ptr(SendInvoice), DaysUntilDue: ptr(7)})
		w, err = e.svc.FinalizeInvoice(ctx, store.NoClaim, e.p, w.ID)
		if err != nil || w.DueDate == nil || w.NextPaymentAttempt != nil {
			t.Fatalf("send_invoice finalized: %+v %v", w, err)
		}
		if w, err = e.svc.MarkUncollectible(ctx, store.NoClaim, e.p, w.ID); err != nil || w.Status != Uncollectible {
			t.Fatalf("mark_uncollectible: %+v %v", w, err)
		}
		if w, err = e.svc.VoidInvoice(ctx, store.NoClaim, e.p, w.ID); err != nil || w.Status != Void || e.events(w.ID, EventInvoiceVoided) != 1 {
			t.Fatalf("void: %+v %v", w, err)
		}
		if _, err := e.svc.PayInvoice(ctx, store.NoClaim, e.p, w.ID, PayParams{}); !errs.IsCode(err, "invalid_state") {
			t.Errorf("pay of a void invoice: %v", err)
		}
		e.verifyLedger()
	})
}

// TestHostedCollection: an OTP rail or no default payment is never
// charged automatically: the invoice waits on its hosted page.
func TestHostedCollection(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		start := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
		clk := e.clock(start)
		for _, c := range []Customer{
			e.customer(&clk.ID, "bank_a", "+25377123456", nil),
			e.customer(&clk.ID, "wallet_c", goodWallet, map[string]string{"auth_mode": "OTP"}),
			e.customer(&clk.ID, "", "", nil),
		} {
			s := e.subscribe(c.ID, 1000, nil)
			e.advance(clk, time.Unix(mustClock(e, clk.ID).FrozenTime, 0).Add(time.Hour))
			v := e.invoices(s.ID)[0]
			if v.Status != Open || v.AttemptCount != 0 || v.NextPaymentAttempt != nil || v.HostedInvoiceURL == nil || v.PaymentIntent != nil {
				t.Errorf("hosted-only invoice: %+v", v)
			}
		}
		if e.count("SELECT COUNT(*) FROM payment_intents") != 0 {
			t.Error("an intent was created for a hosted-only invoice")
		}
	})
}

func mustClock(e *env, id string) TestClock {
	c, err := e.svc.GetClock(context.Background(), e.p, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// TestClockRules: live mode is refused, a clock never goes backwards, and
// one advance at a time.
func TestClockRules(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		live := e.p
		live.Livemode = true
		if _, err := e.svc.CreateClock(ctx, store.NoClaim, live, ClockParams{FrozenTime: ptr(int64(1780000000))}); !errs.IsCode(err, "permission_denied") {
			t.Errorf("live clock: %v", err)
		}
		clk := e.clock(time.Unix(1780000000, 0))
		if _, err := e.svc.AdvanceClock(ctx, store.NoClaim, e.p, clk.ID, ClockParams{FrozenTime: ptr(int64(1779999999))}); errs.As(err) == nil || errs.As(err).Param != "frozen_time" {
			t.Errorf("backwards: %v", err)
		}
		got, err := e.svc.AdvanceClock(ctx, store.NoClaim, e.p, clk.ID, ClockParams{FrozenTime: ptr(int64(1780000600))})
		if err != nil || got.Status != ClockAdvancing {
			t.Fatalf("advance: %+v %v", got, err)
		}
		if _, err := e.svc.AdvanceClock(ctx, store.NoClaim, e.p, clk.ID, ClockParams{FrozenTime: ptr(int64(1780001200))}); !errs.IsCode(err, "invalid_state") {
			t.Errorf("advance while advancing: %v", err)
		}
		if e.count("SELECT COUNT(*) FROM jobs WHERE kind = ?", AdvanceJob) < 1 {
			t.Error("no advance job queued")
		}
	})
}
