package api_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// TestPanicPastRecoveryPointFreesItsKey: a handler that panics after its
// request committed a recovery point answers 500 (the outer middleware
// recovers), and its key is released as an aborted run's is: a retry with
// the same key resumes from the point at once. Without it, the run's lease
// renewals (which stop only when the claim finishes or aborts) would hold
// the key for minutes, every retry answering 409 idempotency_key_in_use.
func TestPanicPastRecoveryPointFreesItsKey(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		_, key, newServer := apiOnDB(t, db, "Panics")
		s := newServer()
		runs := 0
		s.HandleClaimed("POST /v1/test/panics", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
			runs++
			if p, ok := cl.Resuming(); ok {
				api.WriteJSON(w, http.StatusCreated, map[string]string{"resumed": p.Ref})
				return nil
			}
			if err := cl.RecoveryPoint(r.Context(), "test.call", "obj_p"); err != nil {
				return err
			}
			panic("a bug after the recovery point")
		})
		if w := postKeyed(s, key, "/v1/test/panics", "panic-1"); w.Code != http.StatusInternalServerError {
			t.Fatalf("the panicking run answered %d %s; want 500", w.Code, w.Body)
		}
		w := postKeyed(s, key, "/v1/test/panics", "panic-1")
		if w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), "obj_p") {
			t.Fatalf("the retry answered %d %s; want 201, resumed from obj_p", w.Code, w.Body)
		}
		if runs < 2 {
			t.Fatalf("%d runs", runs)
		}
	})
}

// TestStatementOutsideItsUnitAnswers500: a handler that runs a statement
// through the plain DB while its request's unit of work is open (a missed
// site: it should run through db.Within(claim)) does not take the process
// down. The single-row read panics with store.ErrOutsideUnit: the outer
// middleware recovers it and answers the internal error (500 api_error,
// nothing of the cause in it) naming the request, whose id the log line of
// the panic carries. A write returns the error, answered the same way.
// Nothing of either request remains, and the server goes on answering.
func TestStatementOutsideItsUnitAnswers500(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ms, key, _ := apiOnDB(t, db, "Outside its unit")
		logs := &testutil.SyncBuffer{}
		s := api.NewServer(api.Config{DB: db, Merchants: ms, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		outside := map[string]func(r *http.Request) error{
			"read": func(r *http.Request) error {
				var one int
				return db.QueryRow(r.Context(), "SELECT 1").Scan(&one) // panics
			},
			"write": func(r *http.Request) error {
				_, err := db.Exec(r.Context(), insertFact, "outside write")
				return err
			},
		}
		for name, stmt := range outside {
			t.Run(name, func(t *testing.T) {
				fact := "inside " + name
				s.HandleClaimed("POST /v1/test/outside_"+name, func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
					if _, err := db.Within(cl).Exec(r.Context(), insertFact, fact); err != nil {
						return err
					}
					if err := stmt(r); err != nil {
						return err
					}
					api.WriteJSON(w, http.StatusCreated, map[string]string{"ok": "true"})
					return nil
				})
				w := postKeyed(s, key, "/v1/test/outside_"+name, "outside-"+name)
				reqID := w.Header().Get("Request-Id")
				if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), `"code":"api_error"`) ||
					strings.Contains(w.Body.String(), "unit of work") ||
					reqID == "" || !strings.Contains(w.Body.String(), reqID) {
					t.Fatalf("answered %d %s (Request-Id %q); want 500 api_error naming the request, without the cause", w.Code, w.Body, reqID)
				}
				if !testutil.LogHasLine(logs.String(), "level=ERROR", "request_id="+reqID, store.ErrOutsideUnit.Error()) {
					t.Fatalf("no error line with request_id=%s names ErrOutsideUnit; log:\n%s", reqID, logs)
				}
				if n := storetest.Count(t, db, "SELECT COUNT(*) FROM instance_facts WHERE name IN ('"+fact+"', 'outside write')"); n != 0 {
					t.Fatalf("%d of the failed request's writes remain", n)
				}
				if n := storetest.Count(t, db, "SELECT COUNT(*) FROM idempotency_keys WHERE idem_key = 'outside-"+name+"'"); n != 0 {
					t.Fatalf("the failed request left its key (%d rows)", n)
				}
			})
		}
		req := httptest.NewRequest("GET", "/v1/balance", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("after the failures, GET /v1/balance answered %d %s", w.Code, w.Body)
		}
	})
}
