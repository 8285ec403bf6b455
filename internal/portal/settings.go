package portal

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
)

// The settings page shows the mode's controls (the approval threshold and
// the window of the cumulative rule) and lets a portal admin change them.
// An admin's session has passed the second factor when one is enrolled, so
// an admin may loosen a control (raise or clear the approval threshold,
// shorten the window) at once; the change leaves an audit row and a settings.updated
// event. A loosening an API key asked for waits here for another person: an
// admin other than its requester approves it.

type settingsData struct {
	Threshold string // in minor units; "" when there is none
	Window    string // in seconds
	WindowFor string // the window for a reader ("24 h")
	Pending   []pendingChange
}

type pendingChange struct {
	merchants.SettingsChange
	Threshold string // "" clears it
	Window    string // "" leaves it
}

// windowText writes a window in seconds for a reader: whole days or hours
// when it is one, else hours and minutes.
func windowText(seconds int64) string {
	d := time.Duration(seconds) * time.Second
	switch {
	case d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + " d"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + " h"
	}
	return strconv.FormatInt(int64(d/time.Hour), 10) + " h " + strconv.FormatInt(int64(d%time.Hour/time.Minute), 10) + " min"
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
	st, err := p.cfg.Merchants.Settings(r.Context(), store.NoClaim, c.sess.MerchantID, c.live)
	if err != nil {
		return err
	}
	pending, err := p.cfg.Merchants.PendingSettingsChanges(r.Context(), c.sess.MerchantID, c.live)
	if err != nil {
		return err
	}
	d := settingsData{Threshold: thresholdText(st.ApprovalThresholdMinor), Window: strconv.FormatInt(st.ApprovalWindowSeconds, 10),
		WindowFor: windowText(st.ApprovalWindowSeconds)}
	for _, ch := range pending {
		pc := pendingChange{SettingsChange: ch, Threshold: thresholdText(ch.ApprovalThresholdMinor)}
		if w := ch.ApprovalWindowSeconds; w != nil {
			pc.Window = windowText(*w)
		}
		d.Pending = append(d.Pending, pc)
	}
	v.Title, v.Section, v.Data = "Settings", "settings", d
	p.render(w, r, c, status, "settings", v)
	return nil
}

// updateSettings sets the controls from the form: an empty threshold
// clears it (no payout then needs a second person); a field the form does
// not send stays as it is.
func (p *Portal) updateSettings(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	if err := r.ParseForm(); err != nil {
		return p.settingsError(w, r, c, errs.Invalid("", "invalid_form", "the form could not be read"))
	}
	var u merchants.SettingsUpdate
	var details []string
	if _, ok := r.PostForm["approval_threshold_minor"]; ok {
		raw := strings.TrimSpace(r.PostFormValue("approval_threshold_minor"))
		u.SetThreshold = true
		details = append(details, "approval_threshold_minor → none")
		if raw != "" {
			v, err := strconv.ParseInt(raw, 10, 64)
			if err != nil || v < 0 {
				err := errs.Invalid("approval_threshold_minor", "parameter_invalid", "approval_threshold_minor must be a whole number of minor units, zero or more (empty for none)")
				return p.settingsError(w, r, c, err)
			}
			u.Threshold = &v
			details[0] = "approval_threshold_minor → " + raw
		}
	}
	if raw := strings.TrimSpace(r.PostFormValue("approval_window_seconds")); raw != "" {
		v, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			err := errs.Invalid("approval_window_seconds", "parameter_invalid", "approval_window_seconds must be a whole number of seconds")
			return p.settingsError(w, r, c, err)
		}
		u.WindowSeconds = &v
		details = append(details, "approval_window_seconds → "+raw)
	}
	if err := u.Validate(); err != nil {
		return p.settingsError(w, r, c, err)
	}
	_, err := p.cfg.Merchants.UpdateSettings(r.Context(), store.NoClaim, c.sess.MerchantID, c.live, u, c.sess.UserID, true)
	p.audit(r.Context(), c, "settings.update", "settings_"+c.mode, err, strings.Join(details, ", "))
	if err != nil {
		return p.settingsError(w, r, c, err)
	}
	return redirect(w, r, c.path("settings"), "threshold_saved")
}

// approveSettingsChange applies a loosening an API key asked for; its
// requester (or a key of the same person) is refused.
func (p *Portal) approveSettingsChange(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	_, err := p.cfg.Merchants.ApproveSettingsChange(r.Context(), store.NoClaim, c.sess.MerchantID, c.live, id, c.sess.UserID)
	p.audit(r.Context(), c, "settings_change.approve", id, err, "")
	if err != nil {
		return p.settingsError(w, r, c, err)
	}
	return redirect(w, r, c.path("settings"), "settings_change_approved")
}

func (p *Portal) settingsError(w http.ResponseWriter, r *http.Request, c *reqCtx, err error) error {
	return p.actionError(w, r, c, err, func(v *view) error {
		return p.renderSettings(w, r, c, statusOf(err), v)
	}, "approval_threshold_minor", "approval_window_seconds")
}
