package portal

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/store"
)

type loginData struct {
	Next string
}

// loginPage shows the sign-in form (fields email and password, with the
// hidden csrf_token every form carries).
func (p *Portal) loginPage(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	if s, _ := p.loadSession(r.Context(), r); s != nil && s.Stage == stageFull {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	p.renderLogin(w, r, http.StatusOK, &view{}, r.URL.Query().Get("next"))
}

func (p *Portal) renderLogin(w http.ResponseWriter, r *http.Request, status int, v *view, next string) {
	v.Title = "Sign in"
	v.CSRF = p.loginCSRF(w, r)
	v.Data = loginData{Next: safeNext(next)}
	p.render(w, r, nil, status, "login", v)
}

// login checks email and password. The order matters: the CSRF token first
// (403), then the throttle (429, before any hashing), then the password
// (401 with the form and a message). Success always makes a new session.
func (p *Portal) login(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		p.renderLogin(w, r, http.StatusBadRequest, &view{Error: "The form could not be read."}, "")
		return
	}
	email, password, next := r.PostFormValue("email"), r.PostFormValue("password"), r.PostFormValue("next")
	form := map[string][]string{"email": {email}}
	if !checkLoginCSRF(r) {
		p.renderLogin(w, r, http.StatusForbidden, &view{Error: "The form's security token is missing or wrong. Try again.",
			ErrorCode: "csrf_token_invalid", Form: form}, next)
		return
	}
	fields := map[string]string{}
	if email == "" {
		fields["email"] = "Enter your email address."
	}
	if password == "" {
		fields["password"] = "Enter your password."
	}
	if len(fields) > 0 {
		p.renderLogin(w, r, http.StatusBadRequest, &view{Error: "Enter your email and password.", FieldErrors: fields, Form: form}, next)
		return
	}
	ctx := r.Context()
	ip := clientIP(r)
	// The failure slot is taken before the password is hashed: concurrent
	// wrong guesses beyond the limit get 429 without any argon2 work.
	buckets := loginBuckets(email, ip)
	wait, err := p.reserve(ctx, buckets)
	if err != nil {
		p.fail(w, r, nil, err)
		return
	}
	if wait > 0 {
		p.tooMany(w, r, wait, form, next)
		return
	}
	p.hashing <- struct{}{}
	user, err := p.cfg.Merchants.Login(ctx, email, password)
	<-p.hashing
	if err != nil {
		if e := errs.As(err); e == nil || e.Kind != errs.KindUnauthenticated {
			p.release(ctx, buckets)
			p.fail(w, r, nil, err)
			return
		}
		p.renderLogin(w, r, http.StatusUnauthorized, &view{Error: "Wrong email or password.", ErrorCode: "invalid_login",
			FieldErrors: map[string]string{"password": "Wrong email or password."}, Form: form}, next)
		return
	}
	if err := p.passwordAccepted(ctx, email, ip); err != nil {
		p.fail(w, r, nil, err)
		return
	}
	// Whatever session the browser had (or was given by someone else) ends
	// here; the signed-in session is always a new id.
	if old, err := r.Cookie(sessionCookie); err == nil {
		p.deleteSession(ctx, hashToken(old.Value))
	}
	_, enrolled, err := p.totpState(ctx, user.ID)
	if err != nil {
		p.fail(w, r, nil, err)
		return
	}
	stage := stageFull
	if enrolled {
		stage = stageMFA
	}
	token, err := p.newSession(ctx, user.ID, user.MerchantID, stage, r)
	if err != nil {
		p.fail(w, r, nil, err)
		return
	}
	p.setSessionCookie(w, r, token)
	if enrolled {
		p.auditAs(ctx, user.MerchantID, false, user.ID, ip, "login.password", "", "ok", "awaiting second factor")
		http.Redirect(w, r, "/portal/login/verify?next="+url.QueryEscape(safeNext(next)), http.StatusSeeOther)
		return
	}
	p.auditAs(ctx, user.MerchantID, false, user.ID, ip, "login", "", "ok", "")
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

func (p *Portal) tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration, form map[string][]string, next string) {
	secs := int(wait/time.Second) + 1
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	mins := (secs + 59) / 60
	p.renderLogin(w, r, http.StatusTooManyRequests, &view{
		Error:     "Too many failed sign-in attempts. Try again in " + strconv.Itoa(mins) + " minute(s).",
		ErrorCode: "login_throttled", Form: form}, next)
}

// verifyLocked answers 429 on the code form with a message saying why and
// for how long (msg has one %d: the minutes left).
func (p *Portal) verifyLocked(w http.ResponseWriter, r *http.Request, s *session, wait time.Duration, msg, code, next string) {
	secs := int(wait/time.Second) + 1
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	p.renderVerify(w, r, s, http.StatusTooManyRequests, &view{Error: fmt.Sprintf(msg, (secs+59)/60), ErrorCode: code}, next)
}

// verifyPage asks for the TOTP code of a user whose password was right.
func (p *Portal) verifyPage(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	s, err := p.loadSession(r.Context(), r)
	if err != nil {
		p.fail(w, r, nil, err)
		return
	}
	if s == nil {
		http.Redirect(w, r, "/portal/login", http.StatusSeeOther)
		return
	}
	if s.Stage == stageFull {
		http.Redirect(w, r, "/portal/test/", http.StatusSeeOther)
		return
	}
	p.renderVerify(w, r, s, http.StatusOK, &view{}, r.URL.Query().Get("next"))
}

func (p *Portal) renderVerify(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, next string) {
	v.Title = "Two-factor code"
	v.CSRF = sessionCSRF(s)
	v.Data = loginData{Next: safeNext(next)}
	p.render(w, r, nil, status, "verify", v)
}

// verify checks the TOTP code; success replaces the half-way session by a
// full one with a new id.
func (p *Portal) verify(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	ctx := r.Context()
	s, err := p.loadSession(ctx, r)
	if err != nil {
		p.fail(w, r, nil, err)
		return
	}
	if s == nil || s.Stage != stageMFA {
		http.Redirect(w, r, "/portal/login", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil || !sameOrigin(r) || !validToken(r.PostFormValue(csrfField), sessionCSRF(s)) {
		p.renderVerify(w, r, s, http.StatusForbidden, &view{Error: "The form's security token is missing or wrong. Try again.", ErrorCode: "csrf_token_invalid"}, "")
		return
	}
	next := r.PostFormValue("next")
	ip := clientIP(r)
	// A code attempt takes a slot of the address's budget and one of the
	// account's second-factor attempts before it is checked.
	if wait, err := p.reserve(ctx, []throttleBucket{ipBucket(ip)}); err != nil || wait > 0 {
		if err != nil {
			p.fail(w, r, nil, err)
			return
		}
		p.verifyLocked(w, r, s, wait, "Too many failed attempts from your address. Try again in %d minute(s).", "login_throttled", next)
		return
	}
	if until, err := p.reserveCode(ctx, s.UserID); err != nil || !until.IsZero() {
		p.release(ctx, []throttleBucket{ipBucket(ip)})
		if err != nil {
			p.fail(w, r, nil, err)
			return
		}
		p.auditAs(ctx, s.MerchantID, false, s.UserID, ip, "login.totp", "", "totp_locked", "")
		p.verifyLocked(w, r, s, until.Sub(p.now()), "Two-factor sign-in is locked after too many wrong codes. No code is accepted until the lock ends, in %d minute(s).", "totp_locked", next)
		return
	}
	ok, err := p.checkTOTP(ctx, s.UserID, r.PostFormValue("code"))
	if err != nil {
		p.fail(w, r, nil, err)
		return
	}
	if !ok {
		p.auditAs(ctx, s.MerchantID, false, s.UserID, ip, "login.totp", "", "totp_invalid", "")
		locked, err := p.codeRefused(ctx, s.UserID)
		if err != nil {
			p.fail(w, r, nil, err)
			return
		}
		if locked {
			// The lock is a security event of its own in the audit log.
			p.auditAs(ctx, s.MerchantID, false, s.UserID, ip, "login.totp_lock", "", "locked",
				fmt.Sprintf("%d wrong codes: second factor locked for %d minutes", mfaMaxFailures, int(mfaLock/time.Minute)))
			p.deleteSession(ctx, s.hash)
			p.clearSessionCookie(w, r)
			p.renderLogin(w, r, http.StatusTooManyRequests, &view{Error: fmt.Sprintf("Too many wrong codes: two-factor sign-in is locked for %d minutes.", int(mfaLock/time.Minute)),
				ErrorCode: "totp_locked"}, next)
			return
		}
		res, err := p.cfg.DB.Exec(ctx, "UPDATE portal_sessions SET mfa_failures = mfa_failures + 1 WHERE id = ? AND mfa_failures < ?", s.hash, maxMFAFailures-1)
		if err != nil {
			p.fail(w, r, nil, err)
			return
		}
		if n, _ := res.RowsAffected(); n == 0 {
			p.deleteSession(ctx, s.hash)
			p.clearSessionCookie(w, r)
			p.renderLogin(w, r, http.StatusUnauthorized, &view{Error: "Too many wrong codes. Sign in again.", ErrorCode: "totp_invalid"}, next)
			return
		}
		p.renderVerify(w, r, s, http.StatusUnauthorized, &view{Error: "That code is wrong or was already used.", ErrorCode: "totp_invalid",
			FieldErrors: map[string]string{"code": "That code is wrong or was already used."}}, next)
		return
	}
	p.release(ctx, []throttleBucket{ipBucket(ip)})
	if err := p.codeAccepted(ctx, s.UserID); err != nil {
		p.fail(w, r, nil, err)
		return
	}
	if err := p.deleteSession(ctx, s.hash); err != nil {
		p.fail(w, r, nil, err)
		return
	}
	token, err := p.newSession(ctx, s.UserID, s.MerchantID, stageFull, r)
	if err != nil {
		p.fail(w, r, nil, err)
		return
	}
	p.setSessionCookie(w, r, token)
	p.auditAs(ctx, s.MerchantID, false, s.UserID, clientIP(r), "login", "", "ok", "with second factor")
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

// logout ends the session (a POST form with its CSRF token, like every action).
func (p *Portal) logout(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	ctx := r.Context()
	s, err := p.loadSession(ctx, r)
	if err != nil {
		p.fail(w, r, nil, err)
		return
	}
	if s == nil {
		p.clearSessionCookie(w, r)
		http.Redirect(w, r, "/portal/login", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil || !sameOrigin(r) || !validToken(r.PostFormValue(csrfField), sessionCSRF(s)) {
		p.forbidden(w, r, nil, "csrf_token_invalid", "The form's security token is missing or wrong. Reload the page and try again.")
		return
	}
	if err := p.deleteSession(ctx, s.hash); err != nil {
		p.fail(w, r, nil, err)
		return
	}
	p.clearSessionCookie(w, r)
	p.auditAs(ctx, s.MerchantID, false, s.UserID, clientIP(r), "logout", "", "ok", "")
	http.Redirect(w, r, "/portal/login?done=logged_out", http.StatusSeeOther)
}

// totpState returns the user's sealed TOTP secret and whether it is enabled
// (a secret being enrolled is not yet enabled).
func (p *Portal) totpState(ctx context.Context, userID string) (sealed string, enabled bool, err error) {
	var en *int64
	err = p.cfg.DB.QueryRow(ctx, "SELECT secret, enabled_at FROM portal_totp WHERE user_id = ?", userID).Scan(&sealed, &en)
	if store.IsNotFound(err) {
		return "", false, nil
	}
	return sealed, err == nil && en != nil, err
}

// checkTOTP verifies a code for an enabled second factor and consumes its
// time step (compare-and-set on last_step, so two racing submissions of one
// code cannot both pass).
func (p *Portal) checkTOTP(ctx context.Context, userID, code string) (bool, error) {
	var sealed string
	var last int64
	err := p.cfg.DB.QueryRow(ctx, "SELECT secret, last_step FROM portal_totp WHERE user_id = ? AND enabled_at IS NOT NULL", userID).Scan(&sealed, &last)
	if store.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	secret, err := p.cfg.Box.Open(sealed, "totp/"+userID)
	if err != nil {
		return false, err
	}
	step, ok := totpMatch(string(secret), code, p.now(), last)
	if !ok {
		return false, nil
	}
	res, err := p.cfg.DB.Exec(ctx, "UPDATE portal_totp SET last_step = ? WHERE user_id = ? AND last_step < ?", step, userID, step)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
