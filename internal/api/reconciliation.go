package api

import (
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/reconciliation"
)

// RegisterReconciliation mounts the settlement reconciliation:
// GET /v1/providers/{provider}/settlement_reconciliation?date=YYYY-MM-DD
// compares the provider's daily report with the ledger (live keys).
func RegisterReconciliation(s *Server, svc *reconciliation.Service) {
	s.Handle("GET /v1/providers/{provider}/settlement_reconciliation", func(w http.ResponseWriter, r *http.Request) error {
		p := auth.Must(r.Context())
		out, err := svc.Settlement(r.Context(), p.MerchantID, p.Livemode, r.PathValue("provider"), r.URL.Query().Get("date"))
		if err != nil {
			return err
		}
		WriteJSON(w, http.StatusOK, out)
		return nil
	})
}
