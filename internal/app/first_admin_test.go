package app_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store/storetest"
)

// TestFirstAdminIsInvited (issue 37, item 8): the portal password printed
// for a merchant's first admin, by `payd merchant create` or for the demo
// merchant `payd serve` makes, is a one-time invitation like the one an
// admin gives a user: signed in with it, the admin reaches only the
// set-password form until choosing their own, and the printed password then
// no longer signs in.
func TestFirstAdminIsInvited(t *testing.T) {
	t.Parallel()
	key := map[string]string{"PAYD_SECRETS_KEY": strings.Repeat("5a", 32)}
	portalRE := regexp.MustCompile(`portal\s+\S+/portal\s+(\S+) / (\S+)`)
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			ctx := context.Background()
			var out bytes.Buffer
			m := mainFor(t, storetest.MigratedURL(t, engine), key, &out)
			if err := m.Run(ctx); err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			banner := portalRE.FindStringSubmatch(out.String())
			if banner == nil || !strings.Contains(out.String(), "one-time password") {
				t.Fatalf("the demo banner shows no one-time portal login:\n%s", out.String())
			}
			cli, err := m.Merchants.Create(ctx, merchants.CreateParams{Name: "Made by the CLI"})
			if err != nil {
				t.Fatal(err)
			}
			for _, login := range [][2]string{{banner[1], banner[2]}, {cli.Portal.Email, cli.Portal.Password}} {
				email, printed := login[0], login[1]
				jar, _ := cookiejar.New(nil)
				p := &apptest.Portal{T: t, Base: m.URL(), Jar: jar, Client: &http.Client{Jar: jar, Timeout: 60 * time.Second,
					CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
				p.Login(email, printed)
				if pg := p.Get("/portal/test/"); pg.Status != http.StatusSeeOther || pg.Location != "/portal/password" {
					t.Fatalf("%s: the dashboard with the printed password: %d %s", email, pg.Status, pg.Location)
				}
				p.Get("/portal/password").Contains(t, "Set your password")
				own := "chosen-by-the-admin-1"
				if pg := p.Post("/portal/password", url.Values{"password": {own}, "confirm": {own}}); pg.Status != http.StatusSeeOther {
					t.Fatalf("%s: set password: %d %.400s", email, pg.Status, pg.Body)
				}
				if pg := p.Get("/portal/test/"); pg.Status != http.StatusOK {
					t.Fatalf("%s: the dashboard after choosing a password: %d %s", email, pg.Status, pg.Location)
				}
				if _, err := m.Merchants.Login(ctx, email, printed); err == nil {
					t.Fatalf("%s: the printed password still signs in", email)
				}
			}
		})
	}
}
