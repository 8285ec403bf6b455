package events

import (
	"context"

	"github.com/payd/payd/internal/store"
)

// MarkWebhookFail records, in tx, that objectID was made under the sandbox
// scenario sandbox_webhook_fail: the first delivery attempt of each of its
// events is recorded failed without sending, then retried on schedule.
func MarkWebhookFail(ctx context.Context, tx *store.Tx, objectID string) error {
	_, err := tx.Exec(ctx, `INSERT INTO sandbox_webhook_fail (object_id, livemode, created_at) VALUES (?, ?, ?)
		ON CONFLICT (object_id) DO NOTHING`, objectID, false, store.Micros(tx.Now()))
	return err
}

// WebhookFailMarked reports whether objectID is under sandbox_webhook_fail.
func WebhookFailMarked(ctx context.Context, q store.Querier, objectID string) (bool, error) {
	var n int
	err := q.QueryRow(ctx, "SELECT COUNT(*) FROM sandbox_webhook_fail WHERE object_id = ?", objectID).Scan(&n)
	return n > 0, err
}
