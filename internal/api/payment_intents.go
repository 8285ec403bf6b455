package api

import (
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
)

// RegisterPaymentIntents mounts the payment intent routes.
func RegisterPaymentIntents(s *Server, svc *payments.Service) {
	h := paymentIntents{svc}
	s.HandleClaimed("POST /v1/payment_intents", h.create, RequireIdempotencyKey())
	s.Handle("GET /v1/payment_intents", h.list)
	s.Handle("GET /v1/payment_intents/{id}", h.get)
	s.HandleClaimed("POST /v1/payment_intents/{id}/confirm", h.confirm, AllowPublishable())
	s.HandleClaimed("POST /v1/payment_intents/{id}/cancel", h.cancel)
	s.HandleClaimed("POST /v1/payment_intents/{id}/capture", h.capture)
}

type paymentIntents struct{ svc *payments.Service }

// ScenarioHeader chooses a sandbox scenario on create (test mode only).
const ScenarioHeader = "X-Service-Scenario"

func (h paymentIntents) create(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in payments.CreateParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	in.Scenario = r.Header.Get(ScenarioHeader)
	pi, err := h.svc.Create(r.Context(), cl, auth.Must(r.Context()), in)
	if err != nil {
		return err
	}
	writeIntent(w, http.StatusCreated, pi)
	return nil
}

func (h paymentIntents) get(w http.ResponseWriter, r *http.Request) error {
	pi, err := h.svc.Get(r.Context(), auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, pi, err)
}

func (h paymentIntents) list(w http.ResponseWriter, r *http.Request) error {
	lp, err := payments.ParseListQuery(r.URL.Query())
	if err != nil {
		return err
	}
	list, err := h.svc.List(r.Context(), auth.Must(r.Context()), lp)
	return answer(w, http.StatusOK, list, err)
}

type confirmRequest struct {
	OTP string `json:"otp"`
}

func (h paymentIntents) confirm(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in confirmRequest
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	pi, err := h.svc.Confirm(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), in.OTP)
	if err != nil {
		return err
	}
	writeIntent(w, http.StatusOK, pi)
	return nil
}

type cancelRequest struct {
	CancellationReason *string `json:"cancellation_reason"`
}

// cancel answers 200 with the canceled intent (never 402: the merchant
// asked for it).
func (h paymentIntents) cancel(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in cancelRequest
	if err := DecodeOptionalJSON(r, &in); err != nil {
		return err
	}
	pi, err := h.svc.Cancel(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), in.CancellationReason)
	return answer(w, http.StatusOK, pi, err)
}

type captureRequest struct {
	AmountToCaptureMinor *int64 `json:"amount_to_capture_minor"`
}

func (h paymentIntents) capture(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in captureRequest
	if err := DecodeOptionalJSON(r, &in); err != nil {
		return err
	}
	pi, err := h.svc.Capture(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), in.AmountToCaptureMinor)
	return answer(w, http.StatusOK, pi, err)
}

// writeIntent answers an intent a create or confirm left; one the provider
// refused is 402 with the intent as the body.
func writeIntent(w http.ResponseWriter, status int, pi payments.Intent) {
	if pi.Status == payments.Canceled {
		status = http.StatusPaymentRequired
	}
	WriteJSON(w, status, pi)
}
