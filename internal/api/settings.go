package api

import (
	"bytes"
	"encoding/json"
	"github.com/payd/payd/internal/store"
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/merchants"
)

// GET /v1/settings answers the key's mode's controls.
func (s *Server) getSettings(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	p := auth.Must(r.Context())
	st, err := s.cfg.Merchants.Settings(r.Context(), cl, p.MerchantID, p.Livemode)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, st)
	return nil
}

// POST /v1/settings changes the key's mode's controls: a tightening answers
// 200 with the settings; a loosening answers 202 with a pending
// settings_change that another person approves. A field left out stays as
// it is; approval_threshold_minor null clears the threshold.
func (s *Server) updateSettings(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var req struct {
		ApprovalThresholdMinor json.RawMessage `json:"approval_threshold_minor"`
		ApprovalWindowSeconds  json.RawMessage `json:"approval_window_seconds"`
	}
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	var u merchants.SettingsUpdate
	if req.ApprovalThresholdMinor != nil {
		u.SetThreshold = true
		if err := decodeInt64(req.ApprovalThresholdMinor, "approval_threshold_minor", &u.Threshold); err != nil {
			return err
		}
	}
	if req.ApprovalWindowSeconds != nil {
		if err := decodeInt64(req.ApprovalWindowSeconds, "approval_window_seconds", &u.WindowSeconds); err != nil {
			return err
		}
		if u.WindowSeconds == nil {
			return errs.Invalid("approval_window_seconds", "parameter_invalid", "approval_window_seconds must be an integer number of seconds, not null")
		}
	}
	p := auth.Must(r.Context())
	change, err := s.cfg.Merchants.UpdateSettings(r.Context(), cl, p.MerchantID, p.Livemode, u, p.ID, false)
	if err != nil {
		return err
	}
	if change != nil {
		WriteJSON(w, http.StatusAccepted, change)
		return nil
	}
	return s.getSettings(w, r, cl)
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
func (s *Server) approveSettingsChange(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	p := auth.Must(r.Context())
	c, err := s.cfg.Merchants.ApproveSettingsChange(r.Context(), cl, p.MerchantID, p.Livemode, r.PathValue("id"), p.ID)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, c)
	return nil
}

// decodeInt64 reads one field's raw JSON: null leaves *dst nil, an integer
// sets it, anything else is a 400 naming the field.
func decodeInt64(raw json.RawMessage, field string, dst **int64) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		*dst = nil
		return nil
	}
	var v int64
	if err := json.Unmarshal(raw, &v); err != nil {
		return errs.Invalid(field, "parameter_invalid", "%s must be an integer", field)
	}
	*dst = &v
	return nil
}
