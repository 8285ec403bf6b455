package api

import (
	"net/http"

	"github.com/payd/payd/internal/auth"
)

// GET /v1/settings answers the key's mode's controls.
func (s *Server) getSettings(w http.ResponseWriter, r *http.Request) error {
	p := auth.Must(r.Context())
	st, err := s.cfg.Merchants.Settings(r.Context(), p.MerchantID, p.Livemode)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, st)
	return nil
}

// POST /v1/settings changes the key's mode's controls: a tightening answers
// 200 with the settings; a loosening answers 202 with a pending
// settings_change that another person approves.
func (s *Server) updateSettings(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		ApprovalThresholdMinor *int64 `json:"approval_threshold_minor"`
	}
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	p := auth.Must(r.Context())
	change, err := s.cfg.Merchants.UpdateThreshold(r.Context(), p.MerchantID, p.Livemode, req.ApprovalThresholdMinor, p.ID, false)
	if err != nil {
		return err
	}
	if change != nil {
		WriteJSON(w, http.StatusAccepted, change)
		return nil
	}
	return s.getSettings(w, r)
}

// GET /v1/settings/changes/{id}.
func (s *Server) getSettingsChange(w http.ResponseWriter, r *http.Request) error {
	p := auth.Must(r.Context())
	c, err := s.cfg.Merchants.SettingsChange(r.Context(), p.MerchantID, p.Livemode, r.PathValue("id"))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, c)
	return nil
}

// POST /v1/settings/changes/{id}/approve applies a pending change; the
// requester's own keys get 403 self_approval_not_allowed.
func (s *Server) approveSettingsChange(w http.ResponseWriter, r *http.Request) error {
	p := auth.Must(r.Context())
	c, err := s.cfg.Merchants.ApproveSettingsChange(r.Context(), p.MerchantID, p.Livemode, r.PathValue("id"), p.ID)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, c)
	return nil
}
