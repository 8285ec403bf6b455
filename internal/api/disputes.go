package api

import (
	"encoding/json"
	"github.com/payd/payd/internal/store"
	"net/http"
	"slices"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/disputes"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
)

// RegisterDisputes mounts the dispute endpoints and the sandbox trigger.
func RegisterDisputes(s *Server, svc *disputes.Service) {
	h := disputeHandlers{svc: svc}
	s.Handle("GET /v1/disputes", h.list)
	s.Handle("GET /v1/disputes/{id}", h.get)
	s.HandleClaimed("POST /v1/disputes/{id}", h.update)
	s.HandleClaimed("POST /v1/disputes/{id}/close", h.close)
	s.HandleClaimed("POST /v1/sandbox/disputes", h.sandbox, TestModeOnly())
}

type disputeHandlers struct{ svc *disputes.Service }

func (h disputeHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	page, err := pagination.Parse(q)
	if err != nil {
		return err
	}
	f := disputes.ListParams{PaymentIntent: q.Get("payment_intent"), Status: disputes.Status(q.Get("status"))}
	if f.Status != "" && !slices.Contains(disputes.Statuses, f.Status) {
		return errs.Invalid("status", "parameter_invalid", "status must be one of needs_response, under_review, won, lost")
	}
	items, more, err := h.svc.List(r.Context(), auth.Must(r.Context()), f, page)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, pagination.NewList(items, more))
	return nil
}

func (h disputeHandlers) get(w http.ResponseWriter, r *http.Request) error {
	d, err := h.svc.Get(r.Context(), auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, d, err)
}

// update saves evidence and metadata, and with submit:true submits it.
func (h disputeHandlers) update(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in struct {
		Evidence json.RawMessage   `json:"evidence"`
		Submit   *bool             `json:"submit"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := DecodeOptionalJSON(r, &in); err != nil {
		return err
	}
	ev, err := disputes.ParseEvidence(in.Evidence)
	if err != nil {
		return err
	}
	p := disputes.UpdateParams{Evidence: ev, Metadata: in.Metadata, Submit: in.Submit != nil && *in.Submit}
	d, err := h.svc.Update(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), p)
	return answer(w, http.StatusOK, d, err)
}

func (h disputeHandlers) close(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var none struct{}
	if err := DecodeOptionalJSON(r, &none); err != nil {
		return err
	}
	d, err := h.svc.Close(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, d, err)
}

// sandbox disputes a succeeded card payment in test mode (201).
func (h disputeHandlers) sandbox(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in disputes.SandboxParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	d, err := h.svc.CreateSandbox(r.Context(), cl, auth.Must(r.Context()), in)
	return answer(w, http.StatusCreated, d, err)
}
