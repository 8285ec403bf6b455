package portal

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/merchants"
)

// The settings page shows the mode's controls and lets a portal admin change
// them. An admin's session has passed the second factor when one is
// enrolled, so an admin may loosen a control (raise or clear the approval
// threshold) at once; the change leaves an audit row and a settings.updated
// event. A loosening an API key asked for waits here for another person: an
// admin other than its requester approves it.

type settingsData struct {
	Threshold string // in minor units; "" when there is none
	Pending   []pendingChange
}

type pendingChange struct {
	merchants.SettingsChange
	Threshold string // "" clears it
}

func thresholdText(t *int64) string {
	if t == nil {
		return ""
	}
	return strconv.FormatInt(*t, 10)
}

func (p *Portal) settingsPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderSettings(w, r, c, http.StatusOK, &view{})
}

func (p *Portal) renderSettings(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	st, err := p.cfg.Merchants.Settings(r.Context(), c.sess.MerchantID, c.live)
	if err != nil {
		return err
	}
	pending, err := p.cfg.Merchants.PendingSettingsChanges(r.Context(), c.sess.MerchantID, c.live)
	if err != nil {
		return err
	}
	d := settingsData{Threshold: thresholdText(st.ApprovalThresholdMinor)}
	for _, ch := range pending {
		d.Pending = append(d.Pending, pendingChange{SettingsChange: ch, Threshold: thresholdText(ch.ApprovalThresholdMinor)})
	}
	v.Title, v.Section, v.Data = "Settings", "settings", d
	p.render(w, r, c, status, "settings", v)
	return nil
}

// updateSettings sets the approval threshold from the form; an empty field
// clears it (no payout then needs a second person).
func (p *Portal) updateSettings(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	raw := strings.TrimSpace(r.PostFormValue("approval_threshold_minor"))
	var threshold *int64
	if raw != "" {
		v, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || v < 0 {
			err := errs.Invalid("approval_threshold_minor", "parameter_invalid", "approval_threshold_minor must be a whole number of minor units, zero or more (empty for none)")
			return p.settingsError(w, r, c, err)
		}
		threshold = &v
	}
	_, err := p.cfg.Merchants.UpdateThreshold(r.Context(), c.sess.MerchantID, c.live, threshold, c.sess.UserID, true)
	detail := "approval_threshold_minor → none"
	if threshold != nil {
		detail = "approval_threshold_minor → " + raw
	}
	p.audit(r.Context(), c, "settings.update", "settings_"+c.mode, err, detail)
	if err != nil {
		return p.settingsError(w, r, c, err)
	}
	return redirect(w, r, c.path("settings"), "threshold_saved")
}

// approveSettingsChange applies a loosening an API key asked for; its
// requester (or a key of the same person) is refused.
func (p *Portal) approveSettingsChange(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	_, err := p.cfg.Merchants.ApproveSettingsChange(r.Context(), c.sess.MerchantID, c.live, id, c.sess.UserID)
	p.audit(r.Context(), c, "settings_change.approve", id, err, "")
	if err != nil {
		return p.settingsError(w, r, c, err)
	}
	return redirect(w, r, c.path("settings"), "settings_change_approved")
}

func (p *Portal) settingsError(w http.ResponseWriter, r *http.Request, c *reqCtx, err error) error {
	return p.actionError(w, r, c, err, func(v *view) error {
		return p.renderSettings(w, r, c, statusOf(err), v)
	}, "approval_threshold_minor")
}
