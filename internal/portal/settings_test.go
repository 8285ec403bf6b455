package portal_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/portal"
	"github.com/payd/payd/internal/store"
)

var (
	newSecretRE = regexp.MustCompile(`<code id="new-secret">([^<]+)</code>`)
	changeRE    = regexp.MustCompile(`id="change-(setchg_[0-9A-Za-z]+)"`)
)

// TestSettingsPage: the portal's settings page loosens a control only for an
// admin whose session passed the second factor: an admin raises or clears
// the approval threshold of one mode at once (an audit row and a
// settings.updated event, the other mode untouched); a viewer, or a session
// still waiting for its TOTP code, is refused; a loosening an API key asked
// for is listed and approved by an admin who is another person, while the
// admin who made that key is refused (self_approval_not_allowed).
func TestSettingsPage(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		mid := e.Merchant.MerchantID
		threshold := func(live bool) any {
			st, err := e.Main.Merchants.Settings(ctx, store.NoClaim, mid, live)
			if err != nil {
				t.Fatal(err)
			}
			if st.ApprovalThresholdMinor == nil {
				return nil
			}
			return *st.ApprovalThresholdMinor
		}
		count := func(q string, args ...any) int {
			var n int
			if err := e.Main.DB.QueryRow(ctx, q, args...).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		loosened := func() int {
			return count("SELECT COUNT(*) FROM portal_audit WHERE merchant_id = ? AND livemode = ? AND action = 'settings.loosened'", mid, false)
		}
		updatedEvents := func() int {
			return count("SELECT COUNT(*) FROM events WHERE merchant_id = ? AND livemode = ? AND type = 'settings.updated'", mid, false)
		}
		if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 500}); r.Status != 200 {
			t.Fatalf("tighten by key: %d %s", r.Status, r.Body)
		}

		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		admin.Get("/portal/test/settings").Contains(t, `id="threshold"`, "<strong>500</strong>", `name="approval_threshold_minor"`, `value="500"`)

		viewer := newUser(t, e, "viewer-settings@example.com", "viewer")
		pg := viewer.Get("/portal/test/settings") // also gives the form token
		pg.Contains(t, "<strong>500</strong>")
		if regexp.MustCompile(`name="approval_threshold_minor"`).MatchString(pg.Body) {
			t.Fatal("a viewer is offered the settings form")
		}
		if pg := viewer.Post("/portal/test/settings", url.Values{"approval_threshold_minor": {""}}); pg.Status != http.StatusForbidden {
			t.Fatalf("viewer clears the threshold: %d", pg.Status)
		} else {
			pg.Contains(t, "permission_denied")
		}
		if pg := admin.Post("/portal/test/settings", url.Values{"approval_threshold_minor": {"-5"}}); pg.Status != http.StatusBadRequest {
			t.Fatalf("negative threshold: %d", pg.Status)
		} else {
			pg.Contains(t, "parameter_invalid", `id="f-approval_threshold_minor-error"`, `value="-5"`)
		}
		if got := threshold(false); got != int64(500) {
			t.Fatalf("refused forms changed the threshold: %v", got)
		}

		// The admin raises it: at once, audited, an event; live untouched.
		audits, evts := loosened(), updatedEvents()
		if pg := admin.Post("/portal/test/settings", url.Values{"approval_threshold_minor": {"9000"}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("raise: %d %.500s", pg.Status, pg.Body)
		}
		if got := threshold(false); got != int64(9000) || threshold(true) != nil {
			t.Fatalf("thresholds test %v live %v, want 9000 and none", got, threshold(true))
		}
		if loosened() != audits+1 || updatedEvents() != evts+1 {
			t.Fatalf("raising left %d audit rows and %d events, want one each", loosened()-audits, updatedEvents()-evts)
		}
		admin.Get("/portal/test/settings?done=threshold_saved").Contains(t, "The approval settings were saved.", "<strong>9000</strong>")
		admin.Get("/portal/test/audit").Contains(t, "settings.loosened", "settings.update")

		// A key asks to clear it: pending, listed; the admin approves.
		r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": nil})
		if r.Status != http.StatusAccepted {
			t.Fatalf("key clears: %d %s", r.Status, r.Body)
		}
		change := r.Map(t)["id"].(string)
		admin.Get("/portal/test/settings").Contains(t, `id="change-`+change+`"`, "Approve change "+change)
		if pg := admin.Post("/portal/test/settings/changes/"+change+"/approve", nil); pg.Status != http.StatusSeeOther {
			t.Fatalf("approve: %d %.500s", pg.Status, pg.Body)
		}
		if got := threshold(false); got != nil {
			t.Fatalf("approved clearing left %v", got)
		}
		if pg := admin.Post("/portal/test/settings/changes/"+change+"/approve", nil); pg.Status != http.StatusConflict {
			t.Fatalf("approved twice: %d", pg.Status)
		}

		// A key the admin made is the admin: its loosening needs someone else.
		if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 100}); r.Status != 200 {
			t.Fatalf("tighten: %d", r.Status)
		}
		pg = admin.Post("/portal/test/api_keys", url.Values{"kind": {"secret"}})
		m := newSecretRE.FindStringSubmatch(pg.Body)
		if m == nil {
			t.Fatalf("new key: %d %.500s", pg.Status, pg.Body)
		}
		r = e.Do(apptest.Request{Method: "POST", Path: "/v1/settings", Key: m[1], Body: map[string]any{"approval_threshold_minor": 700},
			Headers: map[string]string{"Idempotency-Key": "raise-" + string(e.Engine)}})
		if r.Status != http.StatusAccepted {
			t.Fatalf("admin's key raises: %d %s", r.Status, r.Body)
		}
		own := r.Map(t)["id"].(string)
		pg = admin.Get("/portal/test/settings")
		if ids := changeRE.FindAllStringSubmatch(pg.Body, -1); len(ids) != 1 || ids[0][1] != own {
			t.Fatalf("pending changes listed: %v, want %s", ids, own)
		}
		if pg := admin.Post("/portal/test/settings/changes/"+own+"/approve", nil); pg.Status != http.StatusForbidden {
			t.Fatalf("self-approval: %d", pg.Status)
		} else {
			pg.Contains(t, "self_approval_not_allowed")
		}
		other := newUser(t, e, "admin2-settings@example.com", "admin")
		other.Get("/portal/test/settings").Contains(t, "Approve change "+own)
		if pg := other.Post("/portal/test/settings/changes/"+own+"/approve", nil); pg.Status != http.StatusSeeOther {
			t.Fatalf("another admin approves: %d %s", pg.Status, regexp.MustCompile(`(?s)id="page-error".{0,300}`).FindString(pg.Body))
		}
		if got := threshold(false); got != int64(700) {
			t.Fatalf("threshold %v, want 700", got)
		}

		// With TOTP enrolled, a session that has only passed the password
		// cannot loosen anything.
		pg = other.Post("/portal/test/account/totp", nil)
		sm := totpSecretRE.FindStringSubmatch(pg.Body)
		if sm == nil {
			t.Fatalf("enrol: %d", pg.Status)
		}
		if pg := other.Post("/portal/test/account/totp/confirm", url.Values{"code": {portal.TOTPNow(sm[1], time.Now(), 0)}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("confirm: %d", pg.Status)
		}
		half := e.NewPortal()
		half.Get("/portal/login")
		half.Post("/portal/login", url.Values{"email": {"admin2-settings@example.com"}, "password": {"password-admin-1"}})
		if pg := half.Post("/portal/test/settings", url.Values{"approval_threshold_minor": {""}}); pg.Status != http.StatusForbidden {
			t.Fatalf("half-signed-in admin clears the threshold: %d", pg.Status)
		} else {
			pg.Contains(t, "session_required")
		}
		if got := threshold(false); got != int64(700) {
			t.Fatalf("threshold %v after refusals, want 700", got)
		}
	})
}

// TestSettingsPageWindow (issue 37, item 5): the settings page shows the
// cumulative rule's window beside the threshold; an admin shortens it at
// once (an audit row), a window out of bounds is refused naming the field and
// changes nothing, and a shortening an API key asked for is listed with its
// new window.
func TestSettingsPageWindow(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		window := func() int64 {
			st, err := e.Main.Merchants.Settings(ctx, store.NoClaim, e.Merchant.MerchantID, false)
			if err != nil {
				t.Fatal(err)
			}
			return st.ApprovalWindowSeconds
		}
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		admin.Get("/portal/test/settings").Contains(t, `id="window"`, "<strong>1 d</strong>", `name="approval_window_seconds"`, `value="86400"`)
		if pg := admin.Post("/portal/test/settings", url.Values{"approval_threshold_minor": {""}, "approval_window_seconds": {"60"}}); pg.Status != http.StatusBadRequest {
			t.Fatalf("a window of 60 s: %d", pg.Status)
		} else {
			pg.Contains(t, "parameter_invalid", `id="f-approval_window_seconds-error"`, `value="60"`)
		}
		if got := window(); got != 86400 {
			t.Fatalf("a refused form changed the window: %d", got)
		}
		if pg := admin.Post("/portal/test/settings", url.Values{"approval_threshold_minor": {"5000"}, "approval_window_seconds": {"3600"}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("shorten: %d %.500s", pg.Status, pg.Body)
		}
		if got := window(); got != 3600 {
			t.Fatalf("window %d after the admin shortened it to 3600", got)
		}
		admin.Get("/portal/test/audit").Contains(t, "approval_window_seconds 86400 → 3600")
		// A key lengthens it (at once), then asks to shorten it (pending).
		if r := e.Post("/v1/settings", map[string]any{"approval_window_seconds": 14400}); r.Status != http.StatusOK {
			t.Fatalf("lengthen by key: %d %s", r.Status, r.Body)
		}
		r := e.Post("/v1/settings", map[string]any{"approval_window_seconds": 7200})
		if r.Status != http.StatusAccepted {
			t.Fatalf("shorten by key: %d %s", r.Status, r.Body)
		}
		change := r.Map(t)["id"].(string)
		admin.Get("/portal/test/settings").Contains(t, `id="change-`+change+`"`, "<td>2 h</td>", "<strong>4 h</strong>")
	})
}
