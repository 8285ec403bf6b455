package api

import (
	"net/http"
	"time"

	"github.com/payd/payd/internal/auth"
)

// account is GET /v1/account: whose key this is. Client tools use it to
// name the merchant they act for (payd login) and to keep per-merchant
// state (payd listen's signing secret).
type account struct {
	Object    string    `json:"object"`
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Livemode  bool      `json:"livemode"`
	KYCStatus string    `json:"kyc_status"`
	KeyID     string    `json:"key_id"`
	CreatedAt time.Time `json:"created_at"`
}

func (s *Server) getAccount(w http.ResponseWriter, r *http.Request) error {
	p := auth.Must(r.Context())
	m, err := s.cfg.Merchants.Get(r.Context(), p.MerchantID)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, account{Object: "account", ID: m.ID, Name: m.Name, Livemode: p.Livemode,
		KYCStatus: m.KYCStatus, KeyID: p.ID, CreatedAt: m.CreatedAt.UTC().Truncate(time.Second)})
	return nil
}
