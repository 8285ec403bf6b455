package portal

import (
	"net/http"

	"github.com/payd/payd/internal/errs"
)

// setPasswordPage is the one page a user signed in with an admin's
// invitation password can see: the form choosing their own.
func (p *Portal) setPasswordPage(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	s, ok := p.invitedSession(w, r)
	if !ok {
		return
	}
	p.renderSetPassword(w, r, s, http.StatusOK, &view{})
}

func (p *Portal) renderSetPassword(w http.ResponseWriter, r *http.Request, s *session, status int, v *view) {
	v.Title = "Set your password"
	v.CSRF = sessionCSRF(s)
	p.render(w, r, nil, status, "set_password", v)
}

// invitedSession loads the request's session for the set-password form: no
// session or a half-way one goes to sign-in, a user whose password is
// already their own goes to the dashboard.
func (p *Portal) invitedSession(w http.ResponseWriter, r *http.Request) (*session, bool) {
	s, err := p.loadSession(r.Context(), r)
	if err != nil {
		p.fail(w, r, nil, err)
		return nil, false
	}
	switch {
	case s == nil:
		http.Redirect(w, r, "/portal/login", http.StatusSeeOther)
		return nil, false
	case s.Stage != stageFull:
		http.Redirect(w, r, "/portal/login/verify", http.StatusSeeOther)
		return nil, false
	case !s.MustSetPassword:
		http.Redirect(w, r, "/portal/test/", http.StatusSeeOther)
		return nil, false
	}
	return s, true
}

// setPassword replaces the invitation password by the user's own (fields
// password and confirm). The invitation stops working at once and the
// user's other sessions end; this session goes on to the dashboard.
func (p *Portal) setPassword(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	s, ok := p.invitedSession(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil || !sameOrigin(r) || !validToken(r.PostFormValue(csrfField), sessionCSRF(s)) {
		p.renderSetPassword(w, r, s, http.StatusForbidden, &view{Error: "The form's security token is missing or wrong. Try again.", ErrorCode: "csrf_token_invalid"})
		return
	}
	password, confirm := r.PostFormValue("password"), r.PostFormValue("confirm")
	if password != confirm {
		msg := "The two passwords differ."
		p.renderSetPassword(w, r, s, http.StatusBadRequest, &view{Error: msg, ErrorCode: "parameter_invalid", FieldErrors: map[string]string{"confirm": msg}})
		return
	}
	ctx := r.Context()
	p.hashing <- struct{}{}
	err := p.cfg.Merchants.SetOwnPassword(ctx, s.UserID, password, s.hash)
	<-p.hashing
	if err != nil {
		e := errs.As(err)
		if e == nil || e.Kind == errs.KindInternal {
			p.fail(w, r, nil, err)
			return
		}
		v := &view{Error: e.Message, ErrorCode: e.Code}
		if e.Param != "" {
			v.FieldErrors = map[string]string{e.Param: e.Message}
		}
		p.renderSetPassword(w, r, s, statusOf(err), v)
		return
	}
	p.auditAs(ctx, s.MerchantID, false, s.UserID, clientIP(r), "user.password_set", s.UserID, "ok", "invitation password replaced")
	http.Redirect(w, r, "/portal/test/", http.StatusSeeOther)
}
