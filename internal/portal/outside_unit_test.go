package portal

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// TestOnceOutsideItsUnitAnswers500: a portal form whose create runs a read
// through the plain DB while the form's unit of work is open (a missed site:
// it should run through db.Within(claim)) panics with store.ErrOutsideUnit.
// The portal, mounted on the API's router as payd mounts it, answers the
// internal error (500, the request named, its id in the log line of the
// panic) instead of taking the process down; nothing of the form remains,
// and its key is free: the same form submitted again runs (once lets a
// second submission of a form wait for the first, so a key left held would
// hang it).
func TestOnceOutsideItsUnitAnswers500(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		box, _ := secretbox.New("")
		ms := merchants.NewService(db, box)
		m, err := ms.Create(context.Background(), merchants.CreateParams{Name: "Outside its unit"})
		if err != nil {
			t.Fatal(err)
		}
		logs := &testutil.SyncBuffer{}
		logger := slog.New(slog.NewTextHandler(logs, nil))
		p, err := New(Config{DB: db, Merchants: ms, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		s := api.NewServer(api.Config{DB: db, Merchants: ms, Logger: logger})
		p.Register(s.Mux())
		const fact = "INSERT INTO instance_facts (name, value, created_at) VALUES ('portal outside', '', 0)"
		missed := true
		s.Mux().HandleFunc("POST /portal/test/outside_unit", func(w http.ResponseWriter, r *http.Request) {
			c := &reqCtx{sess: &session{UserID: "usr_outside", MerchantID: m.MerchantID, Role: "admin"}, mode: "test"}
			path, err := p.once(r, c, url.Values{"action": {"outside"}}, func(ctx context.Context, cl store.Claim) (string, error) {
				if _, err := p.cfg.DB.Within(cl).Exec(ctx, fact); err != nil {
					return "", err
				}
				if missed {
					var one int
					if err := p.cfg.DB.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil { // panics
						return "", err
					}
				}
				return "/portal/test/done", nil
			})
			if err != nil {
				p.fail(w, r, c, err)
				return
			}
			http.Redirect(w, r, path, http.StatusSeeOther)
		})
		submit := func() *httptest.ResponseRecorder {
			req := httptest.NewRequest("POST", "/portal/test/outside_unit", strings.NewReader("idempotency_key=pfk_outside"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			return w
		}
		w := submit()
		reqID := w.Header().Get("Request-Id")
		if w.Code != http.StatusInternalServerError || reqID == "" || !strings.Contains(w.Body.String(), reqID) ||
			strings.Contains(w.Body.String(), "unit of work") {
			t.Fatalf("answered %d %s (Request-Id %q); want 500 naming the request, without the cause", w.Code, w.Body, reqID)
		}
		if !testutil.LogHasLine(logs.String(), "level=ERROR", "request_id="+reqID, store.ErrOutsideUnit.Error()) {
			t.Fatalf("no error line with request_id=%s names ErrOutsideUnit; log:\n%s", reqID, logs)
		}
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM instance_facts WHERE name = 'portal outside'"); n != 0 {
			t.Fatalf("the failed form's write remains (%d)", n)
		}
		missed = false
		if w := submit(); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/portal/test/done" {
			t.Fatalf("the form submitted again answered %d %s; want 303 to /portal/test/done", w.Code, w.Body)
		}
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM instance_facts WHERE name = 'portal outside'"); n != 1 {
			t.Fatalf("after the form submitted again, %d writes; want 1", n)
		}
	})
}
