package portal

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/payd/payd/internal/disputes"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
)

// maxEvidenceForm bounds the evidence form's body: six texts of up to 20,000
// characters, each up to 4 bytes and percent-encoded (3 characters a byte).
const maxEvidenceForm = 6*disputes.MaxEvidenceText*4*3 + 64<<10

// WithDisputes adds the dispute pages: the list (those needing a response
// first, with their due dates), and each dispute's page with its evidence
// form (save, or submit), the close form (accept the loss) and a timeline.
func (p *Portal) WithDisputes(get func() *disputes.Service) {
	p.disputes = get
	p.addCapability(capability{
		nav: navItem{Section: "disputes", Label: "Disputes", Path: "disputes"},
		routes: func(m *http.ServeMux) {
			m.Handle("GET /portal/{mode}/disputes", p.page(roleViewer, p.disputesList))
			m.Handle("GET /portal/{mode}/disputes/{id}", p.page(roleViewer, p.disputePage))
			m.Handle("POST /portal/{mode}/disputes/{id}/evidence", p.pageLimit(roleApprover, maxEvidenceForm, p.saveEvidence))
			m.Handle("POST /portal/{mode}/disputes/{id}/close", p.page(roleApprover, p.closeDispute))
		},
	})
}

// maxNeedingResponse bounds the disputes listed as needing a response.
const maxNeedingResponse = 100

type disputesData struct {
	listData[*disputes.Dispute]
	// NeedsResponse are the disputes waiting for the merchant, soonest due first.
	NeedsResponse []*disputes.Dispute
	Statuses      []string
}

func (p *Portal) disputesList(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	page, err := pageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := disputes.ListParams{PaymentIntent: q.Get("payment_intent"), Status: disputes.Status(q.Get("status"))}
	if f.Status != "" && !contains(disputes.Statuses, f.Status) {
		return errs.Invalid("status", "parameter_invalid", "status must be one of needs_response, under_review, won, lost")
	}
	pr := c.principal()
	open, _, err := p.disputes().List(r.Context(), pr, disputes.ListParams{Status: disputes.NeedsResponse},
		pagination.Page{Limit: maxNeedingResponse})
	if err != nil {
		return err
	}
	sort.SliceStable(open, func(i, j int) bool { return open[i].EvidenceDueBy.Before(open[j].EvidenceDueBy) })
	list, more, err := p.disputes().List(r.Context(), pr, f, page)
	if err != nil {
		return err
	}
	d := disputesData{listData: newList(list, more, page, func(d *disputes.Dispute) string { return d.ID }), NeedsResponse: open}
	for _, s := range disputes.Statuses {
		d.Statuses = append(d.Statuses, string(s))
	}
	d.Filters = map[string]string{}
	for _, k := range []string{"status", "payment_intent"} {
		if x := q.Get(k); x != "" {
			d.Filters[k] = x
		}
	}
	v := &view{Form: q, Title: "Disputes", Section: "disputes", Data: d}
	p.render(w, r, c, http.StatusOK, "disputes", v)
	return nil
}

func contains[T comparable](xs []T, x T) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// evidenceField is one text of the evidence form.
type evidenceField struct {
	Name, Label, Value string
}

var evidenceLabels = map[string]string{
	"customer_name":            "Customer name",
	"customer_email":           "Customer email",
	"product_description":      "Product or service description",
	"shipping_tracking_number": "Shipping tracking number",
	"receipt_text":             "Receipt",
	"uncategorized_text":       "Other evidence",
}

type disputeData struct {
	D        *disputes.Dispute
	Fields   []evidenceField
	Editable bool // needs a response and not yet due
	FormKey  string
	Timeline []timelineEntry
}

func (p *Portal) disputePage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderDispute(w, r, c, http.StatusOK, &view{})
}

func (p *Portal) renderDispute(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	d, err := p.disputes().Get(r.Context(), c.principal(), r.PathValue("id"))
	if err != nil {
		return err
	}
	tl, err := p.timeline(r.Context(), c, d.ID, d.CreatedAt, "opened")
	if err != nil {
		return err
	}
	data := disputeData{D: d, FormKey: newFormKey(), Timeline: tl,
		Editable: d.Status == disputes.NeedsResponse && p.cfg.DB.Now().Before(d.EvidenceDueBy)}
	saved := map[string]*string{"customer_name": d.Evidence.CustomerName, "customer_email": d.Evidence.CustomerEmail,
		"product_description": d.Evidence.ProductDescription, "shipping_tracking_number": d.Evidence.ShippingTrackingNumber,
		"receipt_text": d.Evidence.ReceiptText, "uncategorized_text": d.Evidence.UncategorizedText}
	for _, name := range disputes.EvidenceFields {
		f := evidenceField{Name: name, Label: evidenceLabels[name]}
		if vs, ok := v.Form["evidence."+name]; ok && len(vs) > 0 {
			f.Value = vs[0] // what was typed, shown again with the error
		} else if s := saved[name]; s != nil {
			f.Value = *s
		}
		data.Fields = append(data.Fields, f)
	}
	v.Title, v.Section, v.Data = "Dispute "+d.ID, "disputes", data
	p.render(w, r, c, status, "dispute", v)
	return nil
}

// saveEvidence saves the evidence form (fields named evidence.<name>; an
// empty field clears it) and, when the submit button was used, submits it.
// Submitting the same form twice saves and submits once.
func (p *Portal) saveEvidence(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	in := disputes.UpdateParams{Evidence: disputes.EvidenceUpdate{}, Submit: r.PostFormValue("submit") == "true"}
	fields := url.Values{"dispute": {id}, "submit": {r.PostFormValue("submit")}}
	keep := []string{}
	for _, name := range disputes.EvidenceFields {
		key := "evidence." + name
		keep = append(keep, key)
		if _, ok := r.PostForm[key]; !ok {
			continue
		}
		text := strings.TrimSpace(strings.ReplaceAll(r.PostFormValue(key), "\r\n", "\n"))
		fields.Set(key, text)
		if text == "" {
			in.Evidence[name] = nil
		} else {
			in.Evidence[name] = &text
		}
	}
	notice := "evidence_saved"
	if in.Submit {
		notice = "evidence_submitted"
	}
	path, err := p.once(r, c, fields, func(ctx context.Context, cl store.Claim) (string, error) {
		if _, err := p.disputes().Update(ctx, cl, c.principal(), id, in); err != nil {
			return "", err
		}
		return c.path("disputes", id) + "?done=" + notice, nil
	})
	p.audit(r.Context(), c, "dispute."+strings.TrimPrefix(notice, "evidence_"), id, err, "")
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderDispute(w, r, c, statusOf(err), v) }, keep...)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
	return nil
}

// closeDispute accepts the dispute's loss.
func (p *Portal) closeDispute(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	_, err := p.disputes().Close(r.Context(), store.NoClaim, c.principal(), id)
	p.audit(r.Context(), c, "dispute.close", id, err, "")
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderDispute(w, r, c, statusOf(err), v) })
	}
	return redirect(w, r, c.path("disputes", id), "dispute_closed")
}
