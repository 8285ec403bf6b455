package sandbox

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/requestlog"
)

// PageBackend is the payment side of the hosted pages (payments.Service
// implements it): what a page shows, and what a submission does. The token
// from the page's URL is the only credential.
type PageBackend interface {
	HostedPage(ctx context.Context, id, token string) (providers.HostedPage, error)
	SubmitHostedPage(ctx context.Context, id, token string, sub providers.PageSubmission) (providers.HostedPage, error)
}

//go:embed templates/*.html
var templateFS embed.FS

var pageTemplates = template.Must(template.New("pages").Funcs(template.FuncMap{}).ParseFS(templateFS, "templates/*.html"))

// maxForm bounds a page submission's body.
const maxForm = 16 << 10

// Pages serves the sandbox's hosted pages at /sandbox/pay/{id}?t=<token>:
// server-rendered HTML with inline styles, no scripts and no external
// assets, so any browser (or a script posting the forms) can complete them.
type Pages struct {
	backend PageBackend
	log     *slog.Logger
	now     func() time.Time
}

// NewPages makes the hosted pages over backend.
func NewPages(backend PageBackend, log *slog.Logger) *Pages {
	if log == nil {
		log = slog.Default()
	}
	return &Pages{backend: backend, log: log, now: time.Now}
}

// Mount registers the pages on mux.
func (p *Pages) Mount(mux *http.ServeMux) {
	mux.HandleFunc("GET "+PagePath+"{id}", p.show)
	mux.HandleFunc("POST "+PagePath+"{id}", p.submit)
}

// pageData is what the templates render.
type pageData struct {
	Page     providers.HostedPage
	Amount   string
	Action   string // the page's own URL, token included
	Token    string
	Error    string
	Phone    string
	ExpMonth string
	ExpYear  string
	Methods  []methodOption
	Title    string
}

type methodOption struct {
	Value, Label string
	Checked      bool
}

var methodLabels = map[string]string{"telebirr": "telebirr", "mpesa": "M-PESA", "cbebirr": "CBE Birr", "ebirr": "E-Birr",
	"amole": "Amole", "awashbirr": "Awash Birr"}

func (p *Pages) show(w http.ResponseWriter, r *http.Request) {
	id, token := r.PathValue("id"), r.URL.Query().Get("t")
	page, err := p.backend.HostedPage(r.Context(), id, token)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	p.render(w, http.StatusOK, p.data(page, id, token))
}

func (p *Pages) submit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		p.renderStatus(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	id, token := r.PathValue("id"), r.FormValue("t")
	page, err := p.backend.HostedPage(r.Context(), id, token)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	if page.Step == "" {
		p.leave(w, r, page, id, token)
		return
	}
	sub, bad, echo := p.readForm(r, page)
	if bad != "" {
		d := p.data(page, id, token)
		d.Error, d.Phone, d.ExpMonth, d.ExpYear = bad, echo.Phone, echo.ExpMonth, echo.ExpYear
		p.render(w, http.StatusBadRequest, d)
		return
	}
	after, err := p.backend.SubmitHostedPage(r.Context(), id, token, sub)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	p.leave(w, r, after, id, token)
}

// leave sends the browser on: to the page again for its next step, or back
// to the merchant's return_url once the intent no longer waits for the page.
func (p *Pages) leave(w http.ResponseWriter, r *http.Request, page providers.HostedPage, id, token string) {
	switch {
	case page.Step != "":
		http.Redirect(w, r, pageURL(id, token), http.StatusSeeOther)
	case page.ReturnURL != "":
		http.Redirect(w, r, page.ReturnURL, http.StatusSeeOther)
	default:
		p.render(w, http.StatusOK, p.data(page, id, token))
	}
}

// echoed are the harmless fields a re-rendered form keeps; the PIN, card
// number and CVC are never sent back.
type echoed struct{ Phone, ExpMonth, ExpYear string }

// readForm checks the submitted fields of the page's current step. It
// returns the submission, or a message for the customer.
func (p *Pages) readForm(r *http.Request, page providers.HostedPage) (providers.PageSubmission, string, echoed) {
	sub := providers.PageSubmission{Step: page.Step}
	f := func(name string) string { return strings.TrimSpace(r.PostFormValue(name)) }
	switch page.Step {
	case providers.StepWalletAHPP:
		phone := strings.ReplaceAll(f("phone"), " ", "")
		e := echoed{Phone: phone}
		if !validPhone(phone) {
			return sub, "Enter the phone number of your wallet.", e
		}
		pin := f("pin")
		if len(pin) < 4 || len(pin) > 6 || !digits(pin) {
			return sub, "Your PIN is 4 to 6 digits.", e
		}
		sub.Phone, sub.PIN = phone, pin
		return sub, "", e
	case providers.StepCard:
		e := echoed{ExpMonth: f("exp_month"), ExpYear: f("exp_year")}
		number := NormalizeCardNumber(f("card_number"))
		if number == "" || !card.LuhnValid(number) {
			return sub, "Check the card number.", e
		}
		month, err := strconv.Atoi(e.ExpMonth)
		if err != nil || month < 1 || month > 12 {
			return sub, "The expiry month is 1 to 12.", e
		}
		year, err := strconv.Atoi(e.ExpYear)
		if err != nil || year < 0 || (len(e.ExpYear) != 2 && len(e.ExpYear) != 4) {
			return sub, "The expiry year is two or four digits.", e
		}
		if year < 100 {
			year += 2000
		}
		now := p.now().UTC()
		if year < now.Year() || (year == now.Year() && month < int(now.Month())) {
			return sub, "The card has expired.", e
		}
		cvc := f("cvc")
		if len(cvc) < 3 || len(cvc) > 4 || !digits(cvc) {
			return sub, "The security code is 3 or 4 digits.", e
		}
		sub.Card = providers.Card{Number: number, ExpMonth: month, ExpYear: year, CVC: cvc}
		return sub, "", e
	case providers.StepThreeDS:
		switch o := f("outcome"); o {
		case "complete", "fail":
			sub.Outcome = o
			return sub, "", echoed{}
		}
		return sub, "Choose Complete or Fail.", echoed{}
	case providers.StepMethodPicker:
		m := f("method")
		for _, ok := range page.Methods {
			if m == ok {
				sub.Method = m
				return sub, "", echoed{}
			}
		}
		return sub, "Choose how to pay.", echoed{}
	}
	return sub, "This page cannot take a submission.", echoed{}
}

func validPhone(s string) bool {
	t := strings.TrimPrefix(s, "+")
	return len(t) >= 6 && len(t) <= 15 && digits(t)
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func pageURL(id, token string) string {
	return PagePath + url.PathEscape(id) + "?t=" + url.QueryEscape(token)
}

func (p *Pages) data(page providers.HostedPage, id, token string) pageData {
	d := pageData{Page: page, Amount: formatAmount(page.AmountMinor, page.Currency), Action: pageURL(id, token), Token: token}
	switch page.Step {
	case providers.StepWalletAHPP:
		d.Title = "Pay with " + providers.DisplayName(providers.WalletA)
	case providers.StepCard:
		d.Title = "Pay by card"
		if page.Error != "" && page.AttemptsLeft > 0 {
			d.Error = page.Error + " Try another card (" + strconv.Itoa(page.AttemptsLeft) + " attempts left)."
		}
	case providers.StepThreeDS:
		d.Title = "3-D Secure"
	case providers.StepMethodPicker:
		d.Title = "Pay with " + providers.DisplayName(providers.WalletD)
		for _, m := range page.Methods {
			label := methodLabels[m]
			if label == "" {
				label = m
			}
			d.Methods = append(d.Methods, methodOption{Value: m, Label: label, Checked: m == page.Method})
		}
	default:
		d.Title = "Payment " + page.Status
		if page.Status == "requires_capture" {
			d.Title = "Payment authorised" // the merchant captures it later
		}
	}
	return d
}

func (p *Pages) render(w http.ResponseWriter, status int, d pageData) {
	name := "done"
	switch d.Page.Step {
	case providers.StepWalletAHPP:
		name = "wallet_a_hpp"
	case providers.StepCard:
		name = "card"
	case providers.StepThreeDS:
		name = "three_ds"
	case providers.StepMethodPicker:
		name = "method_picker"
	}
	p.write(w, status, name, d)
}

func (p *Pages) renderStatus(w http.ResponseWriter, status int, msg string) {
	p.write(w, status, "message", pageData{Title: http.StatusText(status), Error: msg})
}

func (p *Pages) write(w http.ResponseWriter, status int, name string, d pageData) {
	var b strings.Builder
	if err := pageTemplates.ExecuteTemplate(&b, name, d); err != nil {
		p.log.Error("render hosted page", "template", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// No scripts, frames or outside resources; the token in the URL never
	// leaks through a Referer; nothing is cached.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprint(w, b.String())
}

// fail answers a backend error: 404 for an unknown intent or a wrong token
// (one answer for both), 500 otherwise (logged without the form).
func (p *Pages) fail(w http.ResponseWriter, r *http.Request, err error) {
	if e := errs.As(err); e != nil && e.Kind == errs.KindNotFound {
		p.renderStatus(w, http.StatusNotFound, "This payment page does not exist or its link is incomplete.")
		return
	}
	p.log.ErrorContext(r.Context(), "hosted page", "path", requestlog.RedactPath(r.URL.Path), "err", err)
	p.renderStatus(w, http.StatusInternalServerError, "Something went wrong; the payment was not changed.")
}

// formatAmount writes minor units in major units: 12345 USD is "123.45 USD".
func formatAmount(minor int64, currency string) string { return money.Format(minor, currency) }
