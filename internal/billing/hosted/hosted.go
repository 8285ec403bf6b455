// Package hosted serves the hosted invoice page: what the customer sees at
// an invoice's hosted_invoice_url, with the merchant's name, the lines and
// the amount due, and a form to pay it with any rail offered for its
// currency. Server-rendered HTML with inline styles and no scripts or
// outside assets, so it works in any browser (or from a script posting its
// forms); a pending wallet approval refreshes itself with a meta tag.
package hosted

import (
	"context"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/payd/payd/internal/billing"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/providers"
)

//go:embed templates/*.html
var templateFS embed.FS

var page = template.Must(template.New("invoice").Funcs(template.FuncMap{
	"amount": money.Format,
	"date":   func(t time.Time) string { return t.UTC().Format("2 Jan 2006") },
}).ParseFS(templateFS, "templates/*.html"))

// maxForm bounds a form submission's body.
const maxForm = 8 << 10

// Pages serves the hosted invoice pages.
type Pages struct {
	svc       *billing.Service
	merchants *merchants.Service
	log       *slog.Logger
}

// New makes the pages.
func New(svc *billing.Service, m *merchants.Service, log *slog.Logger) *Pages {
	if log == nil {
		log = slog.Default()
	}
	return &Pages{svc: svc, merchants: m, log: log}
}

// Mount registers the pages on mux under billing.HostedPath.
func (p *Pages) Mount(mux *http.ServeMux) {
	mux.HandleFunc("GET "+billing.HostedPath+"{id}", p.show)
	mux.HandleFunc("POST "+billing.HostedPath+"{id}/pay", p.pay)
	mux.HandleFunc("POST "+billing.HostedPath+"{id}/confirm", p.confirm)
}

// data is what the template renders.
type data struct {
	Merchant string
	Invoice  billing.Invoice
	Token    string
	Options  []billing.RailOption
	Intent   *payments.Intent
	Waiting  bool // a wallet approval is pending: the page refreshes
	OTP      bool // the intent waits for an SMS code
	Error    string
	Phone    string
	Chosen   string
}

func (p *Pages) show(w http.ResponseWriter, r *http.Request) {
	id, token := r.PathValue("id"), r.URL.Query().Get("t")
	d, ok := p.load(w, r, id, token)
	if !ok {
		return
	}
	if piID := r.URL.Query().Get("payment_intent"); piID != "" && d.Invoice.Status == billing.Open {
		if pi, err := p.svc.Intent(r.Context(), d.Invoice, piID); err == nil {
			d.Intent = &pi
			switch {
			case pi.Status == payments.RequiresAction && pi.NextAction != nil && pi.NextAction.Type == providers.ActionCollectOTP:
				d.OTP = true
			case pi.Status == payments.RequiresAction, pi.Status == payments.Processing:
				d.Waiting = true
			case pi.Status == payments.Canceled && pi.LastError != nil:
				d.Error = "The payment was refused: " + pi.LastError.Message
			}
		}
	}
	p.render(w, http.StatusOK, d)
}

// load reads the invoice of a link and the merchant's name; a wrong link
// answers the 404 page.
func (p *Pages) load(w http.ResponseWriter, r *http.Request, id, token string) (data, bool) {
	v, err := p.svc.HostedInvoice(r.Context(), id, token)
	if err != nil {
		p.fail(w, err)
		return data{}, false
	}
	m, err := p.merchants.Get(r.Context(), v.MerchantID)
	if err != nil {
		p.fail(w, err)
		return data{}, false
	}
	return data{Merchant: m.Name, Invoice: v, Token: token, Options: billing.RailOptions(v.Currency)}, true
}

func (p *Pages) pay(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "The form could not be read.", http.StatusBadRequest)
		return
	}
	id, token := r.PathValue("id"), r.PostFormValue("t")
	rail, phone := r.PostFormValue("rail"), strings.ReplaceAll(strings.TrimSpace(r.PostFormValue("phone")), " ", "")
	pi, err := p.svc.HostedPay(context.WithoutCancel(r.Context()), id, token, rail, phone)
	if err != nil && pi.ID == "" {
		if e := errs.As(err); e != nil && (e.Kind == errs.KindInvalid || e.Kind == errs.KindConflict) {
			d, ok := p.load(w, r, id, token)
			if !ok {
				return
			}
			d.Error, d.Phone, d.Chosen = customerMessage(e), phone, rail
			p.render(w, http.StatusBadRequest, d)
			return
		}
		p.fail(w, err)
		return
	}
	if pi.NextAction != nil && pi.NextAction.RedirectURL != "" {
		http.Redirect(w, r, pi.NextAction.RedirectURL, http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, pageURL(id, token, pi.ID), http.StatusSeeOther)
}

func (p *Pages) confirm(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "The form could not be read.", http.StatusBadRequest)
		return
	}
	id, token, piID := r.PathValue("id"), r.PostFormValue("t"), r.PostFormValue("payment_intent")
	_, err := p.svc.HostedConfirm(context.WithoutCancel(r.Context()), id, token, piID, strings.TrimSpace(r.PostFormValue("otp")))
	if e := errs.As(err); err != nil && (e == nil || e.Kind == errs.KindNotFound || e.Kind == errs.KindInternal) {
		p.fail(w, err)
		return
	}
	// A wrong code cancels the intent: the page shows the refusal and the
	// form to try again.
	http.Redirect(w, r, pageURL(id, token, piID), http.StatusSeeOther)
}

// customerMessage words a refusal for the customer.
func customerMessage(e *errs.Error) string {
	switch e.Param {
	case "customer_msisdn":
		return "Enter the phone number of your account, in international form (+253…)."
	case "rail":
		return "Choose how to pay."
	}
	return e.Message
}

func pageURL(id, token, intentID string) string {
	u := billing.HostedPath + url.PathEscape(id) + "?t=" + url.QueryEscape(token)
	if intentID != "" {
		u += "&payment_intent=" + url.QueryEscape(intentID)
	}
	return u
}

func (p *Pages) fail(w http.ResponseWriter, err error) {
	if e := errs.As(err); e != nil && e.Kind == errs.KindNotFound {
		p.render(w, http.StatusNotFound, data{Error: "This invoice link is not valid."})
		return
	}
	p.log.Error("hosted invoice page", "err", err)
	p.render(w, http.StatusInternalServerError, data{Error: "Something went wrong; try again in a moment."})
}

func (p *Pages) render(w http.ResponseWriter, status int, d data) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	if err := page.ExecuteTemplate(w, "invoice.html", d); err != nil {
		p.log.Error("render hosted invoice page", "err", err)
	}
}
