package portal

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/refunds"
	"github.com/payd/payd/internal/store"
)

// WithRefunds adds refunds to the payment intent page: a refund form
// (amount, reason), the intent's refunds with approve and cancel for those
// waiting for a second principal, and their events on the intent's
// timeline. Four-eyes is the refund service's rule: the user (or key) that
// made a refund cannot approve it.
func (p *Portal) WithRefunds(get func() *refunds.Service) {
	p.refunds = get
	p.addCapability(capability{routes: func(m *http.ServeMux) {
		m.Handle("POST /portal/{mode}/payment_intents/{id}/refunds", p.page(roleApprover, p.createRefund))
		m.Handle("POST /portal/{mode}/refunds/{id}/approve", p.page(roleApprover, p.approveRefund))
		m.Handle("POST /portal/{mode}/refunds/{id}/cancel", p.page(roleApprover, p.cancelRefund))
	}})
}

// intentRefunds is what the intent page shows of its refunds.
type intentRefunds struct {
	List       []*refunds.Refund
	Refundable bool // the intent succeeded and not everything is refunded
	Reasons    []string
	// FormKey is the refund form's idempotency key (a new one per page).
	FormKey  string
	timeline []timelineEntry
}

// maxRefundsShown bounds the refunds listed on an intent's page.
const maxRefundsShown = 100

// refundsOf reads an intent's refunds and their events.
func (p *Portal) refundsOf(ctx context.Context, c *reqCtx, in payments.Intent) (*intentRefunds, error) {
	list, _, err := p.refunds().List(ctx, c.principal(), refunds.ListParams{PaymentIntent: in.ID}, pagination.Page{Limit: maxRefundsShown})
	if err != nil {
		return nil, err
	}
	out := &intentRefunds{List: list, Reasons: refunds.Reasons, FormKey: newFormKey(),
		Refundable: in.Status == payments.Succeeded && in.AmountRefundedMinor < in.AmountCapturedMinor}
	for _, re := range list {
		tl, err := p.timeline(ctx, c, re.ID, re.CreatedAt, "refund "+re.ID+" created")
		if err != nil {
			return nil, err
		}
		out.timeline = append(out.timeline, tl[1:]...) // refund.created says it with the refund's status
	}
	return out, nil
}

// createRefund makes a refund of the intent from the form: amount_minor
// (empty: what is still refundable) and reason (optional).
func (p *Portal) createRefund(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	in := refunds.CreateParams{PaymentIntent: id}
	if a := strings.TrimSpace(r.PostFormValue("amount_minor")); a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			err := errs.Invalid("amount_minor", "amount_invalid", "Give the amount as a whole number of minor units.")
			return p.actionError(w, r, c, err, p.intentAgain(w, r, c, id, err), "amount_minor", "reason")
		}
		in.AmountMinor = &n
	}
	if reason := r.PostFormValue("reason"); reason != "" {
		in.Reason = &reason
	}
	var re *refunds.Refund
	path, err := p.once(r, c, url.Values{"intent": {id}, "amount_minor": {r.PostFormValue("amount_minor")}, "reason": {r.PostFormValue("reason")}},
		func(ctx context.Context, cl store.Claim) (string, error) {
			var err error
			if re, err = p.refunds().Create(ctx, cl, c.principal(), in); err != nil {
				return "", err
			}
			notice := "refund_created"
			if re.Status == refunds.RequiresApproval {
				notice = "refund_requires_approval"
			}
			return c.path("payment_intents", id) + "?done=" + notice, nil
		})
	detail := "form submitted again: nothing created"
	if re != nil {
		detail = re.ID + " " + string(re.Status)
	}
	p.audit(r.Context(), c, "refund.create", id, err, detail)
	if err != nil {
		return p.actionError(w, r, c, err, p.intentAgain(w, r, c, id, err), "amount_minor", "reason")
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
	return nil
}

// approveRefund approves a refund waiting for a second principal.
func (p *Portal) approveRefund(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	approve := func(ctx context.Context, pr auth.Principal, id string) (*refunds.Refund, error) {
		return p.refunds().Approve(ctx, store.NoClaim, pr, id)
	}
	return p.refundAction(w, r, c, "refund.approve", approve, "refund_approved")
}

// cancelRefund cancels a refund waiting for approval.
func (p *Portal) cancelRefund(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	cancel := func(ctx context.Context, pr auth.Principal, id string) (*refunds.Refund, error) {
		return p.refunds().Cancel(ctx, store.NoClaim, pr, id)
	}
	return p.refundAction(w, r, c, "refund.cancel", cancel, "refund_canceled")
}

// refundAction runs approve or cancel and goes back to the refund's intent.
func (p *Portal) refundAction(w http.ResponseWriter, r *http.Request, c *reqCtx, action string,
	do func(context.Context, auth.Principal, string) (*refunds.Refund, error), notice string) error {
	id := r.PathValue("id")
	re, err := p.refunds().Get(r.Context(), c.principal(), id)
	if err != nil {
		return err
	}
	_, err = do(r.Context(), c.principal(), id)
	p.audit(r.Context(), c, action, id, err, "")
	if err != nil {
		return p.actionError(w, r, c, err, p.intentAgain(w, r, c, re.PaymentIntent, err))
	}
	return redirect(w, r, c.path("payment_intents", re.PaymentIntent), notice)
}

// intentAgain renders the intent page again with an action's error.
func (p *Portal) intentAgain(w http.ResponseWriter, r *http.Request, c *reqCtx, id string, err error) func(v *view) error {
	return func(v *view) error { return p.renderIntent(w, r, c, statusOf(err), id, v) }
}
