package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/payouts"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// RegisterPayouts mounts the payout endpoints.
func RegisterPayouts(s *Server, svc *payouts.Service) {
	h := payoutHandlers{svc: svc}
	s.HandleClaimed("POST /v1/payouts", h.create, ClaimAtOnce())
	s.Handle("GET /v1/payouts", h.list)
	s.Handle("GET /v1/payouts/{id}", h.get)
	s.HandleClaimed("POST /v1/payouts/{id}/approve", h.approve)
	s.HandleClaimed("POST /v1/payouts/{id}/review", h.review)
	s.HandleClaimed("POST /v1/payouts/{id}/retry", h.retry)
	registerPayoutBatches(s, svc)
}

type payoutHandlers struct{ svc *payouts.Service }

// create answers 201 with the payout, whatever its rail answered (the payout
// exists and its outcome is a status): a rail that refused it at once
// shows as status failed with failure_code. A short
// available balance is the error 402 insufficient_balance, and nothing is
// created.
func (h payoutHandlers) create(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in payouts.CreateParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	in.Scenario = r.Header.Get("X-Service-Scenario")
	p, err := h.svc.Create(r.Context(), cl, auth.Must(r.Context()), in)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusCreated, p)
	return nil
}

func (h payoutHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	page, err := pagination.Parse(q)
	if err != nil {
		return err
	}
	f := payouts.ListParams{Status: payouts.Status(q.Get("status")), Recipient: q.Get("recipient"),
		BatchID: q.Get("batch_id"), Provider: q.Get("provider")}
	if f.Status != "" && !slices.Contains(payouts.Statuses, f.Status) {
		return errs.Invalid("status", "parameter_invalid", "status must be one of requires_approval, held, pending, processing, succeeded, failed, canceled")
	}
	if f.Provider != "" && !providers.Known(f.Provider, providers.PayoutProviders) {
		return errs.Invalid("provider", "parameter_invalid", "provider must be one of %s", strings.Join(providers.PayoutProviders, ", "))
	}
	// An unencoded + in a query string reads as a space: "+25377..." arrives
	// as " 25377...". Put the plus back.
	if strings.HasPrefix(f.Recipient, " ") && len(strings.TrimSpace(f.Recipient)) == len(f.Recipient)-1 {
		f.Recipient = "+" + f.Recipient[1:]
	}
	items, more, err := h.svc.List(r.Context(), auth.Must(r.Context()), f, page)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, pagination.NewList(items, more))
	return nil
}

func (h payoutHandlers) get(w http.ResponseWriter, r *http.Request) error {
	p, err := h.svc.Get(r.Context(), auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, p, err)
}

func (h payoutHandlers) approve(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var none struct{}
	if err := DecodeOptionalJSON(r, &none); err != nil {
		return err
	}
	p, err := h.svc.Approve(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, p, err)
}

func (h payoutHandlers) review(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in struct {
		Decision string `json:"decision"`
		Note     string `json:"note"`
	}
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	p, err := h.svc.Review(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), in.Decision, in.Note)
	return answer(w, http.StatusOK, p, err)
}

// retry answers 200 with the payout, now processing; the rail's answer
// arrives asynchronously (payout.succeeded or payout.failed).
func (h payoutHandlers) retry(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var none struct{}
	if err := DecodeOptionalJSON(r, &none); err != nil {
		return err
	}
	p, err := h.svc.Retry(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), r.Header.Get("X-Service-Scenario"))
	return answer(w, http.StatusOK, p, err)
}
