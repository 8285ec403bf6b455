package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/refunds"
	"github.com/payd/payd/internal/store"
)

// RegisterRefunds mounts the refund endpoints.
func RegisterRefunds(s *Server, svc *refunds.Service) {
	h := refundHandlers{svc: svc}
	s.HandleClaimed("POST /v1/refunds", h.create, RequireIdempotencyKey(), ClaimAtOnce())
	s.Handle("GET /v1/refunds", h.list)
	s.Handle("GET /v1/refunds/{id}", h.get)
	s.HandleClaimed("POST /v1/refunds/{id}/approve", h.approve)
	s.HandleClaimed("POST /v1/refunds/{id}/cancel", h.cancel)
}

type refundHandlers struct{ svc *refunds.Service }

// create answers 201 with the refund in whatever state its provider left
// it (succeeded, failed with failure_code, pending, or requires_approval).
func (h refundHandlers) create(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in refunds.CreateParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	in.Scenario = r.Header.Get("X-Service-Scenario")
	re, err := h.svc.Create(r.Context(), cl, auth.Must(r.Context()), in)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusCreated, re)
	return nil
}

func (h refundHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	page, err := pagination.Parse(q)
	if err != nil {
		return err
	}
	f := refunds.ListParams{PaymentIntent: q.Get("payment_intent"), Status: refunds.Status(q.Get("status"))}
	if f.Status != "" && !slices.Contains(refunds.Statuses, f.Status) {
		return errs.Invalid("status", "parameter_invalid", "status must be one of requires_approval, pending, succeeded, failed, canceled")
	}
	items, more, err := h.svc.List(r.Context(), auth.Must(r.Context()), f, page)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, pagination.NewList(items, more))
	return nil
}

func (h refundHandlers) get(w http.ResponseWriter, r *http.Request) error {
	re, err := h.svc.Get(r.Context(), auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, re, err)
}

func (h refundHandlers) approve(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	return h.act(w, r, cl, h.svc.Approve)
}

func (h refundHandlers) cancel(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	return h.act(w, r, cl, h.svc.Cancel)
}

// act runs a bodiless action on one refund under the request's claim and
// answers 200 with it.
func (h refundHandlers) act(w http.ResponseWriter, r *http.Request, cl store.Claim,
	do func(context.Context, store.Claim, auth.Principal, string) (*refunds.Refund, error)) error {
	var none struct{}
	if err := DecodeOptionalJSON(r, &none); err != nil {
		return err
	}
	re, err := do(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, re)
	return nil
}
