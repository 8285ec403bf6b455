package portal

import (
	"net/http"
	"net/url"
	"time"

	"github.com/payd/payd/internal/billing"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
)

// WithBilling adds the billing pages over the billing service: customers,
// subscriptions and invoices, each a filtered list and a page with its
// timeline, and on an invoice's page what its customer sees (the hosted
// invoice page's content and its link). In test mode they also drive
// billing (billing_actions.go): test clocks, and the actions on a
// subscription and an invoice.
func (p *Portal) WithBilling(get func() *billing.Service) {
	p.billing = get
	p.addCapability(capability{
		nav: navItem{Section: "billing", Label: "Billing", Path: "invoices"},
		routes: func(m *http.ServeMux) {
			m.Handle("GET /portal/{mode}/customers", p.page(roleViewer, p.customersList))
			m.Handle("GET /portal/{mode}/customers/{id}", p.page(roleViewer, p.customerPage))
			m.Handle("GET /portal/{mode}/subscriptions", p.page(roleViewer, p.subscriptionsList))
			m.Handle("GET /portal/{mode}/subscriptions/{id}", p.page(roleViewer, p.subscriptionPage))
			m.Handle("GET /portal/{mode}/invoices", p.page(roleViewer, p.invoicesList))
			m.Handle("GET /portal/{mode}/invoices/{id}", p.page(roleViewer, p.invoicePage))
			p.billingActionRoutes(m)
		},
	})
}

// maxBillingShown bounds the related rows listed on a customer's or a
// subscription's page.
const maxBillingShown = 50

// billingListError renders a list page with a filter's 400 on its field.
func (p *Portal) billingListError(w http.ResponseWriter, r *http.Request, c *reqCtx, name string, v *view, err error) error {
	if e := errs.As(err); e != nil && e.Kind == errs.KindInvalid && e.Param != "" {
		v.Error, v.ErrorCode, v.FieldErrors = e.Message, e.Code, map[string]string{e.Param: e.Message}
		p.render(w, r, c, statusOf(err), name, v)
		return nil
	}
	return err
}

// filtersOf keeps the non-empty filters of a list for its pager.
func filtersOf(q url.Values, keys ...string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		if x := q.Get(k); x != "" {
			out[k] = x
		}
	}
	return out
}

type customersData struct {
	listData[billing.Customer]
}

// customersList lists the merchant's customers, newest first, filtered by
// email or phone.
func (p *Portal) customersList(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	d := &customersData{}
	v := &view{Title: "Customers", Section: "billing", Form: r.URL.Query(), Data: d}
	lp, err := billing.ParseCustomerList(pageQuery(r))
	if err == nil {
		var l pagination.List[billing.Customer]
		if l, err = p.billing().ListCustomers(r.Context(), c.principal(), lp); err == nil {
			d.listData = newList(l.Data, l.HasMore, lp.Page, func(x billing.Customer) string { return x.ID })
			d.Filters = filtersOf(r.URL.Query(), "email", "phone")
		}
	}
	if err != nil {
		return p.billingListError(w, r, c, "customers", v, err)
	}
	p.render(w, r, c, http.StatusOK, "customers", v)
	return nil
}

// pageQuery is the request's query with the portal's default page size.
func pageQuery(r *http.Request) url.Values {
	q := r.URL.Query()
	if q.Get("limit") == "" {
		q.Set("limit", "25")
	}
	return q
}

type customerData struct {
	Customer      billing.Customer
	Subscriptions []billing.Subscription
	Invoices      []billing.Invoice
	Timeline      []timelineEntry
}

// customerPage shows a customer, its subscriptions and invoices (the
// newest maxBillingShown of each) and its timeline.
func (p *Portal) customerPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx, pr := r.Context(), c.principal()
	cu, err := p.billing().GetCustomer(ctx, pr, r.PathValue("id"))
	if err != nil {
		return err
	}
	subs, err := p.billing().ListSubscriptions(ctx, pr, billing.SubscriptionListParams{Customer: cu.ID, Page: pagination.Page{Limit: maxBillingShown}})
	if err != nil {
		return err
	}
	invs, err := p.billing().ListInvoices(ctx, pr, billing.InvoiceListParams{Customer: cu.ID, Page: pagination.Page{Limit: maxBillingShown}})
	if err != nil {
		return err
	}
	tl, err := p.timeline(ctx, c, cu.ID, cu.CreatedAt, "created")
	if err != nil {
		return err
	}
	sortTimeline(tl)
	v := &view{Title: "Customer " + cu.ID, Section: "billing",
		Data: customerData{Customer: cu, Subscriptions: subs.Data, Invoices: invs.Data, Timeline: tl}}
	p.render(w, r, c, http.StatusOK, "customer", v)
	return nil
}

type subscriptionsData struct {
	listData[billing.Subscription]
	Statuses []string
}

// subscriptionsList lists the merchant's subscriptions, newest first,
// filtered by customer or status.
func (p *Portal) subscriptionsList(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	d := &subscriptionsData{Statuses: []string{"trialing", "active", "past_due", "unpaid", "canceled"}}
	v := &view{Title: "Subscriptions", Section: "billing", Form: r.URL.Query(), Data: d}
	lp, err := billing.ParseSubscriptionList(pageQuery(r))
	if err == nil {
		var l pagination.List[billing.Subscription]
		if l, err = p.billing().ListSubscriptions(r.Context(), c.principal(), lp); err == nil {
			d.listData = newList(l.Data, l.HasMore, lp.Page, func(x billing.Subscription) string { return x.ID })
			d.Filters = filtersOf(r.URL.Query(), "customer", "status")
		}
	}
	if err != nil {
		return p.billingListError(w, r, c, "subscriptions", v, err)
	}
	p.render(w, r, c, http.StatusOK, "subscriptions", v)
	return nil
}

type subscriptionData struct {
	Subscription billing.Subscription
	Total        int64 // the items' amount per period
	Invoices     []billing.Invoice
	Timeline     []timelineEntry
	CanAct       bool              // the page offers cancel (test mode, approvers)
	Keys         map[string]string // the cancel forms' keys
}

// subscriptionPage shows a subscription, its items, its invoices (newest
// maxBillingShown) and its timeline.
func (p *Portal) subscriptionPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderSubscription(w, r, c, http.StatusOK, &view{})
}

// renderSubscription renders a subscription's page with v's notice or
// error (a refused action shows the page again with its error).
func (p *Portal) renderSubscription(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	ctx, pr := r.Context(), c.principal()
	s, err := p.billing().GetSubscription(ctx, pr, r.PathValue("id"))
	if err != nil {
		return err
	}
	invs, err := p.billing().ListInvoices(ctx, pr, billing.InvoiceListParams{Subscription: s.ID, Page: pagination.Page{Limit: maxBillingShown}})
	if err != nil {
		return err
	}
	tl, err := p.timeline(ctx, c, s.ID, s.CreatedAt, "created")
	if err != nil {
		return err
	}
	if s.TrialEnd != nil {
		tl = append(tl, timelineEntry{At: *s.TrialEnd, Label: "trial ends"})
	}
	sortTimeline(tl)
	var total int64
	for _, it := range s.Items {
		total += it.AmountMinor * it.Quantity // bounded by the service when the items were set
	}
	v.Title, v.Section = "Subscription "+s.ID, "billing"
	v.Data = subscriptionData{Subscription: s, Total: total, Invoices: invs.Data, Timeline: tl,
		CanAct: canBill(c) && s.Status != billing.Canceled, Keys: billingKeys("now", "period_end")}
	p.render(w, r, c, status, "subscription", v)
	return nil
}

type invoicesData struct {
	listData[billing.Invoice]
	Statuses []string
}

// invoicesList lists the merchant's invoices, newest first, filtered by
// customer, subscription or status.
func (p *Portal) invoicesList(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	d := &invoicesData{Statuses: []string{"draft", "open", "paid", "void", "uncollectible"}}
	v := &view{Title: "Invoices", Section: "billing", Form: r.URL.Query(), Data: d}
	lp, err := billing.ParseInvoiceList(pageQuery(r))
	if err == nil {
		var l pagination.List[billing.Invoice]
		if l, err = p.billing().ListInvoices(r.Context(), c.principal(), lp); err == nil {
			d.listData = newList(l.Data, l.HasMore, lp.Page, func(x billing.Invoice) string { return x.ID })
			d.Filters = filtersOf(r.URL.Query(), "customer", "subscription", "status")
		}
	}
	if err != nil {
		return p.billingListError(w, r, c, "invoices", v, err)
	}
	p.render(w, r, c, http.StatusOK, "invoices", v)
	return nil
}

type invoiceData struct {
	Invoice  billing.Invoice
	Merchant string               // the name the hosted page is branded with
	Rails    []billing.RailOption // the ways to pay the hosted page offers
	Payable  bool                 // the hosted page offers to pay (open or uncollectible)
	Timeline []timelineEntry
	CanAct   bool              // the page offers the invoice's actions (test mode, approvers)
	Keys     map[string]string // the action forms' keys
}

// invoicePage shows an invoice, its lines and timeline, and what its
// customer sees on the hosted invoice page: the same branding, amount,
// lines and ways to pay, with the page's link to share.
func (p *Portal) invoicePage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderInvoice(w, r, c, http.StatusOK, &view{})
}

// renderInvoice renders an invoice's page with v's notice or error.
func (p *Portal) renderInvoice(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	ctx := r.Context()
	inv, err := p.billing().GetInvoice(ctx, c.principal(), r.PathValue("id"))
	if err != nil {
		return err
	}
	m, err := p.cfg.Merchants.Get(ctx, c.sess.MerchantID)
	if err != nil {
		return err
	}
	tl, err := p.timeline(ctx, c, inv.ID, inv.CreatedAt, "created")
	if err != nil {
		return err
	}
	if inv.NextPaymentAttempt != nil {
		tl = append(tl, timelineEntry{At: *inv.NextPaymentAttempt, Label: "next payment attempt", Detail: "scheduled"})
	}
	sortTimeline(tl)
	d := invoiceData{Invoice: inv, Merchant: m.Name, Rails: billing.RailOptions(inv.Currency), Timeline: tl,
		Payable: inv.Status == billing.Open || inv.Status == billing.Uncollectible,
		CanAct:  canBill(c), Keys: billingKeys("finalize", "pay", "void", "mark_uncollectible")}
	v.Title, v.Section, v.Data = "Invoice "+inv.ID, "billing", d
	p.render(w, r, c, status, "invoice", v)
	return nil
}

// formatDate formats a billing date (periods, due dates), a time.Time or
// a *time.Time, as a day.
func formatDate(v any) string {
	switch t := v.(type) {
	case time.Time:
		return t.UTC().Format("2 Jan 2006")
	case *time.Time:
		if t != nil {
			return t.UTC().Format("2 Jan 2006")
		}
	}
	return ""
}
