package api

import (
	"context"
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/billing"
	"github.com/payd/payd/internal/store"
)

// RegisterInvoices mounts the invoice routes.
func RegisterInvoices(s *Server, svc *billing.Service) {
	h := invoices{svc}
	s.HandleClaimed("POST /v1/invoices", h.create)
	s.Handle("GET /v1/invoices", h.list)
	s.Handle("GET /v1/invoices/{id}", h.get)
	s.HandleClaimed("POST /v1/invoices/{id}/finalize", h.step(svc.FinalizeInvoice))
	s.HandleClaimed("POST /v1/invoices/{id}/void", h.step(svc.VoidInvoice))
	s.HandleClaimed("POST /v1/invoices/{id}/mark_uncollectible", h.step(svc.MarkUncollectible))
	s.HandleClaimed("POST /v1/invoices/{id}/pay", h.pay)
}

type invoices struct{ svc *billing.Service }

func (h invoices) create(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in billing.InvoiceParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	v, err := h.svc.CreateInvoice(r.Context(), cl, auth.Must(r.Context()), in)
	return answer(w, http.StatusCreated, v, err)
}

func (h invoices) get(w http.ResponseWriter, r *http.Request) error {
	v, err := h.svc.GetInvoice(r.Context(), auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, v, err)
}

// step serves an invoice transition that takes no body.
func (h invoices) step(fn func(context.Context, store.Claim, auth.Principal, string) (billing.Invoice, error)) ClaimedFunc {
	return func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
		var none struct{}
		if err := DecodeOptionalJSON(r, &none); err != nil {
			return err
		}
		v, err := fn(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"))
		return answer(w, http.StatusOK, v, err)
	}
}

func (h invoices) pay(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in billing.PayParams
	if err := DecodeOptionalJSON(r, &in); err != nil {
		return err
	}
	v, err := h.svc.PayInvoice(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), in)
	return answer(w, http.StatusOK, v, err)
}

func (h invoices) list(w http.ResponseWriter, r *http.Request) error {
	lp, err := billing.ParseInvoiceList(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := h.svc.ListInvoices(r.Context(), auth.Must(r.Context()), lp)
	return answer(w, http.StatusOK, l, err)
}
