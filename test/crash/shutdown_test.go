package crash

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil/keyedload"
)

// TestGracefulShutdown sends SIGTERM to payd in the middle of a batch's
// fan-out. The process exits cleanly, having recorded the rail's answers to
// the calls it had made and handed back every payout it had claimed but not
// sent (due at once): none is left processing under a claim of the dead
// process. Restarted, payd finishes the batch: every row once, the book
// balanced.
//
// The signal goes as soon as the fan-out is seen under way. A fan-out that
// still finished before it (a loaded machine's poll can see nothing, then
// everything) tested nothing: the run is made again, once, on a new
// database with a batch four times the size.
func TestGracefulShutdown(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			n := 4000
			if !*full {
				n = 1500
			}
			for attempt := 1; ; attempt++ {
				if gracefulShutdownRun(t, engine, n) {
					return
				}
				if attempt == 2 {
					t.Fatalf("the fan-out of %d rows finished before SIGTERM; nothing was tested", n)
				}
				t.Logf("the fan-out finished before SIGTERM; again with %d rows", 4*n)
				n *= 4
			}
		})
	}
}

// gracefulShutdownRun is one run of TestGracefulShutdown with a batch of n
// rows on a new cluster. It reports false, having checked nothing, when
// the fan-out finished before the process stopped.
func gracefulShutdownRun(t *testing.T, engine storetest.Engine, n int) bool {
	cl := startCluster(t, engine, 1)
	p := cl.f.Procs[0]
	cl.fund(t)
	rows := make([]map[string]any, n)
	for i := range rows {
		rows[i] = map[string]any{"amount": 100 + i%50, "reference": fmt.Sprintf("row-%05d", i),
			"provider": "wallet_b", "recipient_msisdn": fmt.Sprintf("+25377%06d", i)}
	}
	a, ok := cl.c.Post("batch", "/v1/payouts/bulk", map[string]any{"currency": "DJF", "rows": rows})
	if !ok || a.Status != 201 {
		t.Fatalf("batch: %d %.300s", a.Status, a.Body)
	}
	var b struct {
		ID            string
		Status        string
		RowsSucceeded int `json:"rows_succeeded"`
		RowsFailed    int `json:"rows_failed"`
	}
	if err := json.Unmarshal(a.Body, &b); err != nil {
		t.Fatal(err)
	}
	approver := keyedload.NewClient(t, cl.f, cl.keys[1])
	if a, ok := approver.Post("approve", "/v1/payouts/bulk/"+b.ID+"/approve", nil); !ok || a.Status != 200 {
		t.Fatalf("approve: %d %s", a.Status, a.Body)
	}
	for deadline := time.Now().Add(60 * time.Second); b.RowsSucceeded+b.RowsFailed == 0; time.Sleep(2 * time.Millisecond) {
		if err := cl.c.Get("/v1/payouts/bulk/"+b.ID, &b); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fan-out did not start: %+v", b)
		}
	}
	if err := p.Terminate(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	db := cl.db(t)
	ctx := context.Background()
	var done, parked, waiting int
	if err := db.QueryRow(ctx, `SELECT
				(SELECT COUNT(*) FROM payouts WHERE status IN ('succeeded','failed')),
				(SELECT COUNT(*) FROM payouts WHERE status = 'processing' AND dispatch_at > ?),
				(SELECT COUNT(*) FROM payouts WHERE status IN ('pending','processing') AND dispatch_at <= ?)`,
		store.Micros(stopped), store.Micros(stopped)).Scan(&done, &parked, &waiting); err != nil {
		t.Fatal(err)
	}
	t.Logf("SIGTERM after %d of %d rows were seen done: %d done at exit, %d due for another process, %d left under the dead claim",
		b.RowsSucceeded+b.RowsFailed, n, done, waiting, parked)
	if done >= n {
		return false
	}
	if parked != 0 {
		t.Errorf("%d payouts stayed processing under the stopped process's claim", parked)
	}
	if done+waiting != n {
		t.Errorf("%d done and %d due make %d, want %d rows", done, waiting, done+waiting, n)
	}
	var pendingJobs int
	if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM jobs WHERE status = 'running'").Scan(&pendingJobs); err != nil {
		t.Fatal(err)
	}
	if pendingJobs != 0 {
		t.Errorf("%d jobs left running by the stopped process", pendingJobs)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(90 * time.Second); b.Status != "completed"; time.Sleep(50 * time.Millisecond) {
		if err := cl.c.Get("/v1/payouts/bulk/"+b.ID, &b); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch not completed after the restart: %+v", b)
		}
	}
	if b.RowsSucceeded != n {
		t.Errorf("%d rows succeeded, want %d", b.RowsSucceeded, n)
	}
	var twice, posted int
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM (SELECT object_id, type FROM events GROUP BY object_id, type HAVING COUNT(*) > 1) d`).Scan(&twice); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM ledger_transactions WHERE kind = 'payout_paid'`).Scan(&posted); err != nil {
		t.Fatal(err)
	}
	if twice != 0 || posted != n {
		t.Errorf("%d events recorded twice; %d payouts paid in the ledger, want %d", twice, posted, n)
	}
	if err := ledger.Verify(ctx, db); err != nil {
		t.Error(err)
	}
	return true
}
