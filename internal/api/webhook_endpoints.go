package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/idempotency"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
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
	s.HandleClaimed("POST /v1/webhook_endpoints/{id}", h.updateEndpoint)
	s.Handle("DELETE /v1/webhook_endpoints/{id}", h.deleteEndpoint)
	// Rotation answers the new secret, so like creation it keeps its
	// Idempotency-Key itself rather than in the shared store.
	s.Handle("POST /v1/webhook_endpoints/{id}/rotate_secret", h.rotateSecret, NoIdempotency())
	s.HandleClaimed("POST /v1/webhook_endpoints/{id}/recover", h.recoverEndpoint)
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
	// MaxRate is raw so that null (no limit) and absent (unchanged) differ.
	MaxRate json.RawMessage `json:"max_rate"`
}

func (b endpointRequest) params() (webhooks.EndpointParams, error) {
	p := webhooks.EndpointParams{URL: b.URL, EnabledEvents: b.EnabledEvents, Description: b.Description, Disabled: b.Disabled}
	if b.MaxRate != nil {
		p.MaxRate = &webhooks.MaxRate{}
		if string(bytes.TrimSpace(b.MaxRate)) != "null" {
			var v int
			if err := json.Unmarshal(b.MaxRate, &v); err != nil {
				return p, errs.Invalid("max_rate", "parameter_invalid", "max_rate must be a whole number of deliveries per second from %d to %d, or null for no limit",
					webhooks.MinMaxRate, webhooks.MaxMaxRate)
			}
			p.MaxRate.Value = &v
		}
	}
	return p, nil
}

// endpointIdempotency reads a request's Idempotency-Key for the routes that
// keep it beside the endpoint (their answers hold a secret); nil without one.
// It reads the body to hash it and leaves it in place for decoding.
func endpointIdempotency(r *http.Request) (*webhooks.Idempotency, error) {
	body, err := ReadBody(r)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return nil, nil
	}
	if len(key) > 255 {
		return nil, errs.Invalid("Idempotency-Key", "idempotency_key_invalid", "Idempotency-Key must be at most 255 characters")
	}
	p := auth.Must(r.Context())
	return &webhooks.Idempotency{PrincipalID: p.ID, Key: key, RequestHash: idempotency.RequestHash(r.Method, r.URL.Path, body)}, nil
}

// createEndpoint answers 201 with the endpoint and its secret. The shared
// idempotency store keeps answers in clear, which would store the secret, so
// this route opts out of it and the webhooks service keeps the key with the
// endpoint instead: a repeat answers the same endpoint and secret with
// Idempotent-Replayed: true; the key with another body is 422.
func (h webhookHandlers) createEndpoint(w http.ResponseWriter, r *http.Request) error {
	idem, err := endpointIdempotency(r)
	if err != nil {
		return err
	}
	var req endpointRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	p, err := req.params()
	if err != nil {
		return err
	}
	ep, replayed, err := h.svc.CreateEndpoint(r.Context(), owner(r), p, idem)
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

func (h webhookHandlers) updateEndpoint(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var req endpointRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	p, err := req.params()
	if err != nil {
		return err
	}
	ep, err := h.svc.UpdateEndpoint(r.Context(), cl, owner(r), r.PathValue("id"), p)
	return answer(w, http.StatusOK, ep, err)
}

// rotateSecret answers 200 with the endpoint and its new secret (shown only
// here). The body is optional: {"expires_in_seconds": n} says how long the
// old secret keeps signing beside the new one (default 24 h, 0 to 7 days).
func (h webhookHandlers) rotateSecret(w http.ResponseWriter, r *http.Request) error {
	idem, err := endpointIdempotency(r)
	if err != nil {
		return err
	}
	var req struct {
		ExpiresInSeconds *int64 `json:"expires_in_seconds"`
	}
	if err := DecodeOptionalJSON(r, &req); err != nil {
		return err
	}
	grace := webhooks.DefaultSecretGrace
	if req.ExpiresInSeconds != nil {
		// RotateSecret refuses a grace out of range naming the field; one
		// too large to be a Duration is out of range too.
		grace = -1
		if n := *req.ExpiresInSeconds; n >= 0 && n <= int64(webhooks.MaxSecretGrace/time.Second) {
			grace = time.Duration(n) * time.Second
		}
	}
	ep, replayed, err := h.svc.RotateSecret(r.Context(), owner(r), r.PathValue("id"), grace, idem, auth.Must(r.Context()).ID)
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	WriteJSON(w, http.StatusOK, ep)
	return nil
}

// recoverEndpoint answers 202 with how many failed deliveries since the
// given unix time were queued again and whether more remain.
func (h webhookHandlers) recoverEndpoint(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var req struct {
		Since *int64 `json:"since"`
	}
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Since == nil {
		return errs.Missing("since")
	}
	rec, err := h.svc.Recover(r.Context(), cl, owner(r), r.PathValue("id"), time.Unix(*req.Since, 0))
	return answer(w, http.StatusAccepted, rec, err)
}

func (h webhookHandlers) deleteEndpoint(w http.ResponseWriter, r *http.Request) error {
	d, err := h.svc.DeleteEndpoint(r.Context(), owner(r), r.PathValue("id"))
	return answer(w, http.StatusOK, d, err)
}
