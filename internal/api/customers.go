package api

import (
	"github.com/payd/payd/internal/store"
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/billing"
)

// RegisterCustomers mounts the customer routes.
func RegisterCustomers(s *Server, svc *billing.Service) {
	h := customers{svc}
	s.HandleClaimed("POST /v1/customers", h.create)
	s.Handle("GET /v1/customers", h.list)
	s.Handle("GET /v1/customers/{id}", h.get)
	s.HandleClaimed("POST /v1/customers/{id}", h.update)
	s.HandleClaimed("DELETE /v1/customers/{id}", h.delete)
}

type customers struct{ svc *billing.Service }

func (h customers) create(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in billing.CustomerParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	c, err := h.svc.CreateCustomer(r.Context(), cl, auth.Must(r.Context()), in)
	return answer(w, http.StatusCreated, c, err)
}

func (h customers) get(w http.ResponseWriter, r *http.Request) error {
	c, err := h.svc.GetCustomer(r.Context(), auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, c, err)
}

func (h customers) update(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in billing.CustomerParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	c, err := h.svc.UpdateCustomer(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), in)
	return answer(w, http.StatusOK, c, err)
}

func (h customers) delete(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	d, err := h.svc.DeleteCustomer(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, d, err)
}

func (h customers) list(w http.ResponseWriter, r *http.Request) error {
	lp, err := billing.ParseCustomerList(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := h.svc.ListCustomers(r.Context(), auth.Must(r.Context()), lp)
	return answer(w, http.StatusOK, l, err)
}
