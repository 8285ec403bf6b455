package portal_test

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/portal"
)

var totpSecretRE = regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`)

// TestTOTPEnrolAndLogin: enrol (a wrong first code is refused next to the
// field), then every sign-in needs a code; a used code cannot be replayed;
// the half-way session reaches no page.
func TestTOTPEnrolAndLogin(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		email, password := e.Merchant.Portal.Email, e.Merchant.Portal.Password
		p := e.NewPortal()
		p.Login(email, password)
		p.Get("/portal/test/account").Contains(t, "Set up two-factor authentication")
		pg := p.Post("/portal/test/account/totp", nil)
		m := totpSecretRE.FindStringSubmatch(pg.Body)
		if pg.Status != http.StatusOK || m == nil {
			t.Fatalf("enrol: %d %.800s", pg.Status, pg.Body)
		}
		secret := m[1]
		pg = p.Post("/portal/test/account/totp/confirm", url.Values{"code": {"000000"}})
		if pg.Status != http.StatusBadRequest {
			t.Fatalf("wrong first code: %d", pg.Status)
		}
		pg.Contains(t, `id="f-code-error"`)
		code := portal.TOTPNow(secret, time.Now(), 0)
		if pg := p.Post("/portal/test/account/totp/confirm", url.Values{"code": {code}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("confirm: %d %.500s", pg.Status, pg.Body)
		}

		q := e.NewPortal()
		q.Get("/portal/login")
		pg = q.Post("/portal/login", url.Values{"email": {email}, "password": {password}})
		if pg.Status != http.StatusSeeOther || pg.Location[:len("/portal/login/verify")] != "/portal/login/verify" {
			t.Fatalf("password step: %d %s", pg.Status, pg.Location)
		}
		half := q.Cookie("payd_session")
		if pg := q.Get("/portal/test/api_keys"); pg.Status != http.StatusSeeOther || pg.Location != "/portal/login/verify" {
			t.Fatalf("half-way session reached a page: %d %s", pg.Status, pg.Location)
		}
		q.Get("/portal/login/verify").Contains(t, `name="code"`)
		// The code used at enrolment cannot be replayed.
		if pg := q.Post("/portal/login/verify", url.Values{"code": {code}}); pg.Status != http.StatusUnauthorized {
			t.Fatalf("replayed code: %d", pg.Status)
		}
		next := portal.TOTPNow(secret, time.Now(), 1)
		pg = q.Post("/portal/login/verify", url.Values{"code": {next}})
		if pg.Status != http.StatusSeeOther || pg.Location != "/portal/test/" {
			t.Fatalf("verify: %d %s %.500s", pg.Status, pg.Location, pg.Body)
		}
		if full := q.Cookie("payd_session"); full == half || full == "" {
			t.Fatal("the session id did not change after the second factor")
		}
		q.Get("/portal/test/").Contains(t, "Dashboard")
		q.Get("/portal/test/audit").Contains(t, "totp.enable", "login.totp", "totp_invalid")
		e.RequireSecretsAbsent(secret, code, next)
	})
}
