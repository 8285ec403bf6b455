package billing

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// The metadata billing puts on the payment intents it creates, linking each
// back to its invoice.
const (
	MetaInvoice = "invoice"
	// MetaAttempt is the automatic attempt's number, or "manual" (POST
	// /v1/invoices/{id}/pay) or "hosted" (the hosted invoice page).
	MetaAttempt = "invoice_attempt"
)

// pushRail reports whether a customer's default payment needs only the
// customer's approval in the wallet app: only then does billing charge
// automatically; OTP and redirect rails go through the hosted page.
func pushRail(c *Customer) bool {
	if c == nil || c.DefaultPayment == nil {
		return false
	}
	flow, err := payments.ChooseFlow(c.DefaultPayment.Provider, c.DefaultPayment.Metadata)
	return err == nil && flow == providers.FlowPush
}

// attemptParams is the payment intent of an invoice's attempt with the
// customer's default payment. On a test clock the sandbox's push approval,
// which arrives PAYD_SANDBOX_PUSH_DELAY after creation in real time, is
// given at once (the clock's jumps are far longer than that delay), unless
// the customer's number is a magic one, whose scenario applies.
func attemptParams(inv *Invoice, c *Customer, attempt string) payments.CreateParams {
	dp := c.DefaultPayment
	amt := inv.AmountDue - inv.AmountPaid
	md := map[string]string{}
	for k, v := range dp.Metadata {
		md[k] = v
	}
	md[MetaInvoice], md[MetaAttempt] = inv.ID, attempt
	desc := "Invoice " + inv.ID
	in := payments.CreateParams{AmountMinor: &amt, Currency: inv.Currency, Provider: dp.Provider, CustomerMSISDN: dp.CustomerMSISDN,
		Description: &desc, Metadata: md, InvoiceID: inv.ID}
	if inv.TestClock != nil && pushRail(c) {
		magic := false
		if dp.CustomerMSISDN != nil {
			_, magic = providers.ScenarioFromMSISDN(*dp.CustomerMSISDN)
		}
		if !magic {
			in.Scenario = providers.Success.Name
		}
	}
	return in
}

// attemptAll makes the claimed attempts. Their customers are read in one
// query, and the payment intents are created with payments.CreateMany, in
// up to s.Workers batches at once: each batch writes its intents, their
// ledger credits, invoice.paid and the other consequences in one
// transaction. An attempt that cannot be made (the default payment went
// away or is no longer a push rail) drops its claim: the invoice waits for
// its hosted page. An attempt payments refuses before any intent exists
// (the default payment no longer fits the currency, say) fails here. Other
// errors leave the claim to expire; the attempt is made again then.
func (s *Service) attemptAll(ctx context.Context, invs []*Invoice) error {
	if len(invs) == 0 {
		return nil
	}
	ids := make([]string, len(invs))
	for i, v := range invs {
		ids[i] = v.Customer
	}
	customers, err := customersByID(ctx, s.db, ids, false)
	if err != nil {
		return err
	}
	var drop, charge []*Invoice
	for _, v := range invs {
		c := customers[v.Customer]
		if c == nil || c.MerchantID != v.MerchantID || c.Livemode != v.Livemode || !pushRail(c) {
			drop = append(drop, v)
		} else {
			charge = append(charge, v)
		}
	}
	if err := s.dropClaims(ctx, drop); err != nil {
		return err
	}
	workers := max(s.Workers, 1)
	size := (len(charge) + workers - 1) / workers
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for start := 0; start < len(charge); start += size {
		part := charge[start:min(start+size, len(charge))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.attemptBatch(ctx, part, customers); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// attemptBatch creates the intents of claimed attempts together and
// handles each answer as attempt did alone.
func (s *Service) attemptBatch(ctx context.Context, invs []*Invoice, customers map[string]*Customer) error {
	in := make([]payments.NewIntent, len(invs))
	for i, v := range invs {
		in[i] = payments.NewIntent{Principal: principal(v.MerchantID, v.Livemode),
			Params: attemptParams(v, customers[v.Customer], strconv.Itoa(v.AttemptCount))}
		if v.TestClock != nil && v.attemptDue != nil {
			// Made by the clock's advance: the intent and its events show
			// the attempt's time on the clock.
			at := v.attemptDue.UTC().Truncate(time.Second)
			in[i].OnClock = &at
		}
	}
	created, err := s.pay.CreateMany(ctx, in)
	if err != nil {
		return err
	}
	var first error
	for i, c := range created {
		if c.Err == nil {
			continue
		}
		e := errs.As(c.Err)
		switch {
		case e != nil && e.Extra["payment_intent"] != nil:
			// an intent exists and its outcome was recorded
		case e != nil && e.Kind == errs.KindInvalid:
			if err := s.refuseAttempt(ctx, invs[i]); err != nil && first == nil {
				first = err
			}
		default:
			s.log.Warn("billing attempt", "invoice", invs[i].ID, "err", c.Err)
			if first == nil {
				first = c.Err
			}
		}
	}
	return first
}

// refuseAttempt fails an attempt payments refused before any intent
// existed.
func (s *Service) refuseAttempt(ctx context.Context, inv *Invoice) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		v, err := loadInvoice(ctx, tx, inv.MerchantID, inv.Livemode, inv.ID)
		if err != nil {
			return err
		}
		err = s.failAttempt(ctx, tx, v, nil, strconv.Itoa(inv.AttemptCount))
		if errors.Is(err, errLostRace) {
			return nil
		}
		return err
	})
}

// dropClaims ends claimed attempts that cannot be made, in one
// transaction.
func (s *Service) dropClaims(ctx context.Context, invs []*Invoice) error {
	if len(invs) == 0 {
		return nil
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		for _, inv := range invs {
			if _, err := tx.Exec(ctx, "UPDATE invoices SET attempt_claimed_until = NULL, updated_at = ? WHERE id = ? AND status = 'open' AND attempt_count = ?",
				store.Micros(tx.Now()), inv.ID, inv.AttemptCount); err != nil {
				return err
			}
		}
		return nil
	})
}

// onIntentStatus is payments' status hook: inside the transaction that
// gives a billing intent its status, it writes the consequence on the
// invoice. A success pays the invoice (invoice.paid, exactly once: the
// open → paid compare-and-set); a refusal of an automatic attempt fails it
// (invoice.payment_failed, next retry or unpaid); anything else links the
// intent to the invoice.
//
// Only an intent billing created for the invoice (pi.InvoiceID, which no
// request can set) counts: metadata["invoice"] is the merchant's to write,
// and a merchant's own 1 DJF intent carrying it pays nothing.
func (s *Service) onIntentStatus(ctx context.Context, tx *store.Tx, pi payments.Intent) error {
	id := pi.InvoiceID
	if id == "" {
		return nil
	}
	for range 5 {
		v, err := loadInvoice(ctx, tx, pi.MerchantID, pi.Livemode, id)
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		switch pi.Status {
		case payments.Succeeded:
			err = s.markPaid(ctx, tx, v, pi)
		case payments.Canceled:
			err = s.failAttempt(ctx, tx, v, &pi, pi.Metadata[MetaAttempt])
		default:
			err = s.link(ctx, tx, v, pi)
		}
		if !errors.Is(err, errLostRace) {
			return err
		}
	}
	return errs.InvalidState("invoice %s kept changing while a payment was recorded on it", id)
}

// isCurrentAttempt reports whether attempt names v's automatic attempt in
// flight.
func isCurrentAttempt(v *Invoice, attempt string) bool {
	return attempt == strconv.Itoa(v.AttemptCount) && v.attemptDue != nil
}

// link records a pending intent on an open invoice; for the automatic
// attempt in flight it also ends the claim (the intent now carries it).
func (s *Service) link(ctx context.Context, tx *store.Tx, v *Invoice, pi payments.Intent) error {
	if v.Status != Open {
		return nil
	}
	v.PaymentIntent = &pi.ID
	if isCurrentAttempt(v, pi.Metadata[MetaAttempt]) {
		v.attemptClaimedUntil = nil
	}
	return updateInvoice(ctx, tx, v, "status = 'open'")
}

// markPaid pays v with the succeeded intent pi: open or uncollectible →
// paid, invoice.paid, and the subscription back to active when this was
// its latest invoice. An invoice paid or voided already is left alone (the
// money is still the merchant's: it was credited with the intent).
func (s *Service) markPaid(ctx context.Context, tx *store.Tx, v *Invoice, pi payments.Intent) error {
	if !invAllowed(payInvoice, v.Status) {
		s.log.Warn("billing: a payment succeeded for an invoice that is no longer payable", "invoice", v.ID, "status", v.Status, "payment_intent", pi.ID)
		return nil
	}
	total, err := money.Add(v.AmountPaid, pi.AmountCapturedMinor)
	if err != nil {
		return err
	}
	if !coversDue(v, pi) {
		// A partial capture counts towards the invoice, which stays open
		// for the rest: an automatic attempt's remainder is retried as a
		// refused attempt is.
		v.AmountPaid = total
		if v.Status == Open {
			return s.failAttempt(ctx, tx, v, &pi, pi.Metadata[MetaAttempt])
		}
		v.PaymentIntent = &pi.ID
		return updateInvoice(ctx, tx, v, "status = ?", string(v.Status))
	}
	at, err := s.stepTime(ctx, tx, v, pi.Metadata[MetaAttempt])
	if err != nil {
		return err
	}
	onClock := attemptOnClock(v, pi.Metadata[MetaAttempt])
	v.AmountPaid, v.PaidAt, v.PaymentIntent, v.NextPaymentAttempt, v.attemptClaimedUntil = total, &at, &pi.ID, nil, nil
	if err := moveInvoice(ctx, tx, v, payInvoice); err != nil {
		return err
	}
	if err := emitOnClock(ctx, tx, onClock, v.MerchantID, v.Livemode, EventInvoicePaid, "invoice", v.ID, s.view(v)); err != nil {
		return err
	}
	if v.Subscription == nil {
		return nil
	}
	return s.recoverMany(ctx, tx, []*Invoice{v}, []*time.Time{onClock})
}

// attemptOnClock is the time on v's test clock of the automatic attempt
// named attempt when it is the one in flight, a step of the billing run
// (stepOnClock): the events of its outcome show it. A manual or hosted
// payment is a request and keeps the real time, as its payment intent
// does; so does everything of an invoice without a clock (nil).
func attemptOnClock(v *Invoice, attempt string) *time.Time {
	if !isCurrentAttempt(v, attempt) {
		return nil
	}
	return stepOnClock(v.TestClock, *v.attemptDue)
}

// coversDue reports whether pi's capture pays what v still owes: an
// invoice is paid only when the captures of its own intents add up to its
// amount due.
func coversDue(v *Invoice, pi payments.Intent) bool {
	return pi.AmountCapturedMinor > 0 && pi.AmountCapturedMinor >= v.AmountDue-v.AmountPaid
}

// stepTime is when a payment outcome happened on the invoice's time line:
// the automatic attempt's due time, else the customer's clock, else now.
func (s *Service) stepTime(ctx context.Context, tx *store.Tx, v *Invoice, attempt string) (time.Time, error) {
	if isCurrentAttempt(v, attempt) {
		return *v.attemptDue, nil
	}
	t, err := nowFor(ctx, tx, v.MerchantID, v.Livemode, v.TestClock, tx.Now())
	return t.Truncate(time.Second), err
}

// failAttempt records a refused payment on v (pi nil: refused before an
// intent existed). The automatic attempt in flight schedules the next retry
// (PAYD_BILLING_RETRY_SCHEDULE, counted from the failed attempt's due
// time) and makes the subscription past_due, or after the last retry
// unpaid, leaving the invoice open. A refused manual or hosted payment
// only emits invoice.payment_failed.
func (s *Service) failAttempt(ctx context.Context, tx *store.Tx, v *Invoice, pi *payments.Intent, attempt string) error {
	if v.Status != Open {
		return nil
	}
	if pi != nil {
		v.PaymentIntent = &pi.ID
	}
	var sub *Subscription
	var err error
	if v.Subscription != nil {
		if sub, err = loadSub(ctx, tx, v.MerchantID, v.Livemode, *v.Subscription); err != nil {
			return err
		}
	}
	onClock := attemptOnClock(v, attempt)
	var to *subTransition
	if isCurrentAttempt(v, attempt) {
		v.attemptClaimedUntil = nil
		k := v.AttemptCount
		if k <= len(s.schedule) && (sub == nil || sub.Status != Canceled) {
			next := v.attemptDue.Add(s.schedule[k-1])
			v.NextPaymentAttempt, to = &next, &fallPastDue
		} else {
			v.NextPaymentAttempt, to = nil, &giveUp
		}
		err = updateInvoice(ctx, tx, v, "status = 'open' AND attempt_count = ?", k)
	} else {
		err = updateInvoice(ctx, tx, v, "status = 'open'")
	}
	if err != nil {
		return err
	}
	if err := emitOnClock(ctx, tx, onClock, v.MerchantID, v.Livemode, EventInvoicePaymentFail, "invoice", v.ID, s.view(v)); err != nil {
		return err
	}
	if sub == nil || to == nil || !subAllowed(*to, sub.Status) || sub.Status == to.to {
		return nil
	}
	return s.moveAndEmit(ctx, tx, sub, *to, onClock)
}

// moveAndEmit moves sub by t and emits customer.subscription.updated, at
// onClock on the subscription's test clock when a step of the billing run
// moves it (nil: the real time).
func (s *Service) moveAndEmit(ctx context.Context, tx *store.Tx, sub *Subscription, t subTransition, onClock *time.Time) error {
	from := sub.Status
	sub.Status = t.to
	if err := moveSub(ctx, tx, sub, t, from); err != nil {
		return err
	}
	return emitOnClock(ctx, tx, onClock, sub.MerchantID, sub.Livemode, EventSubscriptionUpdated, "subscription", sub.ID, sub)
}

// PayParams is the body of POST /v1/invoices/{id}/pay (none yet).
type PayParams struct{}

// PayInvoice charges an open or uncollectible invoice now with the
// customer's default payment, whatever its rail, outside the retry
// schedule. The answer is the invoice as the intent's creation left it:
// paid at once, or open with payment_intent set while the intent waits for
// the customer (push approval, OTP confirm, or its redirect page, which
// returns to the hosted invoice page). A refusal is 402 payment_failed
// naming the intent; the invoice stays as it was, with
// invoice.payment_failed recorded.
func (s *Service) PayInvoice(ctx context.Context, cl store.Claim, p auth.Principal, id string, _ PayParams) (Invoice, error) {
	work := s.db.Within(cl)
	v, err := loadInvoice(ctx, work, p.MerchantID, p.Livemode, id)
	if err != nil {
		return Invoice{}, err
	}
	if !invAllowed(payInvoice, v.Status) {
		return Invoice{}, errs.InvalidState("invoice %s is %s; only an open or uncollectible invoice can be paid", v.ID, v.Status)
	}
	c, err := loadCustomer(ctx, work, p.MerchantID, p.Livemode, v.Customer)
	if err != nil && !isNotFound(err) {
		return Invoice{}, err
	}
	if c == nil || c.DefaultPayment == nil {
		return Invoice{}, errs.Invalid("customer", "default_payment_missing",
			"the invoice's customer has no default_payment; share hosted_invoice_url so the customer pays there")
	}
	in := attemptParams(v, c, "manual")
	ret := *s.view(v).HostedInvoiceURL
	in.ReturnURL = &ret
	pi, err := s.pay.Create(ctx, cl, p, in)
	if err != nil && (errs.As(err) == nil || errs.As(err).Extra["payment_intent"] == nil) {
		return Invoice{}, err
	}
	if pi.Status == payments.Canceled {
		return Invoice{}, &errs.Error{Kind: errs.KindPaymentRequired, Code: "payment_failed",
			Message: "the payment was refused; the invoice stays " + string(v.Status), Extra: map[string]any{"payment_intent": pi.ID, "invoice": v.ID}}
	}
	// The invoice as the intent's transaction left it, read in the
	// request's unit of work, which holds that transaction.
	if v, err = loadInvoice(ctx, work, p.MerchantID, p.Livemode, id); err != nil {
		return Invoice{}, err
	}
	return s.view(v), nil
}
