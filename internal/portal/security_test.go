package portal_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
)

// TestLoginSessionAndCookies: the login form, a wrong password (401 with the
// form and a message), a missing CSRF token (403), the session cookie's
// flags, a new session id at login (a planted one is never authenticated),
// and logout.
func TestLoginSessionAndCookies(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		p := e.NewPortal()
		if pg := p.Get("/portal/test/"); pg.Status != http.StatusSeeOther || !strings.HasPrefix(pg.Location, "/portal/login") {
			t.Fatalf("signed out dashboard: %d %s", pg.Status, pg.Location)
		}
		pg := p.Get("/portal/login")
		pg.Contains(t, `name="email"`, `name="password"`, `name="csrf_token"`, `<label for="f-email">`, `<label for="f-password">`)
		if p.CSRF == "" {
			t.Fatal("no csrf_token on the login form")
		}
		email, password := e.Merchant.Portal.Email, e.Merchant.Portal.Password

		// Missing and wrong token: 403, whatever the password.
		for _, tok := range []string{"", "forged"} {
			pg = p.Post("/portal/login", url.Values{"email": {email}, "password": {password}, "csrf_token": {tok}})
			if pg.Status != http.StatusForbidden || p.Cookie("payd_session") != "" {
				t.Fatalf("login with csrf_token %q: %d, session %q", tok, pg.Status, p.Cookie("payd_session"))
			}
		}
		// Wrong password: 401, the form again, a message next to the field.
		p.Get("/portal/login")
		pg = p.Post("/portal/login", url.Values{"email": {email}, "password": {"not-the-password"}})
		if pg.Status != http.StatusUnauthorized {
			t.Fatalf("wrong password: %d", pg.Status)
		}
		pg.Contains(t, `name="password"`, "Wrong email or password", `aria-invalid="true"`, `id="f-password-error"`)

		// A session id planted before login (fixation) is not the one that
		// becomes authenticated.
		base, _ := url.Parse(e.URL + "/portal/")
		planted := "planted-session-token-0123456789abcdef"
		p.Jar.SetCookies(base, []*http.Cookie{{Name: "payd_session", Value: planted, Path: "/portal"}})
		p.Get("/portal/login")
		pg = p.Post("/portal/login", url.Values{"email": {email}, "password": {password}})
		if pg.Status != http.StatusSeeOther || pg.Location != "/portal/test/" {
			t.Fatalf("login: %d %s %.300s", pg.Status, pg.Location, pg.Body)
		}
		set := pg.Header.Values("Set-Cookie")
		var sc string
		for _, c := range set {
			if strings.HasPrefix(c, "payd_session=") {
				sc = c
			}
		}
		if sc == "" || !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Strict") || !strings.Contains(sc, "Path=/portal") {
			t.Fatalf("session cookie flags: %q", sc)
		}
		if strings.Contains(sc, "Secure") {
			t.Fatalf("Secure set on a plain-HTTP response: %q", sc)
		}
		token := p.Cookie("payd_session")
		if token == "" || token == planted {
			t.Fatalf("session id not renewed at login: %q", token)
		}
		// The planted id is worth nothing.
		q := e.NewPortal()
		q.Jar.SetCookies(base, []*http.Cookie{{Name: "payd_session", Value: planted, Path: "/portal"}})
		if pg := q.Get("/portal/test/"); pg.Status != http.StatusSeeOther {
			t.Fatalf("planted session reached the dashboard: %d", pg.Status)
		}
		// Logging in again gives yet another id.
		p.Get("/portal/login")
		p.Post("/portal/login", url.Values{"email": {email}, "password": {password}})
		if again := p.Cookie("payd_session"); again == token || again == "" {
			t.Fatal("second login reused the session id")
		}
		// The old id died with the new login.
		old := e.NewPortal()
		old.Jar.SetCookies(base, []*http.Cookie{{Name: "payd_session", Value: token, Path: "/portal"}})
		if pg := old.Get("/portal/test/"); pg.Status != http.StatusSeeOther {
			t.Fatalf("pre-login session still valid: %d", pg.Status)
		}

		pg = p.Get("/portal/test/")
		pg.Contains(t, "Dashboard", "Test mode", `action="/portal/logout"`)
		// The session row stores a hash, never the token.
		var n int
		if err := e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM portal_sessions WHERE id = ?", p.Cookie("payd_session")).Scan(&n); err != nil || n != 0 {
			t.Fatalf("session token stored in clear (%d, %v)", n, err)
		}
		// Logout needs the token too, then ends the session.
		live := p.Cookie("payd_session")
		if pg := p.Post("/portal/logout", url.Values{"csrf_token": {"forged"}}); pg.Status != http.StatusForbidden {
			t.Fatalf("logout with a forged token: %d", pg.Status)
		}
		if pg := p.Post("/portal/logout", nil); pg.Status != http.StatusSeeOther {
			t.Fatalf("logout: %d", pg.Status)
		}
		after := e.NewPortal()
		after.Jar.SetCookies(base, []*http.Cookie{{Name: "payd_session", Value: live, Path: "/portal"}})
		if pg := after.Get("/portal/test/"); pg.Status != http.StatusSeeOther {
			t.Fatalf("session alive after logout: %d", pg.Status)
		}
		e.RequireSecretsAbsent(password, token, live)
	})
}

// TestCookieSecureOverTLS: over TLS the session cookie is also Secure.
func TestCookieSecureOverTLS(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t, "sqlite")
	srv := httptest.NewTLSServer(e.Main.API)
	defer srv.Close()
	p := e.NewPortal()
	p.Base = srv.URL
	p.Client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	p.Get("/portal/login")
	pg := p.Post("/portal/login", url.Values{"email": {e.Merchant.Portal.Email}, "password": {e.Merchant.Portal.Password}})
	if pg.Status != http.StatusSeeOther {
		t.Fatalf("login over TLS: %d", pg.Status)
	}
	for _, c := range pg.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "payd_session=") {
			if !strings.Contains(c, "Secure") || !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Strict") {
				t.Fatalf("cookie over TLS: %q", c)
			}
			return
		}
	}
	t.Fatal("no session cookie")
}

// TestCSRFOnActions: every action refuses a missing token, a wrong one, and
// another session's valid one (403), and nothing happens.
func TestCSRFOnActions(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		p.Get("/portal/test/api_keys")
		other := e.NewPortal()
		other.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		other.Get("/portal/test/api_keys")
		if other.CSRF == p.CSRF {
			t.Fatal("two sessions share a CSRF token")
		}
		before := countKeys(t, e)
		for name, tok := range map[string]string{"missing": "", "wrong": "AAAA", "other session's": other.CSRF} {
			pg := p.Post("/portal/test/api_keys", url.Values{"kind": {"secret"}, "csrf_token": {tok}})
			if pg.Status != http.StatusForbidden {
				t.Fatalf("%s token: %d", name, pg.Status)
			}
			pg.Contains(t, "csrf_token_invalid")
		}
		// A cross-site Origin is refused even with the right token.
		req, _ := http.NewRequest("POST", e.URL+"/portal/test/api_keys", strings.NewReader(url.Values{"kind": {"secret"}, "csrf_token": {p.CSRF}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		resp, err := p.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("cross-origin POST: %d", resp.StatusCode)
		}
		if after := countKeys(t, e); after != before {
			t.Fatalf("a refused form created a key (%d → %d)", before, after)
		}
		// GET is never an action: the action paths answer 405 to it.
		if pg := p.Get("/portal/test/users/x/disable"); pg.Status != http.StatusNotFound && pg.Status != http.StatusMethodNotAllowed {
			t.Fatalf("GET on an action: %d", pg.Status)
		}
		pg := p.Post("/portal/test/api_keys", url.Values{"kind": {"secret"}})
		if pg.Status != http.StatusCreated {
			t.Fatalf("create with the right token: %d %.500s", pg.Status, pg.Body)
		}
		pg.Contains(t, "sk_test_", "shown only this once")
	})
}

func countKeys(t *testing.T, e *apptest.Env) int {
	t.Helper()
	var n int
	if err := e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM api_keys").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRolesAndIsolation: an admin adds users; a viewer reads but cannot act
// (403); one merchant's user cannot reach another's objects by editing a URL
// (404), and test and live are never mixed (404 across modes).
func TestRolesAndIsolation(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		admin.Get("/portal/test/users")
		// Bad input: errors next to their fields, nothing created.
		pg := admin.Post("/portal/test/users", url.Values{"email": {"viewer@example.com"}, "password": {"short"}, "role": {"viewer"}})
		if pg.Status != http.StatusBadRequest {
			t.Fatalf("short password: %d", pg.Status)
		}
		pg.Contains(t, `id="f-password-error"`, "at least 10")
		pg = admin.Post("/portal/test/users", url.Values{"email": {"viewer@example.com"}, "password": {"viewer-password-1"}, "role": {"viewer"}})
		if pg.Status != http.StatusSeeOther {
			t.Fatalf("create viewer: %d %.500s", pg.Status, pg.Body)
		}
		admin.Get(pg.Location).Contains(t, "viewer@example.com")

		viewer := e.NewPortal()
		setOwnPassword(t, viewer, "viewer@example.com", "viewer-password-1", "viewer-own-password-1")
		viewer.Get("/portal/test/api_keys").Contains(t, "API keys")
		if pg := viewer.Post("/portal/test/api_keys", url.Values{"kind": {"secret"}}); pg.Status != http.StatusForbidden {
			t.Fatalf("viewer created a key: %d", pg.Status)
		} else {
			pg.Contains(t, "permission_denied")
		}
		keys, _ := e.Main.Merchants.ListKeys(ctx, e.Merchant.MerchantID, false)
		if pg := viewer.Post("/portal/test/api_keys/"+keys[0].ID+"/revoke", nil); pg.Status != http.StatusForbidden {
			t.Fatalf("viewer revoked a key: %d", pg.Status)
		}
		if pg := viewer.Get("/portal/test/users"); pg.Status != http.StatusForbidden {
			t.Fatalf("viewer saw users: %d", pg.Status)
		}

		// Another merchant's admin.
		c2 := e.NewMerchant(merchants.CreateParams{Name: "Other merchant"})
		other := e.NewPortal()
		other.Login(c2.Portal.Email, c2.Portal.Password)
		other.Get("/portal/test/api_keys")
		for _, path := range []string{"/portal/test/api_keys/" + keys[0].ID + "/roll", "/portal/test/api_keys/" + keys[0].ID + "/revoke"} {
			if pg := other.Post(path, nil); pg.Status != http.StatusNotFound {
				t.Fatalf("other merchant %s: %d", path, pg.Status)
			}
		}
		if strings.Contains(other.Get("/portal/test/api_keys").Body, keys[0].ID) {
			t.Fatal("another merchant's key is listed")
		}
		// Test and live never mixed: a test key is not found in live mode.
		if pg := admin.Post("/portal/live/api_keys/"+keys[0].ID+"/revoke", nil); pg.Status != http.StatusNotFound {
			t.Fatalf("test key through live mode: %d", pg.Status)
		}
		lp := admin.Get("/portal/live/api_keys")
		lp.Contains(t, "Live mode", "No keys in this mode")
		if strings.Contains(lp.Body, keys[0].ID) {
			t.Fatal("a test key is listed in live mode")
		}
		// Live keys are refused before approved KYC, on the page.
		pg = admin.Post("/portal/live/api_keys", url.Values{"kind": {"secret"}})
		if pg.Status != http.StatusForbidden {
			t.Fatalf("live key before KYC: %d", pg.Status)
		}
		pg.Contains(t, "kyc_not_approved")
		if pg := admin.Get("/portal/staging/"); pg.Status != http.StatusNotFound {
			t.Fatalf("unknown mode: %d", pg.Status)
		}

		// Disabling a user ends their session at once.
		users, _ := e.Main.Merchants.ListUsers(ctx, e.Merchant.MerchantID)
		var vid string
		for _, u := range users {
			if u.Email == "viewer@example.com" {
				vid = u.ID
			}
		}
		admin.Get("/portal/test/users")
		if pg := admin.Post("/portal/test/users/"+vid+"/disable", nil); pg.Status != http.StatusSeeOther {
			t.Fatalf("disable: %d", pg.Status)
		}
		if pg := viewer.Get("/portal/test/"); pg.Status != http.StatusSeeOther {
			t.Fatalf("disabled user still signed in: %d", pg.Status)
		}

		// The audit log names each action's principal.
		audit := admin.Get("/portal/test/audit")
		audit.Contains(t, "user.create", "user.disable", "refused", "permission_denied", "viewer@example.com")
		admin.Get("/portal/live/audit").Contains(t, "api_key.create", "kyc_not_approved")
	})
}

// TestLoginThrottle: after five failures for one email, even the right
// password is refused with 429 and Retry-After, without a password check.
func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t, "sqlite")
	p := e.NewPortal()
	for i := 0; i < 5; i++ {
		p.Get("/portal/login")
		if pg := p.Post("/portal/login", url.Values{"email": {e.Merchant.Portal.Email}, "password": {"wrong-password"}}); pg.Status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i+1, pg.Status)
		}
	}
	p.Get("/portal/login")
	pg := p.Post("/portal/login", url.Values{"email": {e.Merchant.Portal.Email}, "password": {e.Merchant.Portal.Password}})
	if pg.Status != http.StatusTooManyRequests || pg.Header.Get("Retry-After") == "" {
		t.Fatalf("sixth attempt: %d Retry-After %q", pg.Status, pg.Header.Get("Retry-After"))
	}
	pg.Contains(t, "Too many failed sign-in attempts", `name="password"`)
	// Another user from the same address is not locked out by this email.
	c2 := e.NewMerchant(merchants.CreateParams{Name: "Second"})
	e.NewPortal().Login(c2.Portal.Email, c2.Portal.Password)
}
