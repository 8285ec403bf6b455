package portal

import (
	"errors"
	"net/http"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
)

type accountData struct {
	Enabled   bool
	Available bool   // PAYD_SECRETS_KEY is set, so secrets can be sealed
	Secret    string // during enrolment only: the new secret to type in
	URI       string // and its otpauth:// form
}

// accountPage shows the user's own settings: the TOTP second factor.
func (p *Portal) accountPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	_, enabled, err := p.totpState(r.Context(), c.sess.UserID)
	if err != nil {
		return err
	}
	p.render(w, r, c, http.StatusOK, "account", &view{Title: "Account", Section: "account",
		Data: accountData{Enabled: enabled, Available: p.totpAvailable()}})
	return nil
}

func (p *Portal) totpAvailable() bool {
	_, err := p.cfg.Box.Seal([]byte("x"), "probe")
	return !errors.Is(err, secretbox.ErrNoKey)
}

// totpStart makes a new secret, stores it sealed and not yet enabled, and
// shows it once with a form to confirm a first code.
func (p *Portal) totpStart(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	_, enabled, err := p.totpState(ctx, c.sess.UserID)
	if err != nil {
		return err
	}
	if enabled {
		return errs.Conflict("totp_already_enabled", "two-factor authentication is already on; turn it off first to enrol a new device")
	}
	if !p.totpAvailable() {
		return errs.Conflict("totp_unavailable", "two-factor authentication needs PAYD_SECRETS_KEY to be set on the server")
	}
	secret := newTOTPSecret()
	sealed, err := p.cfg.Box.Seal([]byte(secret), "totp/"+c.sess.UserID)
	if err != nil {
		return err
	}
	now := store.Micros(p.now())
	if _, err := p.cfg.DB.Exec(ctx, `INSERT INTO portal_totp (user_id, secret, enabled_at, last_step, created_at) VALUES (?, ?, NULL, 0, ?)
		ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, enabled_at = NULL, last_step = 0, created_at = excluded.created_at`,
		c.sess.UserID, sealed, now); err != nil {
		return err
	}
	p.audit(ctx, c, "totp.enrol_started", c.sess.UserID, nil, "")
	p.render(w, r, c, http.StatusOK, "account", &view{Title: "Account", Section: "account",
		Data: accountData{Available: true, Secret: secret, URI: totpURI("payd", c.sess.Email, secret)}})
	return nil
}

// totpConfirm turns the second factor on once the user proves their device
// has the secret by typing a current code.
func (p *Portal) totpConfirm(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	var sealed string
	err := p.cfg.DB.QueryRow(ctx, "SELECT secret FROM portal_totp WHERE user_id = ? AND enabled_at IS NULL", c.sess.UserID).Scan(&sealed)
	if store.IsNotFound(err) {
		return errs.Conflict("totp_not_enrolling", "start the set-up first")
	}
	if err != nil {
		return err
	}
	raw, err := p.cfg.Box.Open(sealed, "totp/"+c.sess.UserID)
	if err != nil {
		return err
	}
	secret := string(raw)
	step, ok := totpMatch(secret, r.PostFormValue("code"), p.now(), 0)
	if !ok {
		p.audit(ctx, c, "totp.enable", c.sess.UserID, errs.Invalid("code", "totp_invalid", ""), "")
		msg := "That code is wrong. Check the device's clock and type the code it shows now."
		p.render(w, r, c, http.StatusBadRequest, "account", &view{Title: "Account", Section: "account",
			Error: msg, ErrorCode: "totp_invalid", FieldErrors: map[string]string{"code": msg},
			Data: accountData{Available: true, Secret: secret, URI: totpURI("payd", c.sess.Email, secret)}})
		return nil
	}
	res, err := p.cfg.DB.Exec(ctx, "UPDATE portal_totp SET enabled_at = ?, last_step = ? WHERE user_id = ? AND enabled_at IS NULL",
		store.Micros(p.now()), step, c.sess.UserID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errs.Conflict("totp_not_enrolling", "start the set-up first")
	}
	p.audit(ctx, c, "totp.enable", c.sess.UserID, nil, "")
	return redirect(w, r, c.path("account"), "totp_enabled")
}

// totpDisable turns the second factor off; it takes a current code, so a
// borrowed unlocked session alone cannot remove it.
func (p *Portal) totpDisable(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	ok, err := p.checkTOTP(ctx, c.sess.UserID, r.PostFormValue("code"))
	if err != nil {
		return err
	}
	if !ok {
		p.audit(ctx, c, "totp.disable", c.sess.UserID, errs.Invalid("code", "totp_invalid", ""), "")
		msg := "That code is wrong or was already used."
		p.render(w, r, c, http.StatusBadRequest, "account", &view{Title: "Account", Section: "account",
			Error: msg, ErrorCode: "totp_invalid", FieldErrors: map[string]string{"code": msg},
			Data: accountData{Enabled: true, Available: true}})
		return nil
	}
	if _, err := p.cfg.DB.Exec(ctx, "DELETE FROM portal_totp WHERE user_id = ?", c.sess.UserID); err != nil {
		return err
	}
	p.audit(ctx, c, "totp.disable", c.sess.UserID, nil, "")
	return redirect(w, r, c.path("account"), "totp_disabled")
}
