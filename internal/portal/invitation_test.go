package portal_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// setOwnPassword signs in a user an admin made with the invitation password
// and replaces it by password, as the portal forces at first sign-in.
func setOwnPassword(t *testing.T, p *apptest.Portal, email, invitation, password string) {
	t.Helper()
	p.Login(email, invitation)
	p.Get("/portal/password")
	if pg := p.Post("/portal/password", url.Values{"password": {password}, "confirm": {password}}); pg.Status != http.StatusSeeOther {
		t.Fatalf("set password: %d %.400s", pg.Status, pg.Body)
	}
}

// TestInvitationPasswordMustBeReplaced (finding 8): the password an admin
// gives a new user is a one-time invitation. Signed in with it, the user is
// sent to the set-password form; every other page redirects there and every
// action is refused (403 password_change_required) until they choose their
// own; a second session opened with the invitation ends when it changes; the
// invitation is refused at sign-in afterwards and the new password works.
func TestInvitationPasswordMustBeReplaced(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		admin.Get("/portal/test/users")
		email, invitation := "invited@example.com", "given-by-admin-1"
		if pg := admin.Post("/portal/test/users", url.Values{"email": {email}, "password": {invitation}, "role": {"admin"}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("create user: %d %.400s", pg.Status, pg.Body)
		}

		u := e.NewPortal()
		u.Login(email, invitation)
		other := e.NewPortal()
		other.Login(email, invitation)
		for _, path := range []string{"/portal/test/", "/portal/test/users", "/portal/live/payment_intents", "/portal/test/account"} {
			if pg := u.Get(path); pg.Status != http.StatusSeeOther || pg.Location != "/portal/password" {
				t.Fatalf("GET %s before setting a password: %d %s", path, pg.Status, pg.Location)
			}
		}
		pg := u.Get("/portal/password")
		if pg.Status != http.StatusOK || !strings.Contains(pg.Body, "Set your password") {
			t.Fatalf("set-password page: %d %.400s", pg.Status, pg.Body)
		}
		// Actions are refused, with the form's valid CSRF token.
		if pg := u.Post("/portal/test/users", url.Values{"email": {"sneaky@example.com"}, "password": {"sneaky-password-1"}, "role": {"admin"}}); pg.Status != http.StatusForbidden ||
			!strings.Contains(pg.Body, "password_change_required") {
			t.Fatalf("action before setting a password: %d %.400s", pg.Status, pg.Body)
		}
		if pg := u.Post("/portal/test/account/totp", nil); pg.Status != http.StatusForbidden {
			t.Fatalf("TOTP enrolment before setting a password: %d", pg.Status)
		}
		// The invitation itself, a short one, or two that differ are refused.
		for _, f := range []url.Values{
			{"password": {invitation}, "confirm": {invitation}},
			{"password": {"short"}, "confirm": {"short"}},
			{"password": {"my-own-password-1"}, "confirm": {"my-own-password-2"}},
		} {
			if pg := u.Post("/portal/password", f); pg.Status != http.StatusBadRequest {
				t.Fatalf("bad new password %v: %d %.300s", f, pg.Status, pg.Body)
			}
		}
		if pg := u.Post("/portal/password", url.Values{"password": {"my-own-password-1"}, "confirm": {"my-own-password-1"}, "csrf_token": {""}}); pg.Status != http.StatusForbidden {
			t.Fatalf("set password without CSRF token: %d", pg.Status)
		}
		if pg := u.Post("/portal/password", url.Values{"password": {"my-own-password-1"}, "confirm": {"my-own-password-1"}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("set password: %d %.400s", pg.Status, pg.Body)
		}
		// This session now works; the form is gone; the other session ended.
		if pg := u.Get("/portal/test/users"); pg.Status != http.StatusOK {
			t.Fatalf("users page after setting a password: %d", pg.Status)
		}
		if pg := u.Get("/portal/password"); pg.Status != http.StatusSeeOther || pg.Location != "/portal/test/" {
			t.Fatalf("set-password page after: %d %s", pg.Status, pg.Location)
		}
		if pg := other.Get("/portal/test/users"); pg.Status != http.StatusSeeOther || !strings.HasPrefix(pg.Location, "/portal/login") {
			t.Fatalf("invitation's other session after the change: %d %s", pg.Status, pg.Location)
		}
		// The invitation no longer signs in; the user's own password does.
		q := e.NewPortal()
		q.Get("/portal/login")
		if pg := q.Post("/portal/login", url.Values{"email": {email}, "password": {invitation}}); pg.Status != http.StatusUnauthorized {
			t.Fatalf("invitation after the change: %d %s", pg.Status, pg.Location)
		}
		q.Login(email, "my-own-password-1")
		if pg := q.Get("/portal/test/"); pg.Status != http.StatusOK {
			t.Fatalf("dashboard with the own password: %d %s", pg.Status, pg.Location)
		}
		// The merchant's first admin (not an invitation) is never asked.
		if pg := admin.Get("/portal/password"); pg.Status != http.StatusSeeOther || pg.Location != "/portal/test/" {
			t.Fatalf("first admin on the set-password page: %d %s", pg.Status, pg.Location)
		}
	})
}
