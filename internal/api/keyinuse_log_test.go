package api_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/idempotency"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// TestKeyInUseIsNotAnErrorInTheLog: a request whose key another process's
// run holds (it committed a recovery point and is calling a provider) writes
// its effect, meets the key at its entry (SQLite) or its last write
// (PostgreSQL), and answers 409 idempotency_key_in_use. That is the client's
// retry arriving early, not a fault of payd's: the run's own failure, which
// nobody receives, is not logged as an internal error.
func TestKeyInUseIsNotAnErrorInTheLog(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ms, key, _ := apiOnDB(t, db, "Key in use")
		logs := &testutil.SyncBuffer{}
		s := api.NewServer(api.Config{DB: db, Merchants: ms, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		var runs int
		hold := func(r *http.Request) {
			// Another process's run of the same request: its recovery point
			// committed, its provider call still out.
			p := auth.Must(r.Context())
			body, _ := io.ReadAll(r.Body)
			req := idempotency.Request{Scope: idempotency.Scope{MerchantID: p.MerchantID, Livemode: p.Livemode, PrincipalID: p.ID},
				Key: r.Header.Get("Idempotency-Key"), Method: r.Method, Path: r.URL.Path, Hash: idempotency.RequestHash(r.Method, r.URL.Path, body)}
			ctx, other := idempotency.Start(context.Background(), db, req, idempotency.Found{})
			if err := other.RecoveryPoint(ctx, "test.call", "obj_1"); err != nil {
				t.Errorf("the other run's recovery point: %v", err)
			}
		}
		s.HandleClaimed("POST /v1/test/held_write", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
			hold(r)
			runs++
			if err := writeMerchant(r, cl, db, "effect"); err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusCreated, map[string]int{"run": runs})
			return nil
		})
		w := postKeyed(s, key, "/v1/test/held_write", "held-write-1")
		if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "idempotency_key_in_use") {
			t.Fatalf("answered %d %s; want 409 idempotency_key_in_use", w.Code, w.Body)
		}
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM merchants WHERE name = 'effect'"); n != 0 {
			t.Fatalf("the refused run's effect was kept (%d)", n)
		}
		if strings.Contains(logs.String(), "level=ERROR") {
			t.Fatalf("a 409 idempotency_key_in_use logged an error:\n%s", logs)
		}
		// An internal error that is answered is still logged, once.
		s.HandleClaimed("POST /v1/test/broken", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
			return errors.New("a bug")
		})
		if w := postKeyed(s, key, "/v1/test/broken", "broken-1"); w.Code != http.StatusInternalServerError {
			t.Fatalf("answered %d %s; want 500", w.Code, w.Body)
		}
		if n := strings.Count(logs.String(), `level=ERROR msg="internal error"`); n != 1 || !strings.Contains(logs.String(), "a bug") {
			t.Fatalf("an answered 500 logged %d errors:\n%s", n, logs)
		}
	})
}
