package portal

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// WithPayments adds the payment intent pages (list with filters, detail with
// a timeline) and the dashboard's volume chart, over the payments service.
func (p *Portal) WithPayments(get func() *payments.Service) {
	p.payments = get
	p.volume = p.paymentVolume
	p.daily = p.paymentDaily
	p.addCapability(capability{
		nav: navItem{Section: "payment_intents", Label: "Payments", Path: "payment_intents"},
		routes: func(m *http.ServeMux) {
			m.Handle("GET /portal/{mode}/payment_intents", p.page(roleViewer, p.intentsList))
			m.Handle("GET /portal/{mode}/payment_intents/{id}", p.page(roleViewer, p.intentPage))
			m.Handle("POST /portal/{mode}/payment_intents/{id}/capture", p.page(roleApprover, p.captureIntent))
			m.Handle("POST /portal/{mode}/payment_intents/{id}/cancel", p.page(roleApprover, p.cancelIntent))
		},
	})
}

type intentsData struct {
	listData[payments.Intent]
	Statuses  []string
	Providers []string
}

// intentsList lists intents newest first with filters: status, provider and
// a creation date range (UTC days, the "to" day included).
func (p *Portal) intentsList(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	q := r.URL.Query()
	f := map[string]string{}
	qs := url.Values{}
	for _, k := range []string{"limit", "starting_after", "ending_before", "status", "provider"} {
		if v := q.Get(k); v != "" {
			qs.Set(k, v)
		}
	}
	if qs.Get("limit") == "" {
		qs.Set("limit", "25")
	}
	for _, k := range []string{"status", "provider", "from", "to"} {
		if v := q.Get(k); v != "" {
			f[k] = v
		}
	}
	fields := map[string]string{}
	if v := f["from"]; v != "" {
		if d, err := time.Parse("2006-01-02", v); err != nil {
			fields["from"] = "Give a date as YYYY-MM-DD."
		} else {
			qs.Set("created[gte]", d.Format(time.RFC3339))
		}
	}
	if v := f["to"]; v != "" {
		if d, err := time.Parse("2006-01-02", v); err != nil {
			fields["to"] = "Give a date as YYYY-MM-DD."
		} else {
			qs.Set("created[lt]", d.AddDate(0, 0, 1).Format(time.RFC3339))
		}
	}
	v := &view{Title: "Payments", Section: "payment_intents", Form: q}
	data := intentsData{Statuses: []string{"requires_action", "processing", "requires_capture", "succeeded", "canceled", "compliance_review"},
		Providers: providers.PaymentProviders}
	data.Filters = f
	lp, err := payments.ParseListQuery(qs)
	if err != nil {
		e := errs.As(err)
		if e == nil || e.Param == "" {
			return err
		}
		name := map[string]string{"created[gte]": "from", "created[lt]": "to"}[e.Param]
		if name == "" {
			name = e.Param
		}
		fields[name] = e.Message
	}
	if len(fields) > 0 {
		v.Error, v.ErrorCode, v.FieldErrors, v.Data = "Check the filters.", "parameter_invalid", fields, data
		p.render(w, r, c, http.StatusBadRequest, "payment_intents", v)
		return nil
	}
	shown := lp.Page
	if lp.CreatedUntil != nil && lp.Page.EndingBefore == "" {
		// Ids are time-ordered: start the newest-first scan just above the
		// range's end (a minute of margin for clocks) instead of at the
		// newest intent, so a day long ago costs what today costs.
		ceiling := ids.Floor("pi_", lp.CreatedUntil.Add(time.Minute))
		if lp.Page.StartingAfter == "" || ceiling < lp.Page.StartingAfter {
			lp.Page.StartingAfter = ceiling
		}
	}
	list, err := p.payments().List(r.Context(), c.principal(), lp)
	if err != nil {
		return err
	}
	ld := newList(list.Data, list.HasMore, shown, func(i payments.Intent) string { return i.ID })
	ld.Filters = f
	data.listData = ld
	v.Data = data
	p.render(w, r, c, http.StatusOK, "payment_intents", v)
	return nil
}

// timelineEntry is one moment in an object's life.
type timelineEntry struct {
	At     time.Time
	Label  string
	Detail string
	Event  string // the event id, when the entry is an event
}

type intentData struct {
	Intent   payments.Intent
	Timeline []timelineEntry
	Metadata string
	Details  string
	Refunds  *intentRefunds // nil without the refunds capability
	// Capturable and Cancelable show the Capture and Cancel forms;
	// ActionKey is their idempotency key (a new one per page).
	Capturable, Cancelable bool
	CaptureKey, CancelKey  string
	CancellationReasons    []string
}

// intentPage shows one intent: its fields and a timeline of its status
// changes and events. Another merchant's or the other mode's intent is 404.
func (p *Portal) intentPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderIntent(w, r, c, http.StatusOK, r.PathValue("id"), &view{})
}

// renderIntent renders the intent page with v's notices and errors.
func (p *Portal) renderIntent(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, id string, v *view) error {
	in, err := p.payments().Get(r.Context(), c.principal(), id)
	if err != nil {
		return err
	}
	tl, err := p.timeline(r.Context(), c, in.ID, in.CreatedAt, "created")
	if err != nil {
		return err
	}
	var refunds *intentRefunds
	if p.refunds != nil {
		if refunds, err = p.refundsOf(r.Context(), c, in); err != nil {
			return err
		}
		tl = append(tl, refunds.timeline...)
	}
	if in.SucceededAt != nil && !hasLabel(tl, "payment_intent.succeeded") {
		tl = append(tl, timelineEntry{At: *in.SucceededAt, Label: "succeeded"})
	}
	if in.CanceledAt != nil && !hasLabel(tl, "payment_intent.canceled") {
		tl = append(tl, timelineEntry{At: *in.CanceledAt, Label: "canceled"})
	}
	sortTimeline(tl)
	d := intentData{Intent: in, Timeline: tl, Metadata: prettyJSON(in.Metadata), Refunds: refunds,
		Capturable: in.Status == payments.RequiresCapture, CaptureKey: newFormKey(), CancelKey: newFormKey(),
		Cancelable:          in.Status == payments.RequiresAction || in.Status == payments.RequiresCapture,
		CancellationReasons: []string{payments.ReasonRequestedByCustomer, payments.ReasonDuplicate, payments.ReasonFraudulent, payments.ReasonAbandoned}}
	if in.PaymentMethodDetails != nil {
		d.Details = prettyJSON(in.PaymentMethodDetails)
	}
	v.Title, v.Section, v.Data = "Payment "+in.ID, "payment_intents", d
	p.render(w, r, c, status, "payment_intent", v)
	return nil
}

// captureIntent captures a held card authorisation from the intent page:
// amount_to_capture_minor (empty: all that is capturable). A form
// submitted twice captures once (p.once).
func (p *Portal) captureIntent(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	var amount *int64
	if a := strings.TrimSpace(r.PostFormValue("amount_to_capture_minor")); a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			err := errs.Invalid("amount_to_capture_minor", "amount_invalid", "Give the amount as a whole number of minor units.")
			return p.actionError(w, r, c, err, p.intentAgain(w, r, c, id, err), "amount_to_capture_minor")
		}
		amount = &n
	}
	path, err := p.once(r, c, url.Values{"intent": {id}, "action": {"capture"}, "amount_to_capture_minor": {r.PostFormValue("amount_to_capture_minor")}},
		func(ctx context.Context, cl store.Claim) (string, error) {
			if _, err := p.payments().Capture(ctx, cl, c.principal(), id, amount); err != nil {
				return "", err
			}
			return c.path("payment_intents", id) + "?done=payment_captured", nil
		})
	p.audit(r.Context(), c, "payment_intent.capture", id, err, r.PostFormValue("amount_to_capture_minor"))
	if err != nil {
		return p.actionError(w, r, c, err, p.intentAgain(w, r, c, id, err), "amount_to_capture_minor")
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
	return nil
}

// cancelIntent cancels the intent from its page, with an optional
// cancellation_reason; once per form, like every portal action.
func (p *Portal) cancelIntent(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	var reason *string
	if v := r.PostFormValue("cancellation_reason"); v != "" {
		reason = &v
	}
	path, err := p.once(r, c, url.Values{"intent": {id}, "action": {"cancel"}, "cancellation_reason": {r.PostFormValue("cancellation_reason")}},
		func(ctx context.Context, cl store.Claim) (string, error) {
			if _, err := p.payments().Cancel(ctx, cl, c.principal(), id, reason); err != nil {
				return "", err
			}
			return c.path("payment_intents", id) + "?done=payment_canceled", nil
		})
	p.audit(r.Context(), c, "payment_intent.cancel", id, err, r.PostFormValue("cancellation_reason"))
	if err != nil {
		return p.actionError(w, r, c, err, p.intentAgain(w, r, c, id, err), "cancellation_reason")
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
	return nil
}

// timeline returns an object's events (only those of the signed-in merchant
// and mode) as timeline entries, with its creation first.
func (p *Portal) timeline(ctx context.Context, c *reqCtx, objectID string, created time.Time, createdLabel string) ([]timelineEntry, error) {
	evs, err := events.ForObject(ctx, p.cfg.DB, objectID)
	if err != nil {
		return nil, err
	}
	tl := []timelineEntry{{At: created, Label: createdLabel}}
	for _, e := range evs {
		if e.MerchantID != c.sess.MerchantID || e.Livemode != c.live {
			continue
		}
		tl = append(tl, timelineEntry{At: e.CreatedAt, Label: e.Type, Event: e.ID, Detail: eventStatus(e)})
	}
	return tl, nil
}

// eventStatus reads the object's status as the event recorded it.
func eventStatus(e events.Event) string {
	var o struct {
		Status string `json:"status"`
	}
	if json.Unmarshal(e.Data, &o) == nil && o.Status != "" {
		return "status " + o.Status
	}
	return ""
}

func hasLabel(tl []timelineEntry, label string) bool {
	for _, e := range tl {
		if e.Label == label {
			return true
		}
	}
	return false
}

func sortTimeline(tl []timelineEntry) {
	sort.SliceStable(tl, func(i, j int) bool { return tl[i].At.Before(tl[j].At) })
}

func prettyJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return ""
	}
	return string(b)
}

// paymentVolume is today's (UTC) volume and success rate per provider, one
// chart per currency.
func (p *Portal) paymentVolume(ctx context.Context, c *reqCtx) ([]*volumeChart, error) {
	since := p.now().UTC().Truncate(24 * time.Hour)
	vols, err := p.payments().VolumeSince(ctx, c.principal(), since)
	if err != nil {
		return nil, err
	}
	var out []*volumeChart
	for _, v := range vols {
		if len(out) == 0 || out[len(out)-1].Currency != v.Currency {
			out = append(out, &volumeChart{Currency: v.Currency})
		}
		ch := out[len(out)-1]
		ch.Rows = append(ch.Rows, volumeRow{Provider: v.Provider, VolumeMinor: v.SucceededMinor, Attempts: v.Attempts, Succeeded: v.Succeeded})
	}
	return out, nil
}
