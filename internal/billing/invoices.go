package billing

import (
	"context"
	"net/url"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
)

// HostedPath is where hosted invoice pages are served; the invoice id and
// ?t=<token> follow.
const HostedPath = "/billing/invoices/"

// view is the invoice as the API shows it: with its hosted page's URL once
// it is finalized.
func (s *Service) view(v *Invoice) Invoice {
	out := *v
	if out.Status != Draft {
		u := s.url() + HostedPath + url.PathEscape(v.ID) + "?t=" + url.QueryEscape(s.invoiceLinkToken(v))
		out.HostedInvoiceURL = &u
	}
	if out.Lines == nil {
		out.Lines = []Line{}
	}
	return out
}

// nextPeriod opens the period that starts at sub's current_period_end: it
// moves sub to it (trialing becomes active, pending prorations are taken)
// and returns the period's invoice, finalized, to be inserted in the same
// transaction as sub's compare-and-set.
func (s *Service) nextPeriod(sub *Subscription, c *Customer, reason string) *Invoice {
	n := sub.periodNumber
	start := PeriodStart(sub.BillingCycleAnchor, sub.Interval, sub.IntervalCount, n)
	end := PeriodStart(sub.BillingCycleAnchor, sub.Interval, sub.IntervalCount, n+1)
	lines := make([]Line, 0, len(sub.Items)+len(sub.pending))
	for _, it := range sub.Items {
		ps, pe := start, end
		amt, _ := mul(it.AmountMinor, it.Quantity) // checked when the item was set
		lines = append(lines, Line{Description: it.Description, UnitAmountMinor: it.AmountMinor, Quantity: it.Quantity, AmountMinor: amt,
			PeriodStart: &ps, PeriodEnd: &pe})
	}
	lines = append(lines, sub.pending...)
	subID := sub.ID
	inv := &Invoice{ID: ids.New("in_"), Object: "invoice", Customer: sub.Customer, Subscription: &subID, Currency: sub.Currency,
		CollectionMethod: sub.CollectionMethod, BillingReason: reason, Lines: lines, PeriodStart: &start, PeriodEnd: &end,
		TestClock: sub.TestClock, Livemode: sub.Livemode, MerchantID: sub.MerchantID, daysUntilDue: sub.DaysUntilDue,
		EffectiveAt: start}
	s.open(inv, c, start)
	if sub.Status == Trialing {
		sub.Status = Active
	}
	sub.periodNumber, sub.CurrentPeriodStart, sub.CurrentPeriodEnd, sub.pending = n+1, start, end, nil
	sub.LatestInvoice = &inv.ID
	return inv
}

// open finalizes inv at at: its total is due (a credit beyond it is not
// carried over), a zero total is paid at once, and collection is decided:
// an automatic attempt now when the customer's default payment is a push
// rail and the invoice is charge_automatically; otherwise the hosted page
// only, due days_until_due after finalizing for send_invoice.
func (s *Service) open(inv *Invoice, c *Customer, at time.Time) {
	var total int64
	for _, l := range inv.Lines {
		total += l.AmountMinor // each line bounded; at most 20 items plus prorations of them
	}
	inv.AmountDue = max(total, 0)
	inv.Status, inv.FinalizedAt = Open, &at
	if inv.AmountDue == 0 {
		inv.Status, inv.PaidAt = Paid, &at
		return
	}
	if inv.CollectionMethod == SendInvoice {
		days := defaultDaysDue
		if inv.daysUntilDue != nil {
			days = *inv.daysUntilDue
		}
		due := at.AddDate(0, 0, days)
		inv.DueDate = &due
		return
	}
	if pushRail(c) {
		next := at
		inv.NextPaymentAttempt = &next
	}
}

// recordOpened inserts invoices opened by nextPeriod or finalized, with
// their events (invoice.created, invoice.finalized, and invoice.paid for a
// zero total), in tx.
func (s *Service) recordOpened(ctx context.Context, tx *store.Tx, invs []*Invoice) error {
	if err := insertInvoices(ctx, tx, invs); err != nil {
		return err
	}
	pending := make([]events.Pending, 0, 2*len(invs))
	for _, inv := range invs {
		v := s.view(inv)
		pending = append(pending, ev(inv, EventInvoiceCreated, v, nil), ev(inv, EventInvoiceFinalized, v, nil))
		if inv.Status == Paid {
			pending = append(pending, ev(inv, EventInvoicePaid, v, nil))
		}
	}
	_, err := events.EmitMany(ctx, tx, pending)
	return err
}

// ev is an event about inv; onClock is the time on its test clock of the
// billing step that emits it (stepOnClock), nil for the real time.
func ev(inv *Invoice, typ string, obj any, onClock *time.Time) events.Pending {
	return events.Pending{MerchantID: inv.MerchantID, Livemode: inv.Livemode, Type: typ, ObjectType: "invoice", ObjectID: inv.ID, Object: obj, OnClock: onClock}
}

// InvoiceParams is the body of POST /v1/invoices (a one-off draft).
type InvoiceParams struct {
	Customer         string       `json:"customer"`
	Currency         string       `json:"currency"`
	Lines            []ItemParams `json:"lines"`
	CollectionMethod *string      `json:"collection_method"`
	DaysUntilDue     *int         `json:"days_until_due"`
}

// CreateInvoice records a one-off invoice as a draft (invoice.created).
func (s *Service) CreateInvoice(ctx context.Context, cl store.Claim, p auth.Principal, in InvoiceParams) (Invoice, error) {
	if in.Customer == "" {
		return Invoice{}, errs.Missing("customer")
	}
	if err := checkCurrency(in.Currency); err != nil {
		return Invoice{}, err
	}
	items, err := checkItems("lines", in.Lines, in.Currency)
	if err != nil {
		return Invoice{}, err
	}
	method, days, err := checkCollection(in.CollectionMethod, in.DaysUntilDue)
	if err != nil {
		return Invoice{}, err
	}
	lines := make([]Line, len(items))
	var total int64
	for i, it := range items {
		amt, _ := mul(it.AmountMinor, it.Quantity)
		lines[i] = Line{Description: it.Description, UnitAmountMinor: it.AmountMinor, Quantity: it.Quantity, AmountMinor: amt}
		if total, err = money.Add(total, amt); err != nil {
			return Invoice{}, errs.Invalid("lines", "amount_too_large", "the total of lines does not fit in 64 bits")
		}
	}
	var out Invoice
	err = s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		c, err := loadCustomer(ctx, tx, p.MerchantID, p.Livemode, in.Customer)
		if err != nil {
			if e := errs.As(err); e != nil && e.Kind == errs.KindNotFound {
				return errs.Invalid("customer", "resource_missing", "no such customer: '%s'", in.Customer)
			}
			return err
		}
		now, err := nowFor(ctx, tx, p.MerchantID, p.Livemode, c.TestClock, tx.Now())
		if err != nil {
			return err
		}
		inv := &Invoice{ID: ids.New("in_"), Object: "invoice", Customer: c.ID, Status: Draft, Currency: in.Currency, CollectionMethod: method,
			BillingReason: ReasonManual, Lines: lines, AmountDue: total, TestClock: c.TestClock, Livemode: p.Livemode, MerchantID: p.MerchantID,
			daysUntilDue: days, EffectiveAt: now.Truncate(time.Second)}
		if err := insertInvoices(ctx, tx, []*Invoice{inv}); err != nil {
			return err
		}
		out = s.view(inv)
		return emit(ctx, tx, inv.MerchantID, inv.Livemode, EventInvoiceCreated, "invoice", inv.ID, out)
	})
	return out, err
}

// GetInvoice returns one invoice.
func (s *Service) GetInvoice(ctx context.Context, p auth.Principal, id string) (Invoice, error) {
	v, err := loadInvoice(ctx, s.db, p.MerchantID, p.Livemode, id)
	if err != nil {
		return Invoice{}, err
	}
	return s.view(v), nil
}

// FinalizeInvoice moves a draft to open (invoice.finalized; invoice.paid
// too for a zero total) and queues its automatic attempt when it has one.
func (s *Service) FinalizeInvoice(ctx context.Context, cl store.Claim, p auth.Principal, id string) (Invoice, error) {
	return s.change(ctx, cl, p, id, func(tx *store.Tx, v *Invoice, now time.Time) (string, error) {
		if v.Status != Draft {
			return "", errs.InvalidState("invoice %s is %s; only a draft can be finalized", v.ID, v.Status)
		}
		c, err := loadCustomer(ctx, tx, v.MerchantID, v.Livemode, v.Customer)
		if err != nil && !isNotFound(err) {
			return "", err
		}
		if c == nil {
			c = &Customer{}
		}
		v.EffectiveAt = now
		s.open(v, c, now)
		to := v.Status
		v.Status = Draft
		if err := moveInvoice(ctx, tx, v, invTransition{finalize.name, finalize.from, to, finalize.event}); err != nil {
			return "", err
		}
		if to == Paid {
			if err := emit(ctx, tx, v.MerchantID, v.Livemode, EventInvoiceFinalized, "invoice", v.ID, s.view(v)); err != nil {
				return "", err
			}
			return EventInvoicePaid, nil
		}
		return EventInvoiceFinalized, s.queueAttempt(ctx, tx, v)
	})
}

// VoidInvoice voids an open or uncollectible invoice (invoice.voided).
func (s *Service) VoidInvoice(ctx context.Context, cl store.Claim, p auth.Principal, id string) (Invoice, error) {
	return s.change(ctx, cl, p, id, func(tx *store.Tx, v *Invoice, now time.Time) (string, error) {
		if !invAllowed(voidInvoice, v.Status) {
			return "", errs.InvalidState("invoice %s is %s; only an open or uncollectible invoice can be voided", v.ID, v.Status)
		}
		v.VoidedAt, v.NextPaymentAttempt, v.attemptClaimedUntil = &now, nil, nil
		return voidInvoice.event, moveInvoice(ctx, tx, v, voidInvoice)
	})
}

// MarkUncollectible marks an open invoice uncollectible: no more automatic
// attempts; it can still be paid or voided.
func (s *Service) MarkUncollectible(ctx context.Context, cl store.Claim, p auth.Principal, id string) (Invoice, error) {
	return s.change(ctx, cl, p, id, func(tx *store.Tx, v *Invoice, now time.Time) (string, error) {
		if !invAllowed(markUncollectible, v.Status) {
			return "", errs.InvalidState("invoice %s is %s; only an open invoice can be marked uncollectible", v.ID, v.Status)
		}
		v.NextPaymentAttempt, v.attemptClaimedUntil = nil, nil
		return markUncollectible.event, moveInvoice(ctx, tx, v, markUncollectible)
	})
}

// change runs one compare-and-set step on an invoice in one transaction
// and emits the event the step names.
func (s *Service) change(ctx context.Context, cl store.Claim, p auth.Principal, id string, step func(tx *store.Tx, v *Invoice, now time.Time) (string, error)) (Invoice, error) {
	var out Invoice
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		// A background step (the claim of an automatic attempt, a payment
		// linked) may change the invoice between the read and the
		// compare-and-set: read it again and decide again, a few times.
		var v *Invoice
		var event string
		for try := 0; ; try++ {
			var err error
			if v, err = loadInvoice(ctx, tx, p.MerchantID, p.Livemode, id); err != nil {
				return err
			}
			now, err := nowFor(ctx, tx, v.MerchantID, v.Livemode, v.TestClock, tx.Now())
			if err != nil {
				return err
			}
			event, err = step(tx, v, now.Truncate(time.Second))
			if err == errLostRace && try < 4 {
				continue
			}
			if err == errLostRace {
				return errs.InvalidState("invoice %s changed while this request ran; retrieve it and try again", id)
			}
			if err != nil {
				return err
			}
			break
		}
		out = s.view(v)
		if event == "" {
			return nil
		}
		return emit(ctx, tx, v.MerchantID, v.Livemode, event, "invoice", v.ID, out)
	})
	return out, err
}

func isNotFound(err error) bool {
	e := errs.As(err)
	return e != nil && e.Kind == errs.KindNotFound
}

// InvoiceListParams filters GET /v1/invoices.
type InvoiceListParams struct {
	Page         pagination.Page
	Customer     string
	Subscription string
	Status       InvStatus
}

// ParseInvoiceList reads limit, the cursors, customer, subscription and status.
func ParseInvoiceList(q url.Values) (InvoiceListParams, error) {
	lp := InvoiceListParams{Customer: q.Get("customer"), Subscription: q.Get("subscription"), Status: InvStatus(q.Get("status"))}
	switch lp.Status {
	case "", Draft, Open, Paid, Void, Uncollectible:
	default:
		return lp, errs.Invalid("status", "parameter_invalid", "status must be one of draft, open, paid, void, uncollectible")
	}
	var err error
	lp.Page, err = pagination.Parse(q)
	return lp, err
}

// ListInvoices returns the principal's invoices, newest first.
func (s *Service) ListInvoices(ctx context.Context, p auth.Principal, lp InvoiceListParams) (pagination.List[Invoice], error) {
	var where []string
	args := []any{p.MerchantID, p.Livemode}
	if lp.Customer != "" {
		where, args = append(where, "customer_id = ?"), append(args, lp.Customer)
	}
	if lp.Subscription != "" {
		where, args = append(where, "subscription_id = ?"), append(args, lp.Subscription)
	}
	if lp.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(lp.Status))
	}
	q := "SELECT " + invColumns + " FROM invoices WHERE merchant_id = ? AND livemode = ?"
	for _, w := range where {
		q += " AND " + w
	}
	return list(ctx, s.db, q, args, lp.Page, func(r row) (*Invoice, error) {
		v, err := scanInvoice(r)
		if err != nil {
			return nil, err
		}
		out := s.view(v)
		return &out, nil
	})
}
