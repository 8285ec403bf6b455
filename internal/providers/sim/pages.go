package sim

import (
	"crypto/subtle"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/providers/protocol"
)

// The provider's hosted pages, at {sim}/{provider}/pay/{id}?t=<token>: the
// same forms, field names and test cards as payd's sandbox pages, but on the
// provider's own domain. Plain HTML forms, no
// scripts, so a browser or a script can complete them.

//go:embed templates/*.html
var templateFS embed.FS

var pageTemplates = template.Must(template.ParseFS(templateFS, "templates/*.html"))

// The simulator's test cards.
const (
	cardSuccess  = "4242424242424242"
	cardDeclined = "4000000000000002"
	card3DS      = "4000000000003220"
)

// pageData is what a page template renders.
type pageData struct {
	Title    string
	Provider string
	Amount   string
	Action   string
	Token    string
	Error    string
	Phone    string
	Methods  []string
	Status   string
	Return   string
	Reason   string
}

// pagePayment finds the payment behind a page URL and checks its token (a
// wrong token and an unknown id get the same 404).
func (s *Sim) pagePayment(r *http.Request, token string) (*account, *payment) {
	id := r.PathValue("id")
	s.mu.Lock()
	a := s.pages[id]
	s.mu.Unlock()
	if a == nil || a.provider != r.PathValue("provider") {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.payments[id]
	if p == nil || subtle.ConstantTimeCompare([]byte(p.pageToken), []byte(token)) != 1 {
		return nil, nil
	}
	return a, p
}

func (s *Sim) showPage(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("t")
	a, p := s.pagePayment(r, token)
	if p == nil {
		s.renderPage(w, http.StatusNotFound, "message", pageData{Title: "Not found", Error: "This payment page does not exist or its link is incomplete."})
		return
	}
	a.mu.Lock()
	ev := s.expire(a, p, s.cfg.Now().UTC())
	d, name := s.pageView(p, token)
	a.mu.Unlock()
	s.send(a, ev)
	s.renderPage(w, http.StatusOK, name, d)
}

// pageView is the page to show for p in its state (a.mu held).
func (s *Sim) pageView(p *payment, token string) (pageData, string) {
	d := pageData{Provider: p.provider, Amount: formatAmount(p.AmountMinor, p.Currency),
		Action: "/" + p.provider + "/pay/" + p.ID, Token: token, Status: p.Status, Return: p.returnURL}
	switch {
	case p.Status != protocol.StatusPending:
		d.Title = "Payment " + p.Status
		if p.Failure != nil {
			d.Reason = p.Failure.Message
		}
		return d, "done"
	case p.pageStep == stepHPP:
		d.Title = "Pay with " + p.provider
		return d, "hpp"
	case p.pageStep == stepCard:
		d.Title = "Pay by card"
		return d, "card"
	case p.pageStep == stepThreeDS:
		d.Title = "3-D Secure"
		return d, "three_ds"
	default:
		d.Title = "Pay with " + p.provider
		d.Methods = walletDMethods
		return d, "method_picker"
	}
}

// maxForm bounds a page submission.
const maxForm = 16 << 10

func (s *Sim) submitPage(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		s.renderPage(w, http.StatusBadRequest, "message", pageData{Title: "Bad request", Error: "The form could not be read."})
		return
	}
	token := r.FormValue("t")
	a, p := s.pagePayment(r, token)
	if p == nil {
		s.renderPage(w, http.StatusNotFound, "message", pageData{Title: "Not found", Error: "This payment page does not exist or its link is incomplete."})
		return
	}
	f := func(name string) string { return strings.TrimSpace(r.PostFormValue(name)) }
	now := s.cfg.Now().UTC()
	a.mu.Lock()
	ev := s.expire(a, p, now)
	var problem string
	if ev == nil && p.Status == protocol.StatusPending {
		ev, problem = s.completeStep(a, p, f, now)
	}
	d, name := s.pageView(p, token)
	stillHere := p.Status == protocol.StatusPending
	returnURL := p.returnURL
	a.mu.Unlock()
	s.send(a, ev)
	switch {
	case problem != "":
		d.Error = problem
		if name == "hpp" {
			d.Phone = f("phone")
		}
		s.renderPage(w, http.StatusBadRequest, name, d)
	case stillHere: // the next step (3-D Secure)
		http.Redirect(w, r, d.Action+"?t="+url.QueryEscape(token), http.StatusSeeOther)
	default:
		http.Redirect(w, r, returnURL, http.StatusSeeOther)
	}
}

// completeStep applies a submitted form to p (a.mu held). It returns the
// callback of a final outcome, or a problem to show the customer.
func (s *Sim) completeStep(a *account, p *payment, f func(string) string, now time.Time) (*outgoing, string) {
	switch p.pageStep {
	case stepHPP:
		phone := strings.ReplaceAll(f("phone"), " ", "")
		if d := strings.TrimPrefix(phone, "+"); !digitsOnly(d) || len(d) < 6 || len(d) > 15 {
			return nil, "Enter the phone number of your wallet."
		}
		if pin := f("pin"); !digitsOnly(pin) || len(pin) < 4 || len(pin) > 6 {
			return nil, "Your PIN is 4 to 6 digits."
		}
		if refused(phone) {
			return s.fail(a, p, now, &protocol.Failure{Code: "insufficient_funds", Message: "The customer's wallet has insufficient funds."}), ""
		}
		return s.succeed(a, p, now, &protocol.MethodDetails{Type: "wallet"}), ""
	case stepCard:
		number := strings.NewReplacer(" ", "", "-", "").Replace(f("card_number"))
		if len(number) < 12 || len(number) > 19 || !card.LuhnValid(number) {
			return nil, "Check the card number."
		}
		month, err := strconv.Atoi(f("exp_month"))
		if err != nil || month < 1 || month > 12 {
			return nil, "The expiry month is 1 to 12."
		}
		year, err := strconv.Atoi(f("exp_year"))
		if err != nil || year < 0 || year > 9999 {
			return nil, "The expiry year is two or four digits."
		}
		if year < 100 {
			year += 2000
		}
		if year < now.Year() || year == now.Year() && month < int(now.Month()) {
			return nil, "The card has expired."
		}
		if cvc := f("cvc"); !digitsOnly(cvc) || len(cvc) < 3 || len(cvc) > 4 {
			return nil, "The security code is 3 or 4 digits."
		}
		details := &protocol.MethodDetails{Type: "card", Brand: string(card.BrandOf(number)), Last4: number[len(number)-4:]}
		p.MethodDetails = details
		switch number {
		case cardDeclined:
			return s.fail(a, p, now, &protocol.Failure{Code: "card_declined", Message: "The card was declined.", DeclineCode: "generic_decline"}), ""
		case card3DS:
			p.pageStep, p.UpdatedAt = stepThreeDS, now
			return nil, ""
		}
		return s.succeed(a, p, now, details), ""
	case stepThreeDS:
		switch f("outcome") {
		case "complete":
			return s.succeed(a, p, now, p.MethodDetails), ""
		case "fail":
			return s.fail(a, p, now, &protocol.Failure{Code: "authentication_failed", Message: "3-D Secure authentication failed."}), ""
		}
		return nil, "Choose Complete or Fail."
	case stepPicker:
		m := f("method")
		for _, ok := range walletDMethods {
			if m == ok {
				return s.succeed(a, p, now, &protocol.MethodDetails{Type: "wallet", Method: m}), ""
			}
		}
		return nil, "Choose how to pay."
	}
	return nil, "This page takes no submission."
}

func (s *Sim) renderPage(w http.ResponseWriter, status int, name string, d pageData) {
	var b strings.Builder
	if err := pageTemplates.ExecuteTemplate(&b, name, d); err != nil {
		s.log.Error("render provider page", "template", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write([]byte(b.String()))
}

// formatAmount writes minor units as major units: 12345 USD is "123.45 USD".
func formatAmount(minor int64, currency string) string {
	exp, err := money.Exponent(currency)
	s := strconv.FormatInt(minor, 10)
	if err != nil || exp == 0 {
		return s + " " + currency
	}
	for len(s) <= exp {
		s = "0" + s
	}
	return s[:len(s)-exp] + "." + s[len(s)-exp:] + " " + currency
}
