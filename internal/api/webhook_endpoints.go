package api

import (
	"bytes"
	"io"
	"net/http"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/idempotency"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/webhooks"
)

// RegisterWebhooks adds the webhook endpoints, events, event stream and
// sandbox trigger routes.
func RegisterWebhooks(s *Server, svc *webhooks.Service) {
	h := webhookHandlers{svc: svc}
	// Creation handles its Idempotency-Key itself (see createEndpoint).
	s.Handle("POST /v1/webhook_endpoints", h.createEndpoint, NoIdempotency())
	s.Handle("GET /v1/webhook_endpoints", h.listEndpoints)
	s.Handle("GET /v1/webhook_endpoints/{id}", h.getEndpoint)
	s.Handle("POST /v1/webhook_endpoints/{id}", h.updateEndpoint)
	s.Handle("DELETE /v1/webhook_endpoints/{id}", h.deleteEndpoint)
	registerEvents(s, h)
}

type webhookHandlers struct{ svc *webhooks.Service }

func owner(r *http.Request) webhooks.Owner {
	p := auth.Must(r.Context())
	return webhooks.Owner{MerchantID: p.MerchantID, Livemode: p.Livemode}
}

// endpointRequest is the body of create and update; absent fields are nil.
type endpointRequest struct {
	URL           *string  `json:"url"`
	EnabledEvents []string `json:"enabled_events"`
	Description   *string  `json:"description"`
	Disabled      *bool    `json:"disabled"`
}

func (b endpointRequest) params() webhooks.EndpointParams {
	return webhooks.EndpointParams{URL: b.URL, EnabledEvents: b.EnabledEvents, Description: b.Description, Disabled: b.Disabled}
}

// createEndpoint answers 201 with the endpoint and its secret. The shared
// idempotency store keeps answers in clear, which would store the secret, so
// this route opts out of it and the webhooks service keeps the key with the
// endpoint instead: a repeat answers the same endpoint and secret with
// Idempotent-Replayed: true; the key with another body is 422.
func (h webhookHandlers) createEndpoint(w http.ResponseWriter, r *http.Request) error {
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var idem *webhooks.Idempotency
	if key := r.Header.Get("Idempotency-Key"); key != "" {
		if len(key) > 255 {
			return errs.Invalid("Idempotency-Key", "idempotency_key_invalid", "Idempotency-Key must be at most 255 characters")
		}
		p := auth.Must(r.Context())
		idem = &webhooks.Idempotency{PrincipalID: p.ID, Key: key, RequestHash: idempotency.RequestHash(r.Method, r.URL.Path, body)}
	}
	var req endpointRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	ep, replayed, err := h.svc.CreateEndpoint(r.Context(), owner(r), req.params(), idem)
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	WriteJSON(w, http.StatusCreated, ep)
	return nil
}

func (h webhookHandlers) listEndpoints(w http.ResponseWriter, r *http.Request) error {
	page, err := pagination.Parse(r.URL.Query())
	if err != nil {
		return err
	}
	eps, more, err := h.svc.ListEndpoints(r.Context(), owner(r), page)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, pagination.NewList(eps, more))
	return nil
}

func (h webhookHandlers) getEndpoint(w http.ResponseWriter, r *http.Request) error {
	ep, err := h.svc.GetEndpoint(r.Context(), owner(r), r.PathValue("id"))
	return answer(w, http.StatusOK, ep, err)
}

func (h webhookHandlers) updateEndpoint(w http.ResponseWriter, r *http.Request) error {
	var req endpointRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	ep, err := h.svc.UpdateEndpoint(r.Context(), owner(r), r.PathValue("id"), req.params())
	return answer(w, http.StatusOK, ep, err)
}

func (h webhookHandlers) deleteEndpoint(w http.ResponseWriter, r *http.Request) error {
	d, err := h.svc.DeleteEndpoint(r.Context(), owner(r), r.PathValue("id"))
	return answer(w, http.StatusOK, d, err)
}
