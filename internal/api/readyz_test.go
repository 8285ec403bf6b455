package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestReadyzAsksWhetherThisProcessCanWrite: /readyz answers 200 on a
// writable database, and 503 "read-only" on PostgreSQL connections whose
// transactions are read-only, as on a standby, though every ping succeeds.
func TestReadyzAsksWhetherThisProcessCanWrite(t *testing.T) {
	ready := func(t *testing.T, db *store.DB) (int, map[string]string) {
		box, _ := secretbox.New("")
		s := api.NewServer(api.Config{DB: db, Merchants: merchants.NewService(db, box), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
		var body map[string]string
		json.Unmarshal(w.Body.Bytes(), &body)
		return w.Code, body
	}
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		if code, body := ready(t, db); code != http.StatusOK || body["status"] != "ready" {
			t.Fatalf("a writable database: %d %v", code, body)
		}
	})
	t.Run("postgres read-only", func(t *testing.T) {
		url := storetest.MigratedURL(t, storetest.Postgres)
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		// Every session of this pool is read-only, as every session on a standby is.
		db, err := store.Open(context.Background(), url+sep+"default_transaction_read_only=on")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Ping(context.Background()); err != nil {
			t.Fatalf("ping: %v", err)
		}
		code, body := ready(t, db)
		if code != http.StatusServiceUnavailable || !strings.Contains(body["reason"], "read-only") {
			t.Fatalf("a read-only database: %d %v", code, body)
		}
	})
}
