package billing

import (
	"context"
	"fmt"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
)

// ItemParams is one item or invoice line as a client sends it: a unit
// amount and a quantity (default 1).
type ItemParams struct {
	Description string `json:"description"`
	AmountMinor *int64 `json:"amount_minor"`
	Quantity    *int64 `json:"quantity"`
}

// SubscriptionParams is the body of POST /v1/subscriptions.
type SubscriptionParams struct {
	Customer         string            `json:"customer"`
	Currency         string            `json:"currency"`
	Interval         string            `json:"interval"`
	IntervalCount    *int              `json:"interval_count"`
	Items            []ItemParams      `json:"items"`
	TrialDays        *int              `json:"trial_days"`
	CollectionMethod *string           `json:"collection_method"`
	DaysUntilDue     *int              `json:"days_until_due"`
	Metadata         map[string]string `json:"metadata"`
}

// Limits where Stripe's are the guide.
const (
	maxItems        = 20
	maxDescription  = 500
	maxQuantity     = 1_000_000
	maxTrialDays    = 730
	maxDaysUntilDue = 365
	defaultDaysDue  = 30
)

// checkItems validates items or lines; param names the array.
func checkItems(param string, in []ItemParams, currency string) ([]Item, error) {
	if len(in) == 0 {
		return nil, errs.Missing(param)
	}
	if len(in) > maxItems {
		return nil, errs.Invalid(param, "parameter_invalid", "%s holds at most %d entries", param, maxItems)
	}
	out := make([]Item, len(in))
	var total int64
	for i, it := range in {
		p := fmt.Sprintf("%s[%d]", param, i)
		if it.Description == "" || !utf8.ValidString(it.Description) || utf8.RuneCountInString(it.Description) > maxDescription {
			return nil, errs.Invalid(p+".description", "parameter_invalid", "description must be 1 to %d characters", maxDescription)
		}
		if it.AmountMinor == nil {
			return nil, errs.Missing(p + ".amount_minor")
		}
		if *it.AmountMinor <= 0 {
			return nil, errs.Invalid(p+".amount_minor", "amount_invalid", "amount_minor must be a positive integer (minor units of %s)", currency)
		}
		q := int64(1)
		if it.Quantity != nil {
			q = *it.Quantity
		}
		if q < 1 || q > maxQuantity {
			return nil, errs.Invalid(p+".quantity", "parameter_invalid", "quantity must be an integer from 1 to %d", maxQuantity)
		}
		line, ok := mul(*it.AmountMinor, q)
		if !ok {
			return nil, errs.Invalid(p+".amount_minor", "amount_too_large", "amount_minor × quantity does not fit in 64 bits")
		}
		var err error
		if total, err = money.Add(total, line); err != nil {
			return nil, errs.Invalid(param, "amount_too_large", "the total of %s does not fit in 64 bits", param)
		}
		out[i] = Item{ID: ids.New("si_"), Description: it.Description, AmountMinor: *it.AmountMinor, Quantity: q}
	}
	return out, nil
}

// mul multiplies two non-negative amounts, reporting overflow.
func mul(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || c < 0 {
		return 0, false
	}
	return c, true
}

func checkCurrency(c string) error {
	if c == "" {
		return errs.Missing("currency")
	}
	if _, err := money.Exponent(c); err != nil {
		return errs.Invalid("currency", "currency_invalid", "currency must be an upper-case ISO 4217 code such as DJF")
	}
	return nil
}

// checkCollection reads collection_method and days_until_due.
func checkCollection(method *string, days *int) (string, *int, error) {
	m := ChargeAutomatically
	if method != nil {
		m = *method
	}
	switch m {
	case ChargeAutomatically:
		if days != nil {
			return "", nil, errs.Invalid("days_until_due", "parameter_invalid", "days_until_due applies to collection_method send_invoice only")
		}
		return m, nil, nil
	case SendInvoice:
		d := defaultDaysDue
		if days != nil {
			d = *days
		}
		if d < 0 || d > maxDaysUntilDue {
			return "", nil, errs.Invalid("days_until_due", "parameter_invalid", "days_until_due must be from 0 to %d", maxDaysUntilDue)
		}
		return m, &d, nil
	}
	return "", nil, errs.Invalid("collection_method", "parameter_invalid", "collection_method must be charge_automatically or send_invoice")
}

// CreateSubscription starts a subscription. Without a trial its first
// period starts now (on the customer's clock) and its invoice is opened
// and finalized in the same transaction; with trial_days the subscription
// is trialing and the first invoice opens when the trial ends. The
// payment attempt of an opened invoice is queued in the same transaction
// (a job), on a test clock as without one: the attempt is made at once, on
// the clock's time.
func (s *Service) CreateSubscription(ctx context.Context, cl store.Claim, p auth.Principal, in SubscriptionParams) (Subscription, error) {
	if in.Customer == "" {
		return Subscription{}, errs.Missing("customer")
	}
	if err := checkCurrency(in.Currency); err != nil {
		return Subscription{}, err
	}
	unit := Interval(in.Interval)
	if in.Interval == "" {
		return Subscription{}, errs.Missing("interval")
	}
	if !unit.Valid() {
		return Subscription{}, errs.Invalid("interval", "parameter_invalid", "interval must be day, week, month or year")
	}
	count := 1
	if in.IntervalCount != nil {
		count = *in.IntervalCount
	}
	if count < 1 || count > unit.MaxCount() {
		return Subscription{}, errs.Invalid("interval_count", "parameter_invalid", "interval_count must be from 1 to %d for %s (one period is at most three years)", unit.MaxCount(), unit)
	}
	items, err := checkItems("items", in.Items, in.Currency)
	if err != nil {
		return Subscription{}, err
	}
	if in.TrialDays != nil && (*in.TrialDays < 0 || *in.TrialDays > maxTrialDays) {
		return Subscription{}, errs.Invalid("trial_days", "parameter_invalid", "trial_days must be from 0 to %d", maxTrialDays)
	}
	method, days, err := checkCollection(in.CollectionMethod, in.DaysUntilDue)
	if err != nil {
		return Subscription{}, err
	}
	if err := payments.ValidateMetadata(in.Metadata); err != nil {
		return Subscription{}, err
	}
	sub := &Subscription{ID: ids.New("sub_"), Object: "subscription", Currency: in.Currency, Interval: unit, IntervalCount: count,
		Items: items, CollectionMethod: method, DaysUntilDue: days, Metadata: in.Metadata, Livemode: p.Livemode, MerchantID: p.MerchantID}
	if sub.Metadata == nil {
		sub.Metadata = map[string]string{}
	}
	err = s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		c, err := loadCustomer(ctx, tx, p.MerchantID, p.Livemode, in.Customer)
		if err != nil {
			if errs.As(err) != nil && errs.As(err).Kind == errs.KindNotFound {
				return errs.Invalid("customer", "resource_missing", "no such customer: '%s'", in.Customer)
			}
			return err
		}
		now, err := nowFor(ctx, tx, p.MerchantID, p.Livemode, c.TestClock, tx.Now())
		if err != nil {
			return err
		}
		now = now.Truncate(time.Second)
		sub.Customer, sub.TestClock, sub.StartDate, sub.CreatedAt = c.ID, c.TestClock, now, createdOnClock(tx.Now().Truncate(time.Second), clockTimeOf(c.TestClock, now))
		sub.BillingCycleAnchor, sub.CurrentPeriodStart, sub.CurrentPeriodEnd, sub.Status = now, now, now, Active
		if in.TrialDays != nil && *in.TrialDays > 0 {
			end := now.AddDate(0, 0, *in.TrialDays)
			sub.Status, sub.TrialEnd, sub.BillingCycleAnchor, sub.CurrentPeriodEnd = Trialing, &end, end, end
		}
		var inv *Invoice
		if sub.Status == Active {
			inv = s.nextPeriod(sub, c, ReasonSubscriptionCreate)
		}
		if err := insertSub(ctx, tx, sub); err != nil {
			return err
		}
		if err := emit(ctx, tx, sub.MerchantID, sub.Livemode, EventSubscriptionCreated, "subscription", sub.ID, sub); err != nil {
			return err
		}
		if inv == nil {
			return nil
		}
		if err := s.recordOpened(ctx, tx, []*Invoice{inv}); err != nil {
			return err
		}
		return s.queueAttempt(ctx, tx, inv)
	})
	if err != nil {
		return Subscription{}, err
	}
	return *sub, nil
}

// AttemptJob is the job kind that makes the payment attempt of one
// invoice opened by a request (a subscription's first), right after the
// request commits. The billing clock would make it too; the job only saves
// the wait.
const AttemptJob = "billing.attempt"

type attemptPayload struct {
	Invoice string `json:"invoice"`
}

// queueAttempt queues the attempt of an invoice opened in tx. An invoice
// of a customer on a test clock is queued too: its attempt is due on the
// clock's time when it opens, and waiting for the clock's next advance
// would leave a new subscription unpaid (and never past_due) until then.
func (s *Service) queueAttempt(ctx context.Context, tx *store.Tx, inv *Invoice) error {
	if inv.NextPaymentAttempt == nil {
		return nil
	}
	if err := jobs.Enqueue(ctx, tx, AttemptJob, attemptPayload{Invoice: inv.ID}, tx.Now(), "billing.attempt:"+inv.ID); err != nil {
		return err
	}
	tx.AfterCommit(s.wake)
	return nil
}

// GetSubscription returns one subscription.
func (s *Service) GetSubscription(ctx context.Context, p auth.Principal, id string) (Subscription, error) {
	sub, err := loadSub(ctx, s.db, p.MerchantID, p.Livemode, id)
	if err != nil {
		return Subscription{}, err
	}
	return *sub, nil
}

// UpdateParams is the body of POST /v1/subscriptions/{id}.
type UpdateParams struct {
	Items             []ItemParams      `json:"items"`
	ProrationBehavior *string           `json:"proration_behavior"`
	CancelAtPeriodEnd *bool             `json:"cancel_at_period_end"`
	Metadata          map[string]string `json:"metadata"`
}

// UpdateSubscription replaces the items (the whole list), cancel_at_period_end
// or metadata. A change of items in the middle of a paid period is
// prorated onto the next invoice unless proration_behavior is none: a
// credit for the unused share of the old items and a charge for the
// remaining share of the new ones, each rounded half away from zero to the
// minor unit.
func (s *Service) UpdateSubscription(ctx context.Context, cl store.Claim, p auth.Principal, id string, in UpdateParams) (Subscription, error) {
	prorate := true
	if in.ProrationBehavior != nil {
		switch *in.ProrationBehavior {
		case "create_prorations":
		case "none":
			prorate = false
		default:
			return Subscription{}, errs.Invalid("proration_behavior", "parameter_invalid", "proration_behavior must be create_prorations or none")
		}
	}
	if err := payments.ValidateMetadata(in.Metadata); err != nil {
		return Subscription{}, err
	}
	var out Subscription
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		sub, err := loadSub(ctx, tx, p.MerchantID, p.Livemode, id)
		if err != nil {
			return err
		}
		if sub.Status == Canceled {
			return errs.InvalidState("subscription %s is canceled and cannot change", sub.ID)
		}
		from := sub.Status
		if in.Items != nil {
			items, err := checkItems("items", in.Items, sub.Currency)
			if err != nil {
				return err
			}
			now, err := nowFor(ctx, tx, sub.MerchantID, sub.Livemode, sub.TestClock, tx.Now())
			if err != nil {
				return err
			}
			if prorate && sub.Status != Trialing {
				lines, err := prorations(sub, items, now)
				if err != nil {
					return err
				}
				sub.pending = append(sub.pending, lines...)
			}
			sub.Items = items
		}
		if in.CancelAtPeriodEnd != nil {
			sub.CancelAtPeriodEnd = *in.CancelAtPeriodEnd
		}
		if in.Metadata != nil {
			sub.Metadata = in.Metadata
		}
		if err := moveSub(ctx, tx, sub, changeSub, from); err != nil {
			if err == errLostRace {
				return errs.InvalidState("subscription %s changed while this request ran; retrieve it and try again", sub.ID)
			}
			return err
		}
		out = *sub
		return emit(ctx, tx, sub.MerchantID, sub.Livemode, EventSubscriptionUpdated, "subscription", sub.ID, sub)
	})
	return out, err
}

// prorations are the lines a change of items at now adds to the next
// invoice.
func prorations(sub *Subscription, items []Item, now time.Time) ([]Line, error) {
	start, end := sub.CurrentPeriodStart, sub.CurrentPeriodEnd
	if !now.Before(end) || now.Before(start) {
		return nil, nil
	}
	remaining, total := end.Sub(now), end.Sub(start)
	var lines []Line
	add := func(it Item, sign int64, label string) error {
		full, ok := mul(it.AmountMinor, it.Quantity)
		if !ok {
			return errs.Invalid("items", "amount_too_large", "an item's amount × quantity does not fit in 64 bits")
		}
		amt := sign * Prorate(full, remaining, total)
		if amt == 0 {
			return nil
		}
		ps, pe := now, end
		lines = append(lines, Line{Description: label + it.Description, UnitAmountMinor: amt, Quantity: 1, AmountMinor: amt,
			PeriodStart: &ps, PeriodEnd: &pe, Proration: true})
		return nil
	}
	for _, it := range sub.Items {
		if err := add(it, -1, "Unused time on "); err != nil {
			return nil, err
		}
	}
	for _, it := range items {
		if err := add(it, 1, "Remaining time on "); err != nil {
			return nil, err
		}
	}
	return lines, nil
}

// CancelParams is the body of POST /v1/subscriptions/{id}/cancel.
type CancelParams struct {
	AtPeriodEnd *bool `json:"at_period_end"`
}

// CancelSubscription ends a subscription now (customer.subscription.deleted;
// its open invoices stay open, with no more automatic retries) or marks it
// to end at its period's end (customer.subscription.updated).
func (s *Service) CancelSubscription(ctx context.Context, cl store.Claim, p auth.Principal, id string, in CancelParams) (Subscription, error) {
	var out Subscription
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		sub, err := loadSub(ctx, tx, p.MerchantID, p.Livemode, id)
		if err != nil {
			return err
		}
		if sub.Status == Canceled {
			return errs.InvalidState("subscription %s is canceled already", sub.ID)
		}
		if in.AtPeriodEnd != nil && *in.AtPeriodEnd {
			sub.CancelAtPeriodEnd = true
			if err := moveSub(ctx, tx, sub, changeSub, sub.Status); err != nil {
				return raced(err, sub.ID)
			}
			out = *sub
			return emit(ctx, tx, sub.MerchantID, sub.Livemode, EventSubscriptionUpdated, "subscription", sub.ID, sub)
		}
		now, err := nowFor(ctx, tx, sub.MerchantID, sub.Livemode, sub.TestClock, tx.Now())
		if err != nil {
			return err
		}
		if err := s.cancelNow(ctx, tx, sub, now); err != nil {
			return raced(err, sub.ID)
		}
		out = *sub
		return nil
	})
	return out, err
}

func raced(err error, id string) error {
	if err == errLostRace {
		return errs.InvalidState("subscription %s changed while this request ran; retrieve it and try again", id)
	}
	return err
}

// cancelNow ends sub at now in tx: canceled, no more automatic retries of
// its open invoices, customer.subscription.deleted.
func (s *Service) cancelNow(ctx context.Context, tx *store.Tx, sub *Subscription, now time.Time) error {
	from := sub.Status
	sub.Status, sub.CanceledAt, sub.EndedAt = Canceled, &now, &now
	if err := moveSub(ctx, tx, sub, cancelSub, from); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "UPDATE invoices SET next_payment_attempt = NULL, updated_at = ? WHERE subscription_id = ? AND status = 'open'",
		store.Micros(tx.Now()), sub.ID); err != nil {
		return err
	}
	return emit(ctx, tx, sub.MerchantID, sub.Livemode, EventSubscriptionDeleted, "subscription", sub.ID, sub)
}

// SubscriptionListParams filters GET /v1/subscriptions.
type SubscriptionListParams struct {
	Page     pagination.Page
	Customer string
	Status   SubStatus
}

// ParseSubscriptionList reads limit, the cursors, customer and status.
func ParseSubscriptionList(q url.Values) (SubscriptionListParams, error) {
	lp := SubscriptionListParams{Customer: q.Get("customer"), Status: SubStatus(q.Get("status"))}
	switch lp.Status {
	case "", Trialing, Active, PastDue, Unpaid, Canceled:
	default:
		return lp, errs.Invalid("status", "parameter_invalid", "status must be one of trialing, active, past_due, unpaid, canceled")
	}
	var err error
	lp.Page, err = pagination.Parse(q)
	return lp, err
}

// ListSubscriptions returns the principal's subscriptions, newest first.
func (s *Service) ListSubscriptions(ctx context.Context, p auth.Principal, lp SubscriptionListParams) (pagination.List[Subscription], error) {
	q := "SELECT " + subColumns + " FROM subscriptions WHERE merchant_id = ? AND livemode = ?"
	args := []any{p.MerchantID, p.Livemode}
	if lp.Customer != "" {
		q += " AND customer_id = ?"
		args = append(args, lp.Customer)
	}
	if lp.Status != "" {
		q += " AND status = ?"
		args = append(args, string(lp.Status))
	}
	return list(ctx, s.db, q, args, lp.Page, scanSub)
}
