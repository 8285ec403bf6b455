package app

import (
	"context"
	"net/http"
	"time"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// serveHTTP serves the API once the database is open; until then it
// answers /healthz 200 (the process lives), /readyz 503 and every other
// request 503 database_unavailable with Retry-After: nothing was done.
func (m *Main) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if h := m.handler.Load(); h != nil {
		h.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Retry-After", "1")
	switch r.URL.Path {
	case "/healthz":
		api.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case "/readyz":
		api.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": "no database accepts writes"})
	default:
		// The API's error shape, written here: no request of this kind is
		// an internal error to log (the wait is logged once).
		api.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"error": map[string]any{"type": "api_error",
			"code": "database_unavailable", "request_id": ids.New("req_"),
			"message": "payd is waiting for a database that accepts writes; nothing was done: retry the request (with the same Idempotency-Key, if it had one)"}})
	}
}

// openWhenWritable opens the database and builds the services, waiting
// (a try every second, until ctx ends) while no database accepts writes.
func (m *Main) openWhenWritable(ctx context.Context) error {
	for try := 0; ; try++ {
		err := m.Open(ctx)
		if err == nil {
			if try > 0 {
				m.Logger.Info("a database accepts writes: serving", "waited_tries", try)
			}
			return nil
		}
		if ctx.Err() != nil {
			// Stopped while connecting: the attempt failed because of it.
			return ctx.Err()
		}
		if !store.IsUnavailable(err) {
			return err
		}
		if try == 0 {
			m.Logger.Warn("no database accepts writes: waiting for a primary, answering 503 meanwhile", "err", err)
		}
		if m.DB != nil {
			m.DB.Close()
			m.DB = nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
