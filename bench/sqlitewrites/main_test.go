package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// TestRowsAsPaydWritesThem: the benchmark's statements fit payd's schema as
// migrated now, and one create writes what payd's does: an intent, its
// payment_intent.created event and its key's row with the answer, at the
// sizes payd stores.
func TestRowsAsPaydWritesThem(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	merchant := ids.New("mer_")
	if _, err := db.Exec(ctx, "INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)", merchant, "bench", 1); err != nil {
		t.Fatal(err)
	}
	n, _, err := run(ctx, db, merchant, 2, 4)
	if err != nil || n != 4 {
		t.Fatalf("run: %d creates, %v", n, err)
	}
	var intents, evs, keys, eventBytes, answerBytes int
	if err := db.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM payment_intents WHERE merchant_id = ? AND status = 'requires_action'),
		(SELECT COUNT(*) FROM events WHERE type = 'payment_intent.created' AND object_id IN (SELECT id FROM payment_intents)),
		(SELECT COUNT(*) FROM idempotency_keys WHERE state = 'done' AND status_code = 201),
		(SELECT MIN(LENGTH(data)) FROM events), (SELECT MIN(LENGTH(body)) FROM idempotency_keys)`, merchant).
		Scan(&intents, &evs, &keys, &eventBytes, &answerBytes); err != nil {
		t.Fatal(err)
	}
	if intents != 4 || evs != 4 || keys != 4 || eventBytes != 496 || answerBytes != 497 {
		t.Fatalf("%d intents, %d events, %d keys; event data %d bytes, answer %d", intents, evs, keys, eventBytes, answerBytes)
	}
}
