package payouts

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// ledgerRail is a rail that keeps a book of what it paid, by idempotency
// key, as a real provider does: a second send under a key pays nothing.
type ledgerRail struct {
	mu       sync.Mutex
	paid     map[string]int // key → times money left
	sends    int
	statuses int
	block    chan struct{} // when set, SendPayout waits for it (a hung call)
}

func newLedgerRail() *ledgerRail { return &ledgerRail{paid: map[string]int{}} }

func (r *ledgerRail) SendPayout(ctx context.Context, req providers.PayoutRequest) (providers.PayoutResult, error) {
	if r.block != nil {
		select {
		case <-r.block:
		case <-ctx.Done():
			return providers.PayoutResult{}, ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sends++
	if req.RecipientMSISDN == "+25377999999" {
		return providers.PayoutResult{Outcome: providers.PayoutFailed, Failure: &providers.Failure{Code: "insufficient_funds", Message: "no"}}, nil
	}
	if r.paid[req.IdempotencyKey] == 0 {
		r.paid[req.IdempotencyKey] = 1
	}
	return providers.PayoutResult{Outcome: providers.PayoutSucceeded}, nil
}

func (r *ledgerRail) PayoutStatus(ctx context.Context, req providers.PayoutRequest) (providers.PayoutResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses++
	if r.paid[req.IdempotencyKey] > 0 {
		return providers.PayoutResult{Outcome: providers.PayoutSucceeded}, nil
	}
	return providers.PayoutResult{Outcome: providers.PayoutUnknown}, nil
}

func (r *ledgerRail) PayoutTimeout() time.Duration { return time.Second }

// fixture is a database with a funded merchant and two principals.
type fixture struct {
	db       *store.DB
	creator  auth.Principal
	approver auth.Principal
}

func newFixture(t *testing.T, db *store.DB, funds int64) fixture {
	ctx := context.Background()
	box, _ := secretbox.New("")
	c, err := merchants.NewService(db, box).Create(ctx, merchants.CreateParams{Name: "M"})
	if err != nil {
		t.Fatal(err)
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: c.MerchantID, Kind: "sandbox_topup", Entries: []ledger.Entry{
			{Account: account(c.MerchantID, false, "DJF", ledger.Available, ""), Amount: funds},
			{Account: account(c.MerchantID, false, "DJF", ledger.SandboxFunding, ""), Amount: -funds}}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fixture{db: db,
		creator:  auth.Principal{ID: "key_creator", MerchantID: c.MerchantID, Kind: auth.KindSecret},
		approver: auth.Principal{ID: "key_approver", MerchantID: c.MerchantID, Kind: auth.KindSecret}}
}

func (f fixture) service(rail providers.PayoutAdapter, lease time.Duration) *Service {
	return New(Config{DB: f.db, Rails: &providers.PayoutRails{Sandbox: rail}, Lease: lease, ReconcileAfter: time.Millisecond,
		Poll: 20 * time.Millisecond, Chunk: 100})
}

// approvedBatch creates and approves a variant B batch of n rows; row i%10
// == 0 fails at the rail.
func (f fixture) approvedBatch(t *testing.T, svc *Service, n int) *Batch {
	ctx := context.Background()
	var b strings.Builder
	b.WriteString(rowsHeader)
	for i := 1; i <= n; i++ {
		msisdn := fmt.Sprintf("+25377%06d", i)
		if i%10 == 0 {
			msisdn = "+25377999999"
		}
		fmt.Fprintf(&b, "%s,,%d,wallet_b,ref-%d,\n", msisdn, 10+i%7, i)
	}
	req, err := ParseRowsCSV([]byte(b.String()), "DJF", "", false)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := svc.CreateBatch(ctx, store.NoClaim, f.creator, req)
	if err != nil {
		t.Fatal(err)
	}
	if batch, err = svc.ApproveBatch(ctx, store.NoClaim, f.approver, batch.ID); err != nil {
		t.Fatal(err)
	}
	return batch
}

// checkDone checks a completed batch's rows, counters and book.
func (f fixture) checkDone(t *testing.T, rail *ledgerRail, batchID string, n int) {
	t.Helper()
	ctx := context.Background()
	b, err := getBatch(ctx, f.db, f.creator.MerchantID, false, batchID, false)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != BatchCompleted || b.Succeeded != n-n/10 || b.Failed != n/10 || b.Pending != 0 {
		t.Fatalf("batch %+v", b)
	}
	for key, times := range rail.paid {
		if times != 1 {
			t.Fatalf("%s paid %d times", key, times)
		}
	}
	if len(rail.paid) != n-n/10 {
		t.Fatalf("the rail paid %d payouts, want %d", len(rail.paid), n-n/10)
	}
	var bad int
	f.db.QueryRow(ctx, `SELECT COUNT(*) FROM payouts p WHERE batch_id = ? AND (SELECT COUNT(*) FROM ledger_transactions l WHERE l.reference = p.id) <> 1`, batchID).Scan(&bad)
	if bad != 0 {
		t.Fatalf("%d payouts without exactly one posting", bad)
	}
	f.db.QueryRow(ctx, `SELECT COUNT(*) FROM (SELECT object_id, type FROM events WHERE object_id IN (SELECT id FROM payouts WHERE batch_id = ?)
		GROUP BY object_id, type HAVING COUNT(*) <> 1) d`, batchID).Scan(&bad)
	if bad != 0 {
		t.Fatalf("%d events recorded twice", bad)
	}
	if err := ledger.Verify(ctx, f.db); err != nil {
		t.Fatal(err)
	}
}

// TestReclaimAfterLease: a claim whose process died (never recorded) is
// taken over once its lease runs out; the payouts already sent are looked
// up, not paid again.
func TestReclaimAfterLease(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 1_000_000)
		rail := newLedgerRail()
		svc := f.service(rail, 50*time.Millisecond)
		b := f.approvedBatch(t, svc, 300)
		// A dispatcher claims a chunk, sends it, and dies before recording.
		c, err := svc.claimNext(ctx)
		if err != nil || c == nil || len(c.payouts) != 100 {
			t.Fatalf("claim: %v %+v", err, c)
		}
		for _, p := range c.payouts {
			svc.call(ctx, p)
		}
		sent := rail.sends
		if again, _ := svc.claimNext(ctx); again == nil || again.payouts[0].ID == c.payouts[0].ID {
			t.Fatal("a leased payout was claimed again before its lease ran out")
		} else {
			svc.process(ctx, svc.db.Within(store.NoClaim), again)
		}
		time.Sleep(svc.cfg.Lease + svc.maxCall() + 50*time.Millisecond)
		if _, err := svc.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		f.checkDone(t, rail, b.ID, 300)
		if rail.statuses < 100 {
			t.Fatalf("the reclaimed payouts were not looked up (%d status calls)", rail.statuses)
		}
		if rail.sends-sent > 200+10 {
			t.Fatalf("%d sends after the crash", rail.sends-sent)
		}
	})
}

// TestTwoDispatchers: two processes' dispatchers share one batch; every
// row ends once.
func TestTwoDispatchers(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db, 10_000_000)
		rail := newLedgerRail()
		a, b := f.service(rail, time.Second), f.service(rail, time.Second)
		n := 2000
		if RaceDetector {
			n = 500
		}
		batch := f.approvedBatch(t, a, n)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, s := range []*Service{a, b} {
			wg.Add(1)
			go func(s *Service) { defer wg.Done(); s.Run(ctx) }(s)
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			got, _ := getBatch(context.Background(), db, f.creator.MerchantID, false, batch.ID, false)
			if got.Status == BatchCompleted {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not completed: %+v", got)
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		wg.Wait()
		f.checkDone(t, rail, batch.ID, n)
	})
}

// TestCancelRacesFirstClaim: a cancel and the first claim of an approved
// batch serialise on the batch: either the cancel wins and nothing is sent,
// or it answers batch_already_processing.
func TestCancelRacesFirstClaim(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 10_000_000)
		for round := 0; round < 10; round++ {
			rail := newLedgerRail()
			svc := f.service(rail, time.Second)
			b := f.approvedBatch(t, svc, 50)
			var wg sync.WaitGroup
			var cancelErr error
			wg.Add(2)
			go func() { defer wg.Done(); _, cancelErr = svc.CancelBatch(ctx, store.NoClaim, f.creator, b.ID) }()
			go func() { defer wg.Done(); svc.RunOnce(ctx) }()
			wg.Wait()
			got, _ := getBatch(ctx, db, f.creator.MerchantID, false, b.ID, false)
			var sentRows int
			db.QueryRow(ctx, "SELECT COUNT(*) FROM payouts WHERE batch_id = ? AND dispatch_attempts > 0", b.ID).Scan(&sentRows)
			switch {
			case cancelErr == nil:
				if got.Status != BatchCanceled || sentRows != 0 || rail.sends != 0 || got.Canceled != 50 {
					t.Fatalf("round %d: canceled, yet %d rows sent: %+v", round, sentRows, got)
				}
			case strings.Contains(cancelErr.Error(), "batch_already_processing"):
				if got.Status == BatchCanceled || sentRows == 0 {
					t.Fatalf("round %d: refused cancel, yet %+v", round, got)
				}
				svc.RunOnce(ctx)
			default:
				t.Fatalf("round %d: %v", round, cancelErr)
			}
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}
