package portal

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/payd/payd/internal/billing"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
)

// Billing actions in test mode: test clocks (create, advance to a date or
// by a day or a month, see their status), and on a subscription cancel (now
// or at the period's end), on an invoice finalize, pay, void and mark
// uncollectible. Each calls the billing service's operation the API calls,
// with the user's principal; each form is submitted once per form key
// (p.once), needs an approver (the role that acts on money) and is written
// to the audit log. Live mode hides them: the pages are 404 and the actions
// 403, since live billing is driven through the API.

// billingActionRoutes mounts the test clock pages and the billing actions.
func (p *Portal) billingActionRoutes(m *http.ServeMux) {
	m.Handle("GET /portal/{mode}/test_clocks", p.page(roleViewer, p.clocksList))
	m.Handle("POST /portal/{mode}/test_clocks", p.page(roleApprover, p.createClock))
	m.Handle("GET /portal/{mode}/test_clocks/{id}", p.page(roleViewer, p.clockPage))
	m.Handle("POST /portal/{mode}/test_clocks/{id}/advance", p.page(roleApprover, p.advanceClock))
	m.Handle("POST /portal/{mode}/subscriptions/{id}/cancel", p.page(roleApprover, p.cancelSubscription))
	for _, a := range invoiceActions {
		m.Handle("POST /portal/{mode}/invoices/{id}/"+a.path, p.page(roleApprover, p.invoiceAction(a)))
	}
}

// canBill says whether the page offers billing actions: test mode, and a
// role that acts on money.
func canBill(c *reqCtx) bool { return !c.live && roleOf(c.sess.Role) >= roleApprover }

// errLiveBilling refuses a billing action posted in live mode.
var errLiveBilling = errs.Permission("permission_denied", "Billing actions and test clocks are in test mode only; live billing is driven through the API.")

type clocksData struct {
	listData[billing.TestClock]
	Key   string // the create form's key
	Today string
}

// clocksList lists the merchant's test clocks and the form that makes one.
func (p *Portal) clocksList(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderClocks(w, r, c, http.StatusOK, &view{})
}

func (p *Portal) renderClocks(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	if c.live {
		return errs.NotFound("page", r.URL.Path)
	}
	page, err := pagination.Parse(pageQuery(r))
	if err != nil {
		return err
	}
	l, err := p.billing().ListClocks(r.Context(), c.principal(), page)
	if err != nil {
		return err
	}
	d := &clocksData{listData: newList(l.Data, l.HasMore, page, func(x billing.TestClock) string { return x.ID }),
		Key: newFormKey(), Today: p.now().UTC().Format("2006-01-02")}
	v.Title, v.Section, v.Data = "Test clocks", "billing", d
	p.render(w, r, c, status, "test_clocks", v)
	return nil
}

// parseClockTime reads a date (2006-01-02) or a date and time
// (2006-01-02T15:04, a datetime-local field), in UTC, as unix seconds.
func parseClockTime(field, s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errs.Invalid(field, "parameter_missing", "Give a date such as 2027-01-31.")
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.Unix(), nil
		}
	}
	return 0, errs.Invalid(field, "parameter_invalid", "Give a date such as 2027-01-31, or a date and time such as 2027-01-31T09:30 (UTC).")
}

// createClock makes a test clock frozen at the given date.
func (p *Portal) createClock(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	again := func(status int, v *view) error { return p.renderClocks(w, r, c, status, v) }
	if c.live {
		return errLiveBilling
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	at, err := parseClockTime("frozen_time", r.PostFormValue("frozen_time"))
	if err == nil {
		var path string
		path, err = p.once(r, c, url.Values{"action": {"test_clock.create"}, "name": {name}, "frozen_time": {r.PostFormValue("frozen_time")}},
			func(ctx context.Context, cl store.Claim) (string, error) {
				in := billing.ClockParams{FrozenTime: &at}
				if name != "" {
					in.Name = &name
				}
				clock, err := p.billing().CreateClock(ctx, cl, c.principal(), in)
				if err != nil {
					return "", err
				}
				return c.path("test_clocks", clock.ID) + "?done=clock_created", nil
			})
		p.audit(r.Context(), c, "test_clock.create", "", err, name)
		if err == nil {
			http.Redirect(w, r, path, http.StatusSeeOther)
			return nil
		}
	}
	return p.billingActionError(w, r, c, err, again, "name", "frozen_time")
}

type clockData struct {
	Clock     billing.TestClock
	Frozen    time.Time
	Advancing bool
	DateKey   string // the advance-to-a-date form's key
	StepKey   string // the +1 day / +1 month form's key
	Next      string // a default date for the advance form: a day later
}

// clockPage shows a test clock: its time and status (refreshed while it
// advances), the forms that advance it and the customers attached to it.
func (p *Portal) clockPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderClock(w, r, c, http.StatusOK, &view{})
}

func (p *Portal) renderClock(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	if c.live {
		return errs.NotFound("page", r.URL.Path)
	}
	clock, err := p.billing().GetClock(r.Context(), c.principal(), r.PathValue("id"))
	if err != nil {
		return err
	}
	frozen := time.Unix(clock.FrozenTime, 0).UTC()
	d := &clockData{Clock: clock, Frozen: frozen, Advancing: clock.Status == billing.ClockAdvancing,
		DateKey: newFormKey(), StepKey: newFormKey(), Next: frozen.AddDate(0, 0, 1).Format("2006-01-02")}
	v.Title, v.Section, v.Data = "Test clock "+clock.ID, "billing", d
	p.render(w, r, c, status, "test_clock", v)
	return nil
}

// advanceClock moves a test clock forward: to frozen_time (a date), or by
// step=day or step=month from its current time. The clock then advances
// in the background; its page shows it advancing until it is ready.
func (p *Portal) advanceClock(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	if c.live {
		return errLiveBilling
	}
	id := r.PathValue("id")
	again := func(status int, v *view) error { return p.renderClock(w, r, c, status, v) }
	step := r.PostFormValue("step")
	var to int64
	var err error
	switch step {
	case "day", "month":
	case "":
		to, err = parseClockTime("frozen_time", r.PostFormValue("frozen_time"))
	default:
		err = errs.Invalid("step", "parameter_invalid", "step must be day or month")
	}
	if err == nil {
		var path string
		path, err = p.once(r, c, url.Values{"action": {"test_clock.advance"}, "clock": {id}, "step": {step}, "frozen_time": {r.PostFormValue("frozen_time")}},
			func(ctx context.Context, cl store.Claim) (string, error) {
				target := to
				if step != "" {
					clock, err := p.billing().GetClock(ctx, c.principal(), id)
					if err != nil {
						return "", err
					}
					target = stepClock(time.Unix(clock.FrozenTime, 0).UTC(), step).Unix()
				}
				if _, err := p.billing().AdvanceClock(ctx, cl, c.principal(), id, billing.ClockParams{FrozenTime: &target}); err != nil {
					return "", err
				}
				return c.path("test_clocks", id) + "?done=clock_advancing", nil
			})
		detail := "to " + r.PostFormValue("frozen_time")
		if step != "" {
			detail = "+1 " + step
		}
		p.audit(r.Context(), c, "test_clock.advance", id, err, detail)
		if err == nil {
			http.Redirect(w, r, path, http.StatusSeeOther)
			return nil
		}
	}
	return p.billingActionError(w, r, c, err, again, "frozen_time")
}

// cancelSubscription cancels a subscription now (when=now) or at its
// period's end (when=period_end).
func (p *Portal) cancelSubscription(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	if c.live {
		return errLiveBilling
	}
	id := r.PathValue("id")
	again := func(status int, v *view) error { return p.renderSubscription(w, r, c, status, v) }
	when := r.PostFormValue("when")
	var err error
	var atEnd bool
	switch when {
	case "now":
	case "period_end":
		atEnd = true
	default:
		err = errs.Invalid("when", "parameter_invalid", "Choose when the subscription ends: now or at the end of its period.")
	}
	if err == nil {
		var path string
		path, err = p.once(r, c, url.Values{"action": {"subscription.cancel"}, "subscription": {id}, "when": {when}},
			func(ctx context.Context, cl store.Claim) (string, error) {
				if _, err := p.billing().CancelSubscription(ctx, cl, c.principal(), id, billing.CancelParams{AtPeriodEnd: &atEnd}); err != nil {
					return "", err
				}
				notice := "subscription_canceled"
				if atEnd {
					notice = "sub_ends_at_period_end"
				}
				return c.path("subscriptions", id) + "?done=" + notice, nil
			})
		p.audit(r.Context(), c, "subscription.cancel", id, err, when)
		if err == nil {
			http.Redirect(w, r, path, http.StatusSeeOther)
			return nil
		}
	}
	return p.billingActionError(w, r, c, err, again, "when")
}

// invoiceAction is one of the buttons on an invoice's page.
type invoiceAction struct {
	path, action, notice string
	run                  func(s *billing.Service, ctx context.Context, cl store.Claim, c *reqCtx, id string) error
}

var invoiceActions = []invoiceAction{
	{path: "finalize", action: "invoice.finalize", notice: "invoice_finalized",
		run: func(s *billing.Service, ctx context.Context, cl store.Claim, c *reqCtx, id string) error {
			_, err := s.FinalizeInvoice(ctx, cl, c.principal(), id)
			return err
		}},
	{path: "pay", action: "invoice.pay", notice: "invoice_pay_started",
		run: func(s *billing.Service, ctx context.Context, cl store.Claim, c *reqCtx, id string) error {
			_, err := s.PayInvoice(ctx, cl, c.principal(), id, billing.PayParams{})
			return err
		}},
	{path: "void", action: "invoice.void", notice: "invoice_voided",
		run: func(s *billing.Service, ctx context.Context, cl store.Claim, c *reqCtx, id string) error {
			_, err := s.VoidInvoice(ctx, cl, c.principal(), id)
			return err
		}},
	{path: "mark_uncollectible", action: "invoice.mark_uncollectible", notice: "invoice_uncollectible",
		run: func(s *billing.Service, ctx context.Context, cl store.Claim, c *reqCtx, id string) error {
			_, err := s.MarkUncollectible(ctx, cl, c.principal(), id)
			return err
		}},
}

// invoiceAction handles one invoice button.
func (p *Portal) invoiceAction(a invoiceAction) pageHandler {
	return func(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
		if c.live {
			return errLiveBilling
		}
		id := r.PathValue("id")
		path, err := p.once(r, c, url.Values{"action": {a.action}, "invoice": {id}},
			func(ctx context.Context, cl store.Claim) (string, error) {
				if err := a.run(p.billing(), ctx, cl, c, id); err != nil {
					return "", err
				}
				return c.path("invoices", id) + "?done=" + a.notice, nil
			})
		p.audit(r.Context(), c, a.action, id, err, "")
		if err != nil {
			return p.billingActionError(w, r, c, err, func(status int, v *view) error { return p.renderInvoice(w, r, c, status, v) })
		}
		http.Redirect(w, r, path, http.StatusSeeOther)
		return nil
	}
}

// billingActionError shows a refused billing action on its page again,
// with the error next to its field (actionError), keeping what was typed.
func (p *Portal) billingActionError(w http.ResponseWriter, r *http.Request, c *reqCtx, err error, again func(status int, v *view) error, keep ...string) error {
	return p.actionError(w, r, c, err, func(v *view) error { return again(statusOf(err), v) }, keep...)
}

// billingKeys are the form keys of a subscription's or an invoice's action
// forms, new at each rendering.
func billingKeys(names ...string) map[string]string {
	out := make(map[string]string, len(names))
	for _, n := range names {
		out[n] = newFormKey()
	}
	return out
}

// stepClock is a clock's time a day or a month later. A month later keeps
// the day of the month, or takes the month's last day when it has none
// (31 January → 28 February), as billing periods do.
func stepClock(t time.Time, step string) time.Time {
	if step == "day" {
		return t.AddDate(0, 0, 1)
	}
	next := t.AddDate(0, 1, 0)
	if next.Day() != t.Day() {
		next = next.AddDate(0, 0, -next.Day()) // the last day of the month before
	}
	return next
}
