package portal

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

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
	var step int64
	out, wait, err := p.guardCode(ctx, c.sess.UserID, clientIP(r), func() (bool, error) {
		var ok bool
		step, ok = totpMatch(secret, r.PostFormValue("code"), p.now(), 0)
		return ok, nil
	})
	if err != nil {
		return err
	}
	if p.codeRefusedPage(w, r, c, "totp.enable", out, wait, accountData{Available: true, Secret: secret, URI: totpURI("payd", c.sess.Email, secret)}) {
		return nil
	}
	if out != codeRight {
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
	out, wait, err := p.guardCode(ctx, c.sess.UserID, clientIP(r), func() (bool, error) {
		return p.checkTOTP(ctx, c.sess.UserID, r.PostFormValue("code"))
	})
	if err != nil {
		return err
	}
	if p.codeRefusedPage(w, r, c, "totp.disable", out, wait, accountData{Enabled: true, Available: true}) {
		return nil
	}
	if out != codeRight {
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

// codeRefusedPage answers a code form the guard refused or whose wrong code
// locked the second factor: 429 with Retry-After, totp_locked (or
// login_throttled for the address's budget), an audit row, and for the
// lock its own audit event (login.totp_lock). It reports whether it
// answered.
func (p *Portal) codeRefusedPage(w http.ResponseWriter, r *http.Request, c *reqCtx, action string, out codeOutcome, wait time.Duration, data accountData) bool {
	var msg, code string
	switch out {
	case codeThrottled:
		msg, code = "Too many failed attempts from your address. Try again in %d minute(s).", "login_throttled"
	case codeLocked:
		msg, code = "Two-factor codes are locked after too many wrong codes. No code is accepted until the lock ends, in %d minute(s).", "totp_locked"
	case codeLockedNow:
		msg, code = "Too many wrong codes: two-factor codes are locked for %d minute(s).", "totp_locked"
		p.audit(r.Context(), c, "login.totp_lock", c.sess.UserID, errs.Invalid("code", "totp_locked", ""),
			fmt.Sprintf("%d wrong codes: second factor locked for %d minutes", mfaMaxFailures, int(mfaLock/time.Minute)))
	default:
		return false
	}
	p.audit(r.Context(), c, action, c.sess.UserID, errs.Invalid("code", code, ""), "")
	secs := int(wait/time.Second) + 1
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	p.render(w, r, c, http.StatusTooManyRequests, "account", &view{Title: "Account", Section: "account",
		Error: fmt.Sprintf(msg, (secs+59)/60), ErrorCode: code, Data: data})
	return true
}
