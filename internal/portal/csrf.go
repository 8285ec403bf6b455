package portal

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"

	"github.com/payd/payd/internal/ids"
)

// CSRF protection. Signed in, the token of every form is an HMAC of the
// session's cookie token: bound to that session, nothing stored, and
// impossible to compute for a page on another site (which can neither read
// the HttpOnly cookie nor, SameSite=Strict, make the browser send it).
// Before sign-in the login form uses a double-submit cookie instead.

const (
	csrfField       = "csrf_token"
	loginCSRFCookie = "payd_login_csrf"
)

func csrfFor(secret, purpose string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("payd-portal-" + purpose + "-v1"))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// sessionCSRF is the form token of a session.
func sessionCSRF(s *session) string { return csrfFor(s.token, "csrf") }

func validToken(got, want string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// sameOrigin refuses a cross-site POST outright when the browser says where
// it came from (Origin); scripts that send no Origin rely on the token.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return o == ""
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// loginCSRF returns the login form's token, setting the double-submit cookie
// it is derived from when the browser has none.
func (p *Portal) loginCSRF(w http.ResponseWriter, r *http.Request) string {
	if ck, err := r.Cookie(loginCSRFCookie); err == nil && len(ck.Value) >= 20 && len(ck.Value) <= 100 {
		return csrfFor(ck.Value, "login")
	}
	v := ids.Secret("", 24)
	http.SetCookie(w, &http.Cookie{Name: loginCSRFCookie, Value: v, Path: "/portal/login", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: p.secure(r)})
	return csrfFor(v, "login")
}

// checkLoginCSRF validates the login form's token against its cookie.
func checkLoginCSRF(r *http.Request) bool {
	ck, err := r.Cookie(loginCSRFCookie)
	if err != nil || ck.Value == "" {
		return false
	}
	return sameOrigin(r) && validToken(r.PostFormValue(csrfField), csrfFor(ck.Value, "login"))
}
