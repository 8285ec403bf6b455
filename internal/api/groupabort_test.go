package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestAbortedGroupRunsItsRequestsAgain (SQLite group commit): request A
// commits while request B waits for the writer, so A's transaction is
// parked for B and B goes on in it without a savepoint. B then fails with a
// 5xx (its work is not kept), which rolls back the shared transaction, A's
// work with it: A's request runs again by itself. Its second run is careful:
// when it commits while request C waits, it does not park for C, so C's
// failure cannot undo it again; A answers 201 from its second run, with one
// effect, and nothing of B or C remains.
func TestAbortedGroupRunsItsRequestsAgain(t *testing.T) {
	db := storetest.Open(t, storetest.SQLite)
	_, key, newServer := apiOnDB(t, db, "Group abort")
	s := newServer()
	var aRuns atomic.Int32
	aHolds := make(chan int, 2) // the run of A that holds the writer
	s.HandleClaimed("POST /v1/test/parked", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
		run := int(aRuns.Add(1))
		if err := writeMerchant(r, cl, db, "parked effect"); err != nil {
			return err
		}
		// A query in the request's unit takes SQLite's writer.
		if err := db.Within(cl).InTx(r.Context(), func(tx *store.Tx) error {
			var one int
			return tx.QueryRow(r.Context(), "SELECT 1").Scan(&one)
		}); err != nil {
			return err
		}
		if run <= 2 {
			aHolds <- run
		}
		if run <= 2 {
			// Hold the writer until B (in the first run) or C (in
			// the second) waits for it, so that A's commit would park
			// the transaction for it.
			if err := awaitWriterWaiter(db); err != nil {
				return err
			}
		}
		return writeRun(w, run)
	})
	s.HandleClaimed("POST /v1/test/fails", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
		if err := writeMerchant(r, cl, db, "failed effect"); err != nil {
			return err
		}
		return errors.New("the request fails after its write")
	})
	bDone := make(chan int, 1)
	aDone := make(chan int, 1)
	aBody := make(chan string, 1)
	go func() {
		w := postKeyed(s, key, "/v1/test/parked", "a-1")
		aDone <- w.Code
		aBody <- w.Body.String()
	}()
	if run := <-aHolds; run != 1 { // A holds the writer before B starts
		t.Fatalf("run %d of A held the writer first", run)
	}
	go func() { bDone <- postKeyed(s, key, "/v1/test/fails", "b-1").Code }()
	if code := <-bDone; code != http.StatusInternalServerError {
		t.Fatalf("B answered %d, want 500", code)
	}
	select {
	case run := <-aHolds: // A's second run holds the writer before C starts
		if run != 2 {
			t.Fatalf("run %d of A, want its second", run)
		}
	case code := <-aDone:
		t.Fatalf("A was not run again: it answered %d %s", code, <-aBody)
	}
	if code := postKeyed(s, key, "/v1/test/fails", "c-1").Code; code != http.StatusInternalServerError {
		t.Fatalf("C answered %d, want 500", code)
	}
	if code, body := <-aDone, <-aBody; code != http.StatusCreated || runOf(t, body) != 2 {
		t.Fatalf("A answered %d %s, want 201 from its second run", code, body)
	}
	for name, want := range map[string]int{"parked effect": 1, "failed effect": 0} {
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM merchants WHERE name = ?", name); n != want {
			t.Errorf("%d merchants %q, want %d", n, name, want)
		}
	}
	// A's key holds its answer: a retry replays it (its own run, the
	// third, finds the key taken when it takes the writer, and changes
	// nothing).
	if w := postKeyed(s, key, "/v1/test/parked", "a-1"); w.Code != http.StatusCreated || runOf(t, w.Body.String()) != 2 || aRuns.Load() != 3 {
		t.Fatalf("A's retry: %d %s after %d runs", w.Code, w.Body, aRuns.Load())
	}
}

// awaitWriterWaiter waits (at most 5 s) until another unit of work waits
// for SQLite's writer, which the caller's request holds: the request's
// commit then parks its transaction for that unit.
func awaitWriterWaiter(db *store.DB) error {
	for deadline := time.Now().Add(5 * time.Second); db.WaitingWriters() < 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New("no other request waited for the writer")
		}
	}
	return nil
}

// insertFact writes a row named by its one argument: an effect the tests
// count.
const insertFact = "INSERT INTO instance_facts (name, value, created_at) VALUES (?, '', 0)"

func writeRun(w http.ResponseWriter, run int) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	return json.NewEncoder(w).Encode(map[string]int{"run": run})
}

func runOf(t *testing.T, body string) int {
	t.Helper()
	var v struct{ Run int }
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	return v.Run
}

// TestReplayDoesNotUndoAParkedRequest (SQLite group commit): the retry of an
// answered request runs without reading its key first, and finds the key
// taken only when its transaction takes the writer. When that happens in
// another request's parked transaction, the retry has changed nothing
// there: the other request commits from its first run, and the retry
// replays the stored answer with no second effect. Both when the retry's
// writes all wait for its commit and when one of them takes the writer
// mid-request.
func TestReplayDoesNotUndoAParkedRequest(t *testing.T) {
	for _, midRequest := range []bool{false, true} {
		name := "writes at the commit"
		if midRequest {
			name = "a write mid-request"
		}
		t.Run(name, func(t *testing.T) {
			db := storetest.Open(t, storetest.SQLite)
			_, key, newServer := apiOnDB(t, db, "Replay in a group")
			s := newServer()
			var aRuns, bRuns atomic.Int32
			aHolds := make(chan struct{}, 1)
			s.HandleClaimed("POST /v1/test/parked", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
				run := int(aRuns.Add(1))
				if err := writeMerchant(r, cl, db, "parked effect"); err != nil {
					return err
				}
				if run == 1 {
					aHolds <- struct{}{}
					// Hold the writer until B waits for it, so that A's
					// commit parks the transaction for B.
					if err := awaitWriterWaiter(db); err != nil {
						return err
					}
				}
				return writeRun(w, run)
			})
			s.HandleClaimed("POST /v1/test/replayed", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
				run := int(bRuns.Add(1))
				if err := db.Within(cl).InTx(r.Context(), func(tx *store.Tx) error {
					if midRequest {
						_, err := tx.Exec(r.Context(), insertFact, "replayed-"+strconv.Itoa(run))
						return err
					}
					return tx.ExecLater(r.Context(), insertFact, "replayed-"+strconv.Itoa(run))
				}); err != nil {
					return err
				}
				return writeRun(w, run)
			})
			if w := postKeyed(s, key, "/v1/test/replayed", "b-1"); w.Code != http.StatusCreated || runOf(t, w.Body.String()) != 1 {
				t.Fatalf("B's first request answered %d %s", w.Code, w.Body)
			}
			aDone := make(chan string, 1)
			go func() {
				w := postKeyed(s, key, "/v1/test/parked", "a-1")
				aDone <- strconv.Itoa(w.Code) + " " + w.Body.String()
			}()
			<-aHolds
			w := postKeyed(s, key, "/v1/test/replayed", "b-1")
			if w.Code != http.StatusCreated || w.Header().Get("Idempotent-Replayed") != "true" || runOf(t, w.Body.String()) != 1 {
				t.Errorf("B's retry answered %d (replayed %q) %s, want B's first answer replayed", w.Code, w.Header().Get("Idempotent-Replayed"), w.Body)
			}
			if got := <-aDone; got != `201 {"run":1}`+"\n" || aRuns.Load() != 1 {
				t.Errorf("A answered %q after %d runs, want 201 from its only run", got, aRuns.Load())
			}
			if bRuns.Load() != 2 {
				t.Errorf("B's handler ran %d times, want 2 (the retry ran before it found its key)", bRuns.Load())
			}
			effects := storetest.Count(t, db, "SELECT COUNT(*) FROM instance_facts WHERE name LIKE 'replayed-%'")
			parked := storetest.Count(t, db, "SELECT COUNT(*) FROM merchants WHERE name = 'parked effect'")
			if effects != 1 || parked != 1 {
				t.Errorf("%d effects of B and %d of A, want 1 each", effects, parked)
			}
		})
	}
}

// TestKeyClaimedAgainAfterAFailedFirstWrite (SQLite): a request's first
// write takes the writer, so its key's row is claimed in flight by the
// transaction's entry; that write then fails as a whole (no savepoint: it was
// the transaction's first), which rolls the claim back with it. The
// request's next write claims the key again, and its answer is stored under
// it: a retry replays it, and only the second write's effect remains.
func TestKeyClaimedAgainAfterAFailedFirstWrite(t *testing.T) {
	db := storetest.Open(t, storetest.SQLite)
	_, key, newServer := apiOnDB(t, db, "Claim again")
	s := newServer()
	var runs atomic.Int32
	s.HandleClaimed("POST /v1/test/second_write", func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
		run := int(runs.Add(1))
		err := db.Within(cl).InTx(r.Context(), func(tx *store.Tx) error {
			if _, err := tx.Exec(r.Context(), insertFact, "first-write"); err != nil {
				return err
			}
			return errors.New("the first write fails after its statement")
		})
		if err == nil {
			return errors.New("the first write did not fail")
		}
		if err := db.Within(cl).InTx(r.Context(), func(tx *store.Tx) error {
			return tx.ExecLater(r.Context(), insertFact, "second-write-"+strconv.Itoa(run))
		}); err != nil {
			return err
		}
		return writeRun(w, run)
	})
	if w := postKeyed(s, key, "/v1/test/second_write", "again-1"); w.Code != http.StatusCreated || runOf(t, w.Body.String()) != 1 {
		t.Fatalf("first request answered %d %s", w.Code, w.Body)
	}
	w := postKeyed(s, key, "/v1/test/second_write", "again-1")
	if w.Code != http.StatusCreated || w.Header().Get("Idempotent-Replayed") != "true" || runOf(t, w.Body.String()) != 1 {
		t.Fatalf("the retry answered %d (replayed %q) %s, want the first answer replayed", w.Code, w.Header().Get("Idempotent-Replayed"), w.Body)
	}
	for name, want := range map[string]int{"first-write": 0, "second-write-1": 1, "second-write-2": 0} {
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM instance_facts WHERE name = ?", name); n != want {
			t.Errorf("%d rows %q, want %d", n, name, want)
		}
	}
	var state string
	if err := db.QueryRow(context.Background(), "SELECT state FROM idempotency_keys WHERE idem_key = 'again-1'").Scan(&state); err != nil || state != "done" {
		t.Errorf("the key's row: %q, %v; want done", state, err)
	}
}
