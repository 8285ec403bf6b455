package api

import (
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/merchants"
)

// GET /v1/audit_events lists the audit log of the key's merchant in the
// key's mode, newest first (secret keys only, like every read but confirm).
func (s *Server) listAuditEvents(w http.ResponseWriter, r *http.Request) error {
	q, err := merchants.ParseAuditQuery(r.URL.Query())
	if err != nil {
		return err
	}
	p := auth.Must(r.Context())
	list, err := s.cfg.Merchants.ListAuditEvents(r.Context(), p.MerchantID, p.Livemode, q)
	return answer(w, http.StatusOK, list, err)
}
