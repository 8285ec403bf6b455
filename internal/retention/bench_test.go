package retention_test

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/retention"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

var benchSizes = flag.String("retention.sizes", "10000,100000", "rows kept in each table while the purge runs, comma-separated")

// benchOld is how many rows past the horizon each iteration seeds and the
// purge removes.
const benchOld = 1000

// bulk inserts rows into table in multi-row statements, in one transaction.
func bulk(tb testing.TB, db *store.DB, table, cols string, rows [][]any) {
	tb.Helper()
	n := len(strings.Split(cols, ","))
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		for start := 0; start < len(rows); start += 100 {
			chunk := rows[start:min(start+100, len(rows))]
			args := make([]any, 0, len(chunk)*n)
			for _, r := range chunk {
				args = append(args, r...)
			}
			if _, err := tx.Exec(context.Background(), "INSERT INTO "+table+" ("+cols+") VALUES "+store.Rows(len(chunk), n), args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// seedKind writes n rows of a kind made around at: events each with one
// finished delivery and one attempt, request logs, or answered keys.
func seedKind(tb testing.TB, db *store.DB, kind string, n int, at time.Time, seq *uint64) {
	var evs, dels, atts, logs, keys [][]any
	for i := 0; i < n; i++ {
		*seq++
		t := at.Add(time.Duration(i) * time.Millisecond)
		c := store.Micros(t)
		live := i%2 == 0
		switch kind {
		case "events":
			ev, del := ids.At("evt_", t, *seq), ids.At("whdel_", t, *seq)
			evs = append(evs, []any{ev, "mer_a", live, "payment_intent.succeeded", "payment_intent", "pi_" + ev,
				`{"id":"pi_x","object":"payment_intent","amount_minor":1000,"currency":"DJF","status":"succeeded"}`, c, c})
			dels = append(dels, []any{del, "mer_a", live, ev, "we_1", "succeeded", 1, false, c, c})
			atts = append(atts, []any{del, live, 1, c, 200, 12, c})
		case "request_logs":
			logs = append(logs, []any{ids.At("rlog_", t, *seq), "mer_a", live, "key_1", "POST", "/v1/payment_intents", 201, "req_" + strconv.FormatUint(*seq, 10), 900, c})
		case "idempotency_keys":
			keys = append(keys, []any{"mer_a", live, "key_1", "k" + strconv.FormatUint(*seq, 10), "POST", "/v1/payment_intents", "h", "done", 201,
				"application/json", []byte(`{"id":"pi_x","object":"payment_intent","status":"succeeded"}`), c, c})
		}
	}
	switch kind {
	case "events":
		bulk(tb, db, "events", "id, merchant_id, livemode, type, object_type, object_id, data, created_at, dispatched_at", evs)
		bulk(tb, db, "webhook_deliveries", "id, merchant_id, livemode, event_id, endpoint_id, status, attempt_count, redelivery, created_at, updated_at", dels)
		bulk(tb, db, "webhook_attempts", "delivery_id, livemode, attempt, at, http_status, latency_ms, created_at", atts)
	case "request_logs":
		bulk(tb, db, "request_logs", "id, merchant_id, livemode, principal_id, method, path, status, request_id, latency_us, created_at", logs)
	case "idempotency_keys":
		bulk(tb, db, "idempotency_keys", "merchant_id, livemode, principal_id, idem_key, method, path, request_hash, state, status_code, content_type, body, locked_until, created_at", keys)
	}
}

// BenchmarkPurge measures what the retention job costs per row it removes
// (ns/row: each old event counts with its delivery and attempt), with
// -retention.sizes rows of the same kind kept in the table beside them:
// the cost per row should not grow with the table.
//
//	go test -run '^$' -bench Purge -benchtime 5x ./internal/retention/
func BenchmarkPurge(b *testing.B) {
	var sizes []int
	for _, s := range strings.Split(*benchSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			b.Fatalf("-retention.sizes: %v", err)
		}
		sizes = append(sizes, n)
	}
	for _, e := range storetest.Engines() {
		for _, kind := range []string{"events", "request_logs", "idempotency_keys"} {
			for _, size := range sizes {
				b.Run(fmt.Sprintf("%s/%s/kept=%d", e, kind, size), func(b *testing.B) {
					db := storetest.Open(b, e)
					ctx := context.Background()
					now := time.Now().UTC()
					var seq uint64
					seedKind(b, db, kind, size, now.Add(-time.Hour-time.Duration(size)*time.Millisecond), &seq)
					if _, err := db.Exec(ctx, "ANALYZE"); err != nil {
						b.Fatal(err)
					}
					policy := retention.Policy{IdempotencyKeys: retention.MinIdempotencyKeys}
					switch kind {
					case "events":
						policy.Events = 30 * day
					case "request_logs":
						policy.RequestLogs = 30 * day
					}
					h := &retention.Horizons{DB: db, Policy: policy}
					var removed int64
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						seedKind(b, db, kind, benchOld, now.Add(-40*day+time.Duration(i)*time.Minute), &seq)
						b.StartTimer()
						r, err := h.Run(ctx)
						if err != nil {
							b.Fatal(err)
						}
						n := r.Events + r.Deliveries + r.Attempts + r.RequestLogs + r.IdempotencyKeys
						if want := int64(benchOld); kind == "events" && n != 3*want || kind != "events" && n != want {
							b.Fatalf("removed %+v, want %d rows of %s", r, benchOld, kind)
						}
						removed += n
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(removed), "ns/row")
				})
			}
		}
	}
}
