package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
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
		s.Handle("POST /v1/test/panics", func(w http.ResponseWriter, r *http.Request) error {
			runs++
			if p, ok := api.ClaimOf(r).Resuming(); ok {
				api.WriteJSON(w, http.StatusCreated, map[string]string{"resumed": p.Ref})
				return nil
			}
			if err := api.ClaimOf(r).RecoveryPoint(r.Context(), "test.call", "obj_p"); err != nil {
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
