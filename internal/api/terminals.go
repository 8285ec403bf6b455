package api

import (
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/terminals"
)

// RegisterTerminals mounts the terminal registry and card-present payments.
func RegisterTerminals(s *Server, svc *terminals.Service) {
	h := terminalHandlers{svc: svc}
	s.HandleClaimed("POST /v1/terminals", h.register)
	s.Handle("GET /v1/terminals", h.list)
	s.Handle("GET /v1/terminals/{id}", h.get)
	s.HandleClaimed("POST /v1/terminals/{id}/activate", h.activate)
	s.Handle("DELETE /v1/terminals/{id}", h.deregister)
	s.HandleClaimed("POST /v1/terminals/{id}/payments", h.pay, RequireIdempotencyKey())
}

type terminalHandlers struct{ svc *terminals.Service }

func (h terminalHandlers) register(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in terminals.RegisterParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	t, err := h.svc.Register(r.Context(), cl, auth.Must(r.Context()), in)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusCreated, t)
	return nil
}

func (h terminalHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	page, err := pagination.Parse(q)
	if err != nil {
		return err
	}
	items, more, err := h.svc.List(r.Context(), auth.Must(r.Context()),
		terminals.ListParams{Page: page, Status: q.Get("status"), OutletID: q.Get("outlet_id")})
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, pagination.NewList(items, more))
	return nil
}

func (h terminalHandlers) get(w http.ResponseWriter, r *http.Request) error {
	t, err := h.svc.Get(r.Context(), auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, t, err)
}

func (h terminalHandlers) activate(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in terminals.ActivateParams
	if err := DecodeOptionalJSON(r, &in); err != nil {
		return err
	}
	t, err := h.svc.Activate(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), in)
	return answer(w, http.StatusOK, t, err)
}

func (h terminalHandlers) deregister(w http.ResponseWriter, r *http.Request) error {
	d, err := h.svc.Deregister(r.Context(), auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, d, err)
}

// pay answers 201 with the succeeded intent (requires_capture when taken
// with capture_method manual), or 402 with the canceled intent of a declined
// card (as the sandbox failures).
func (h terminalHandlers) pay(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in terminals.PaymentParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	pi, err := h.svc.Pay(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), r.Header.Get("Idempotency-Key"), in)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if pi.Status != payments.Succeeded && pi.Status != payments.RequiresCapture {
		status = http.StatusPaymentRequired
	}
	WriteJSON(w, status, pi)
	return nil
}
