// Command sqlitewrites measures the ceiling SQLite itself sets on payd's
// keyed payment-intent create: the three rows one create writes (the
// intent, its payment_intent.created event and the key's row with the
// stored answer, at the sizes payd writes them), inserted through payd's
// store on payd's schema and pragmas, in transactions of a group of creates
// each, by one goroutine (SQLite has one writer). No HTTP, JSON, auth,
// logging or request log: what a create costs when everything but the
// database is free. Its rate divided by the net/http floor
// (../shared/perf/anchors.sh) is the best ratio of the floor a SQLite
// create could reach on the machine; the group size is how many creates
// share a commit (payd's group commit reached about 4 per commit at 16
// clients, docs/performance.md).
//
//	go run ./bench/sqlitewrites
//	go run ./bench/sqlitewrites -groups 1,4,16,64 -creates 40000
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// The sizes of a bench/payments create as payd stores it (2026-11-27): the
// event's data and the stored answer are each about 500 bytes of JSON.
const (
	eventBytes  = 496
	answerBytes = 497
)

// The intent's row and the key's row are written by payd's payments and
// idempotency packages with statements they do not export; the two below
// write the same columns (TestRowsAsPaydWritesThem keeps them in step with
// the schema). The event goes through events.Emit itself.
const (
	insertIntent = `INSERT INTO payment_intents (id, merchant_id, livemode, amount_minor, currency, provider, flow,
		customer_msisdn, description, metadata, return_url, idempotency_key, created_at,
		status, amount_captured_minor, next_action, last_error, payment_method_details, scenario, page_step, page_token_hash, provider_ref,
		updated_at, succeeded_at, canceled_at, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`
	insertKey = `INSERT INTO idempotency_keys (merchant_id, livemode, principal_id, idem_key, method, path, request_hash,
		state, status_code, content_type, body, locked_until, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'done', ?, ?, ?, ?, ?)`
)

// padded is a JSON object of n bytes.
func padded(n int) json.RawMessage {
	const head = `{"object":"payment_intent","pad":"`
	return json.RawMessage(head + strings.Repeat("x", n-len(head)-2) + `"}`)
}

func main() {
	groups := flag.String("groups", "1,4,16,64", "creates per transaction, comma-separated")
	creates := flag.Int("creates", 40000, "creates per group size")
	flag.Parse()
	levels, err := harness.Levels("groups", *groups)
	if err != nil {
		harness.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "payd-sqlitewrites")
	if err != nil {
		harness.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	fmt.Printf("cores=%d go=%s creates=%d per group size\n", runtime.NumCPU(), runtime.Version(), *creates)
	fmt.Printf("%-8s %10s %10s %12s\n", "group", "creates", "creates/s", "µs/create")
	for i, g := range levels {
		// A fresh database per level: each starts from an empty file.
		db, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, fmt.Sprintf("w%d.db", i)))
		if err != nil {
			harness.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			harness.Fatal(err)
		}
		merchant := ids.New("mer_")
		if _, err := db.Exec(ctx, "INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)", merchant, "bench", store.Micros(db.Now())); err != nil {
			harness.Fatal(err)
		}
		n, took, err := run(ctx, db, merchant, g, *creates)
		db.Close()
		if err != nil {
			harness.Fatal(err)
		}
		fmt.Printf("%-8d %10d %10.0f %12.1f\n", g, n, float64(n)/took.Seconds(), float64(took.Microseconds())/float64(n))
	}
}

// run writes n creates' rows in transactions of group creates each.
func run(ctx context.Context, db *store.DB, merchant string, group, n int) (int, time.Duration, error) {
	event, answer := padded(eventBytes), []byte(padded(answerBytes))
	start := time.Now()
	done := 0
	for done < n {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for j := 0; j < group; j++ {
				now := store.Micros(tx.Now())
				pi := ids.New("pi_")
				if err := tx.ExecLater(ctx, insertIntent, pi, merchant, false, 1500, "DJF", "bank_a", "push", "+25377123456", "bench", "{}", nil, nil, now,
					"requires_action", 0, `{"type":"await_customer_approval"}`, nil, nil, "", "", nil, "", now, nil, nil); err != nil {
					return err
				}
				if _, err := events.Emit(ctx, tx, merchant, false, "payment_intent.created", "payment_intent", pi, event); err != nil {
					return err
				}
				if err := tx.ExecLater(ctx, insertKey, merchant, false, "key_bench", ids.Secret("k", 16), "POST", "/v1/payment_intents", strings.Repeat("a", 64),
					201, "application/json", answer, now, now); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return done, time.Since(start), err
		}
		done += group
	}
	return done, time.Since(start), nil
}
