package payouts

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/screening"
	"github.com/payd/payd/internal/store"
)

// CreateBatch makes a batch from a parsed request. Variant A (items): every
// item becomes a payout at once (held, requires_approval or pending), the
// total is reserved per currency (402 insufficient_balance when short,
// nothing written) and the batch is processing. Variant B (rows): the rows
// are stored and the batch waits in pending_approval; a sixth open batch is
// 409 pending_batch_limit. It reads and writes in the request's unit of work
// (cl; store.NoClaim without one).
func (s *Service) CreateBatch(ctx context.Context, cl store.Claim, pr auth.Principal, req *BatchRequest) (*Batch, error) {
	work := s.db.Within(cl)
	if err := s.screeningAvailable(pr.Livemode); err != nil {
		return nil, err
	}
	if err := s.checkRails(ctx, work, pr, req.inputs); err != nil {
		return nil, err
	}
	if req.Variant == VariantItems {
		return s.createItemsBatch(ctx, work, pr, req)
	}
	return s.createRowsBatch(ctx, work, pr, req)
}

// checkRails refuses a batch naming a provider with no rail in this mode
// (a live rail's connection read in work).
func (s *Service) checkRails(ctx context.Context, work store.Work, pr auth.Principal, ins []*payoutInput) error {
	seen := map[string]bool{}
	for _, in := range ins {
		if seen[in.Provider] {
			continue
		}
		seen[in.Provider] = true
		if _, err := s.rails.For(ctx, work, pr.MerchantID, pr.Livemode, in.Provider); err != nil {
			return railUnavailable(in.Provider, err)
		}
	}
	return nil
}

func (s *Service) createItemsBatch(ctx context.Context, work store.Work, pr auth.Principal, req *BatchRequest) (*Batch, error) {
	threshold, err := merchants.ApprovalThreshold(ctx, work, pr.MerchantID, pr.Livemode)
	if err != nil {
		return nil, err
	}
	scr := s.screenAll(req.inputs)
	b := &Batch{ID: ids.New("po_bulk_"), MerchantID: pr.MerchantID, Livemode: pr.Livemode, Variant: VariantItems,
		Status: BatchProcessing, Description: strPtr(req.Description), RowCount: len(req.inputs), Pending: len(req.inputs),
		CreatedBy: pr.ID}
	ps := make([]*Payout, len(req.inputs))
	// Four-eyes is merchant policy on the money the batch moves, not on the
	// request's shape: when a currency's items together exceed the
	// threshold, every item in that currency needs approval, however small.
	totals := map[string]int64{}
	for _, in := range req.inputs {
		totals[in.Currency] += in.Amount // overflow-checked per currency by the parser
	}
	for i, in := range req.inputs {
		b.TotalAmountMinor += in.Amount
		itemThreshold := threshold
		if threshold != nil && totals[in.Currency] > *threshold {
			all := int64(-1)
			itemThreshold = &all
		}
		ps[i] = s.newPayout(pr, in, scr[i], itemThreshold, b)
		if ps[i].Reference == "" {
			ps[i].Reference = ps[i].ID
		}
	}
	err = work.InTx(ctx, func(tx *store.Tx) error {
		now := tx.Now()
		b.CreatedAt, b.UpdatedAt = now, now
		if err := insertBatch(ctx, tx, b); err != nil {
			return err
		}
		for _, p := range ps {
			p.CreatedAt, p.UpdatedAt = now, now
		}
		return s.release(ctx, tx, b, ps, now)
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// release makes a batch's payouts real in tx: their float reserved in one
// posting, their rows written (pending ones due at once), their created
// events emitted, and the dispatchers woken once tx commits.
func (s *Service) release(ctx context.Context, tx *store.Tx, b *Batch, ps []*Payout, now time.Time) error {
	if err := reserve(ctx, tx, b.MerchantID, b.Livemode, kindBatchReserve, b.ID, ps); err != nil {
		return err
	}
	if err := insertPayouts(ctx, tx, ps, dueIfPending(now)); err != nil {
		return err
	}
	if err := s.emitCreated(ctx, tx, ps); err != nil {
		return err
	}
	tx.AfterCommit(s.wake.Notify)
	return nil
}

// dueIfPending makes pending payouts due at once.
func dueIfPending(now time.Time) func(*Payout) (any, any) {
	return func(p *Payout) (any, any) {
		if p.Status == Pending {
			return micros(now), nil
		}
		return nil, nil
	}
}

func (s *Service) createRowsBatch(ctx context.Context, work store.Work, pr auth.Principal, req *BatchRequest) (*Batch, error) {
	b := &Batch{ID: ids.New("batch_"), MerchantID: pr.MerchantID, Livemode: pr.Livemode, Variant: VariantRows,
		Status: BatchPendingApproval, Currency: strPtr(req.Currency), Description: strPtr(req.Description),
		RowCount: len(req.inputs), CreatedBy: pr.ID}
	for _, in := range req.inputs {
		b.TotalAmountMinor += in.Amount // checked against the limit by the parser
	}
	err := work.InTx(ctx, func(tx *store.Tx) error {
		// Lock the merchant so two creations cannot both see four open batches.
		var mid string
		if err := tx.QueryRow(ctx, "SELECT id FROM merchants WHERE id = ?"+tx.Dialect().ForUpdate(), pr.MerchantID).Scan(&mid); err != nil {
			return err
		}
		var open int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM payout_batches WHERE merchant_id = ? AND livemode = ? AND variant = 'rows'
			AND status IN ('pending_approval','processing')`, pr.MerchantID, pr.Livemode).Scan(&open); err != nil {
			return err
		}
		if open >= MaxOpenRowsBatches {
			return errs.Conflict("pending_batch_limit", "%d batches are already pending approval or processing; at most %d may be at once",
				open, MaxOpenRowsBatches)
		}
		now := tx.Now()
		b.CreatedAt, b.UpdatedAt = now, now
		if err := insertBatch(ctx, tx, b); err != nil {
			return err
		}
		return insertRows(ctx, tx, b, req.inputs)
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

func insertBatch(ctx context.Context, tx *store.Tx, b *Batch) error {
	_, err := tx.Exec(ctx, `INSERT INTO payout_batches (id, merchant_id, livemode, variant, status, currency, description, row_count,
		total_amount_minor, rows_pending, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		b.ID, b.MerchantID, b.Livemode, b.Variant, string(b.Status), store.StringPtr(b.Currency), store.StringPtr(b.Description), b.RowCount,
		b.TotalAmountMinor, b.Pending, b.CreatedBy, micros(b.CreatedAt), micros(b.UpdatedAt))
	return err
}

// insertRows stores a variant B batch's rows until approval.
func insertRows(ctx context.Context, tx *store.Tx, b *Batch, ins []*payoutInput) error {
	const cols = "batch_id, row_no, livemode, amount, provider, recipient_msisdn, recipient_account, recipient_name, description, reference, scenario, created_at"
	for start := 0; start < len(ins); start += insertChunk {
		end := min(start+insertChunk, len(ins))
		q := "INSERT INTO payout_batch_rows (" + cols + ") VALUES " + store.Rows(end-start, 12)
		args := make([]any, 0, (end-start)*12)
		for i := start; i < end; i++ {
			in := ins[i]
			args = append(args, b.ID, in.Row, b.Livemode, in.Amount, in.Provider, store.StringPtr(strPtr(in.MSISDN)),
				store.StringPtr(strPtr(in.Account)), store.StringPtr(strPtr(in.Name)), store.StringPtr(strPtr(in.Description)), in.Reference,
				store.StringPtr(strPtr(in.Scenario)), micros(b.CreatedAt))
		}
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// loadRows reads a variant B batch's stored rows in order.
func loadRows(ctx context.Context, q store.Querier, b *Batch) ([]*payoutInput, error) {
	rows, err := q.Query(ctx, `SELECT row_no, amount, provider, recipient_msisdn, recipient_account, recipient_name, description,
		reference, scenario FROM payout_batch_rows WHERE batch_id = ? ORDER BY row_no`, b.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*payoutInput
	for rows.Next() {
		in := &payoutInput{Currency: deref(b.Currency), AmountSet: true}
		var msisdn, account, name, desc, scenario *string
		if err := rows.Scan(&in.Row, &in.Amount, &in.Provider, &msisdn, &account, &name, &desc, &in.Reference, &scenario); err != nil {
			return nil, err
		}
		in.MSISDN, in.Account, in.Name, in.Description, in.Scenario = deref(msisdn), deref(account), deref(name), deref(desc), deref(scenario)
		out = append(out, in)
	}
	return out, rows.Err()
}

// screenAll screens the inputs' names on every core.
func (s *Service) screenAll(ins []*payoutInput) []Screening {
	out := make([]Screening, len(ins))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ins[i].Name == "" {
					out[i] = Screening{Status: screening.StatusNotScreened, Matches: []screening.Match{}}
					continue
				}
				out[i] = screeningOf(s.Screen(ins[i].Name))
			}
		}()
	}
	for i := range ins {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// GetBatch returns one batch of the caller's merchant and mode.
func (s *Service) GetBatch(ctx context.Context, pr auth.Principal, id string) (*Batch, error) {
	return getBatch(ctx, s.db, pr.MerchantID, pr.Livemode, id, false)
}

// ListBatches returns a page of batches, newest first.
func (s *Service) ListBatches(ctx context.Context, pr auth.Principal, status BatchStatus, page pagination.Page) ([]*Batch, bool, error) {
	q := "SELECT " + batchColumns + " FROM payout_batches WHERE merchant_id = ? AND livemode = ?"
	args := []any{pr.MerchantID, pr.Livemode}
	if status != "" {
		q += " AND status = ?"
		args = append(args, string(status))
	}
	cond, cargs, tail := page.Clause("id")
	rows, err := s.db.Query(ctx, q+cond+tail, append(args, cargs...)...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []*Batch
	for rows.Next() {
		b, err := scanBatch(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	out, more := pagination.Finish(page, out)
	return out, more, nil
}

// ApproveBatch approves a variant B batch (four-eyes: another principal
// than its creator, else 403 self_approval_not_allowed): it reserves the
// total (402 insufficient_balance when short; the batch stays
// pending_approval), makes each row its own payout (screened: a hit is held,
// the others pending) with payout.created, and starts the fan-out. It reads
// and writes in the request's unit of work (cl).
func (s *Service) ApproveBatch(ctx context.Context, cl store.Claim, pr auth.Principal, id string) (*Batch, error) {
	work := s.db.Within(cl)
	b, err := getBatch(ctx, work, pr.MerchantID, pr.Livemode, id, false)
	if err != nil {
		return nil, err
	}
	if err := checkApprovable(ctx, work, b, pr); err != nil {
		return nil, err
	}
	if err := s.screeningAvailable(pr.Livemode); err != nil {
		return nil, err
	}
	ins, err := loadRows(ctx, work, b)
	if err != nil {
		return nil, err
	}
	if err := s.checkRails(ctx, work, pr, ins); err != nil {
		return nil, err
	}
	scr := s.screenAll(ins) // outside the transaction: rows do not change once stored
	err = work.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if b, err = getBatch(ctx, tx, pr.MerchantID, pr.Livemode, id, true); err != nil {
			return err
		}
		if err := checkApprovable(ctx, tx, b, pr); err != nil {
			return err
		}
		now := tx.Now()
		approver := pr.ID
		b.ApprovedBy, b.ApprovedAt = &approver, &now
		ps := make([]*Payout, len(ins))
		for i, in := range ins {
			p := s.newPayout(pr, in, scr[i], nil, b)
			p.CreatedAt, p.UpdatedAt = now, now
			ps[i] = p
		}
		res, err := tx.Exec(ctx, `UPDATE payout_batches SET status = 'processing', approved_by = ?, approved_at = ?, rows_pending = ?,
			updated_at = ? WHERE id = ? AND `+batchCASFrom(BatchProcessing, BatchPendingApproval),
			approver, micros(now), len(ps), micros(now), b.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errs.InvalidState("batch %s changed state meanwhile", b.ID)
		}
		b.Status, b.Pending, b.UpdatedAt = BatchProcessing, len(ps), now
		return s.release(ctx, tx, b, ps, now)
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

func checkApprovable(ctx context.Context, q store.Querier, b *Batch, pr auth.Principal) error {
	if b.Status != BatchPendingApproval {
		return errs.InvalidState("batch %s is %s; only a batch pending_approval can be approved", b.ID, b.Status)
	}
	return notSamePerson(ctx, q, b.CreatedBy, pr.ID, "batch", b.CreatedAt)
}

// CancelBatch cancels a batch before any of its rows has been sent: a
// variant B batch awaiting approval simply ends (it has no payouts); an
// approved or variant A batch cancels its waiting payouts and releases
// their float. Once a row has been sent: 409 batch_already_processing. No
// second principal is needed. It writes in the request's unit of work (cl).
func (s *Service) CancelBatch(ctx context.Context, cl store.Claim, pr auth.Principal, id string) (*Batch, error) {
	var b *Batch
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		var err error
		if b, err = getBatch(ctx, tx, pr.MerchantID, pr.Livemode, id, true); err != nil {
			return err
		}
		now := tx.Now()
		switch b.Status {
		case BatchCanceled:
			return errs.InvalidState("batch %s is already canceled", b.ID)
		case BatchCompleted:
			if b.Dispatched {
				return alreadyProcessing(b)
			}
			return errs.InvalidState("batch %s is completed", b.ID)
		}
		res, err := tx.Exec(ctx, `UPDATE payout_batches SET status = 'canceled', canceled_at = ?, updated_at = ?
			WHERE id = ? AND dispatched = ? AND `+batchCASFrom(BatchCanceled, BatchPendingApproval, BatchProcessing),
			micros(now), micros(now), b.ID, false)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return alreadyProcessing(b)
		}
		wasApproved := b.Status == BatchProcessing
		b.Status, b.CanceledAt, b.UpdatedAt = BatchCanceled, &now, now
		if wasApproved {
			if err := s.cancelRows(ctx, tx, b); err != nil {
				return err
			}
		}
		_, err = events.Emit(ctx, tx, b.MerchantID, b.Livemode, "payout_batch.canceled", "payout_batch", b.ID, b)
		return err
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

func alreadyProcessing(b *Batch) error {
	return errs.Conflict("batch_already_processing", "batch %s cannot be canceled: rows have already been sent to their rails", b.ID)
}

// cancelRows cancels a canceled batch's waiting payouts, releases their
// float (one posting each) and counts them.
func (s *Service) cancelRows(ctx context.Context, tx *store.Tx, b *Batch) error {
	now := tx.Now()
	rows, err := tx.Query(ctx, `UPDATE payouts SET status = 'canceled', canceled_at = ?, dispatch_at = NULL, updated_at = ?
		WHERE batch_id = ? AND `+casFrom(Canceled, Pending, Held, RequiresApproval)+` RETURNING `+payoutColumns,
		micros(now), micros(now), b.ID)
	if err != nil {
		return err
	}
	var ps []*Payout
	for rows.Next() {
		p, err := scanPayout(rows)
		if err != nil {
			rows.Close()
			return err
		}
		ps = append(ps, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	slices.SortFunc(ps, func(a, c *Payout) int { return strings.Compare(a.ID, c.ID) })
	txns := make([]ledger.Transaction, len(ps))
	evs := make([]events.Pending, len(ps))
	for i, p := range ps {
		txns[i] = releaseTxn(p, kindCanceled)
		evs[i] = payoutEvent(p, "payout.canceled")
	}
	if _, err := ledger.PostMany(ctx, tx, txns); err != nil {
		return err
	}
	if _, err := events.EmitMany(ctx, tx, evs); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE payout_batches SET rows_canceled = rows_canceled + ?, rows_pending = rows_pending - ? WHERE id = ?`,
		len(ps), len(ps), b.ID); err != nil {
		return err
	}
	b.Canceled += len(ps)
	b.Pending -= len(ps)
	return nil
}
