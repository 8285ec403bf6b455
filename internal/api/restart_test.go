package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// TestDatabaseRestartMidLoad (PostgreSQL): payd reaches its database through
// a proxy that plays a server restart in the middle of a load of keyed
// requests: every open connection is cut and, for 700 ms, new ones are
// refused. Requests whose runs fail then, on their first statement, their
// key's read, their unit's BEGIN or their COMMIT, pause and run again: every
// request answers 201, and every key has exactly one effect.
func TestDatabaseRestartMidLoad(t *testing.T) {
	p, db, _, key, s := proxiedAPI(t, "Restarted")
	s.HandleClaimed("POST /v1/test/restart", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
		if err := writeMerchant(r, cl, db, "restart "+r.Header.Get("Idempotency-Key")); err != nil {
			return err
		}
		api.WriteJSON(w, http.StatusCreated, map[string]bool{"done": true})
		return nil
	})

	const clients, each = 8, 40
	var wg sync.WaitGroup
	failed := make(chan string, clients*each)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				k := fmt.Sprintf("restart-%d-%d", c, i)
				if w := postKeyed(s, key, "/v1/test/restart", k); w.Code != http.StatusCreated {
					failed <- fmt.Sprintf("%s: %d %s", k, w.Code, w.Body)
				}
			}
		}()
	}
	time.Sleep(30 * time.Millisecond)
	cut := p.Restart(700 * time.Millisecond)
	wg.Wait()
	close(failed)
	for f := range failed {
		t.Error(f)
	}
	if cut == 0 {
		t.Error("the restart cut no connection: the load was over before it")
	}
	var n, keys int
	if err := db.QueryRow(context.Background(), "SELECT COUNT(*), COUNT(DISTINCT name) FROM merchants WHERE name LIKE 'restart %'").Scan(&n, &keys); err != nil {
		t.Fatal(err)
	}
	if n != clients*each || keys != clients*each {
		t.Errorf("%d effects for %d keys, want %d and %d", n, keys, clients*each, clients*each)
	}
	t.Logf("%d connections cut", cut)
}

// TestReadWhileDatabaseDown (PostgreSQL): a GET whose read finds the
// database down (connections cut, new ones refused) answers 503
// database_unavailable with Retry-After, not 500: it changed nothing, and a
// retry once the database is back answers. Both reads a GET makes are
// played: QueryRow, and QueryRowByKey (the by-key read of one object, which
// on PostgreSQL reads through pgx on a connection of its own).
func TestReadWhileDatabaseDown(t *testing.T) {
	for _, read := range []struct {
		name string
		row  func(db *store.DB, ctx context.Context, q string) store.Row
	}{
		{"QueryRow", func(db *store.DB, ctx context.Context, q string) store.Row { return db.QueryRow(ctx, q) }},
		{"QueryRowByKey", func(db *store.DB, ctx context.Context, q string) store.Row { return db.QueryRowByKey(ctx, q) }},
	} {
		t.Run(read.name, func(t *testing.T) {
			p, db, _, key, s := proxiedAPI(t, "Read while down")
			s.HandleClaimed("GET /v1/test/read", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
				var n int
				if err := read.row(db, r.Context(), "SELECT COUNT(*) FROM merchants").Scan(&n); err != nil {
					return err
				}
				api.WriteJSON(w, http.StatusOK, map[string]int{"merchants": n})
				return nil
			})
			get := func() *httptest.ResponseRecorder {
				req := httptest.NewRequest("GET", "/v1/test/read", nil)
				req.Header.Set("Authorization", "Bearer "+key)
				w := httptest.NewRecorder()
				s.ServeHTTP(w, req)
				return w
			}
			if w := get(); w.Code != http.StatusOK {
				t.Fatalf("before: %d %s", w.Code, w.Body)
			}
			p.Down()
			w := get()
			if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), `"database_unavailable"`) || w.Header().Get("Retry-After") != "1" {
				t.Errorf("while down: %d %s (Retry-After %q), want 503 database_unavailable with Retry-After: 1", w.Code, w.Body, w.Header().Get("Retry-After"))
			}
			p.Up()
			if w := get(); w.Code != http.StatusOK {
				t.Errorf("once up again: %d %s", w.Code, w.Body)
			}
		})
	}
}

// proxiedAPI is an API server on a fresh PostgreSQL database reached
// through a testutil.DBProxy, with a merchant named name and its secret key.
func proxiedAPI(t *testing.T, name string) (*testutil.DBProxy, *store.DB, *merchants.Service, string, *api.Server) {
	t.Helper()
	u, err := url.Parse(storetest.MigratedURL(t, storetest.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	p := testutil.StartDBProxy(t, u.Host)
	u.Host = p.Addr()
	db, err := store.Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ms, key, newServer := apiOnDB(t, db, name)
	return p, db, ms, key, newServer()
}

// TestWriteWhileNoDatabaseTakesWrites (PostgreSQL): while no database takes
// writes, a write that changed nothing answers 503 database_unavailable with
// Retry-After, never 500: a write without an Idempotency-Key whose database
// is down, and a keyed or unkeyed write that reached a server taking no
// writes (a standby, during a failover: SQLSTATE 25006, played here by a
// read-only transaction).
func TestWriteWhileNoDatabaseTakesWrites(t *testing.T) {
	p, db, _, key, s := proxiedAPI(t, "Write while down")
	s.HandleClaimed("POST /v1/test/write", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
		if err := writeMerchant(r, cl, db, "written"); err != nil {
			return err
		}
		api.WriteJSON(w, http.StatusCreated, map[string]bool{"written": true})
		return nil
	})
	s.HandleClaimed("POST /v1/test/standby", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
		return db.Within(cl).InTx(r.Context(), func(tx *store.Tx) error {
			if _, err := tx.Exec(r.Context(), "SET TRANSACTION READ ONLY"); err != nil {
				return err
			}
			_, err := tx.Exec(r.Context(), "UPDATE merchants SET name = name WHERE id = 'none'")
			return err
		})
	})
	send := func(path, idem string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", path, strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w
	}
	unavailable := func(what string, w *httptest.ResponseRecorder) {
		t.Helper()
		if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), `"database_unavailable"`) || w.Header().Get("Retry-After") == "" {
			t.Errorf("%s: %d %s (Retry-After %q), want 503 database_unavailable with Retry-After", what, w.Code, w.Body, w.Header().Get("Retry-After"))
		}
	}
	unavailable("a keyed write reaching a standby", send("/v1/test/standby", "standby-1"))
	unavailable("an unkeyed write reaching a standby", send("/v1/test/standby", ""))
	if w := send("/v1/test/write", ""); w.Code != http.StatusCreated {
		t.Fatalf("before: %d %s", w.Code, w.Body)
	}
	p.Down()
	unavailable("an unkeyed write while down", send("/v1/test/write", ""))
	p.Up()
	if w := send("/v1/test/write", ""); w.Code != http.StatusCreated {
		t.Errorf("once up again: %d %s", w.Code, w.Body)
	}
}

// TestAnswerLostPastRecoveryPointResumes (PostgreSQL): a request past a
// recovery point whose answer's commit meets a lost database runs again
// (once the database is back) as its retry would: it resumes from the
// point. It does not find its own key still leased to itself and answer 409
// idempotency_key_in_use until the lease runs out.
func TestAnswerLostPastRecoveryPointResumes(t *testing.T) {
	p, db, _, key, s := proxiedAPI(t, "Answer lost")
	s.SetPausing(64, 10*time.Second)
	runs := 0
	s.HandleClaimed("POST /v1/test/lost_answer", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
		runs++
		if rec, ok := cl.Resuming(); ok {
			api.WriteJSON(w, http.StatusCreated, map[string]string{"resumed": rec.Ref})
			return nil
		}
		if err := cl.RecoveryPoint(r.Context(), "test.call", "obj_lost"); err != nil {
			return err
		}
		if err := writeMerchant(r, cl, db, "after the point"); err != nil {
			return err
		}
		if runs == 1 {
			// The database goes away as the answer is about to commit,
			// and comes back a moment later.
			p.Down()
			time.AfterFunc(300*time.Millisecond, p.Up)
		}
		api.WriteJSON(w, http.StatusCreated, map[string]string{"ran": "through"})
		return nil
	})
	w := postKeyed(s, key, "/v1/test/lost_answer", "lost-1")
	if w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), "obj_lost") {
		t.Fatalf("answered %d %s; want 201, resumed from obj_lost", w.Code, w.Body)
	}
}

// TestKeyedAnswerOnStandbyIs503 (PostgreSQL): a keyed request whose handler
// wrote nothing (it answered a validation error) still writes its key's row
// with its answer; when that write reaches a server taking no writes (a
// standby, during a failover: SQLSTATE 25006, played here by a pool whose
// sessions are read-only), the request answers 503 database_unavailable
// with Retry-After, not 500: nothing committed and a retry settles it.
func TestKeyedAnswerOnStandbyIs503(t *testing.T) {
	u := storetest.MigratedURL(t, storetest.Postgres)
	rw, err := store.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rw.Close() })
	_, key, _ := apiOnDB(t, rw, "Standby answer")
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	ro, err := store.Open(context.Background(), u+sep+"default_transaction_read_only=on")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	box, _ := secretbox.New("")
	s := api.NewServer(api.Config{DB: ro, Merchants: merchants.NewService(ro, box), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	s.HandleClaimed("POST /v1/test/refuse", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
		return errs.Invalid("n", "parameter_invalid", "n is refused")
	})
	w := postKeyed(s, key, "/v1/test/refuse", "standby-answer-1")
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), `"database_unavailable"`) || w.Header().Get("Retry-After") == "" {
		t.Errorf("a keyed answer whose key's write reached a standby: %d %s (Retry-After %q), want 503 database_unavailable with Retry-After",
			w.Code, w.Body, w.Header().Get("Retry-After"))
	}
}
