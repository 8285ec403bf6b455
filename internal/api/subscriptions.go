package api

import (
	"github.com/payd/payd/internal/store"
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/billing"
)

// RegisterSubscriptions mounts the subscription routes.
func RegisterSubscriptions(s *Server, svc *billing.Service) {
	h := subscriptions{svc}
	s.HandleClaimed("POST /v1/subscriptions", h.create)
	s.Handle("GET /v1/subscriptions", h.list)
	s.Handle("GET /v1/subscriptions/{id}", h.get)
	s.HandleClaimed("POST /v1/subscriptions/{id}", h.update)
	s.HandleClaimed("POST /v1/subscriptions/{id}/cancel", h.cancel)
}

type subscriptions struct{ svc *billing.Service }

func (h subscriptions) create(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in billing.SubscriptionParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	sub, err := h.svc.CreateSubscription(r.Context(), cl, auth.Must(r.Context()), in)
	return answer(w, http.StatusCreated, sub, err)
}

func (h subscriptions) get(w http.ResponseWriter, r *http.Request) error {
	sub, err := h.svc.GetSubscription(r.Context(), auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, sub, err)
}

func (h subscriptions) update(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in billing.UpdateParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	sub, err := h.svc.UpdateSubscription(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), in)
	return answer(w, http.StatusOK, sub, err)
}

func (h subscriptions) cancel(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in billing.CancelParams
	if err := DecodeOptionalJSON(r, &in); err != nil {
		return err
	}
	sub, err := h.svc.CancelSubscription(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), in)
	return answer(w, http.StatusOK, sub, err)
}

func (h subscriptions) list(w http.ResponseWriter, r *http.Request) error {
	lp, err := billing.ParseSubscriptionList(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := h.svc.ListSubscriptions(r.Context(), auth.Must(r.Context()), lp)
	return answer(w, http.StatusOK, l, err)
}
