package api

import (
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
)

// RegisterSandboxOverrides mounts POST /v1/sandbox/overrides.
func RegisterSandboxOverrides(s *Server, svc *payments.Service) {
	s.HandleClaimed("POST /v1/sandbox/overrides", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
		var in struct {
			PaymentIntentID string `json:"payment_intent_id"`
			Scenario        string `json:"scenario"`
		}
		if err := DecodeJSON(r, &in); err != nil {
			return err
		}
		o, err := svc.OverrideScenario(r.Context(), cl, auth.Must(r.Context()), in.PaymentIntentID, in.Scenario)
		if err != nil {
			return err
		}
		WriteJSON(w, http.StatusOK, o)
		return nil
	}, TestModeOnly())
}
