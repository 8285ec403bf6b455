package portal

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"

	"github.com/payd/payd/internal/csvcell"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/payouts"
	"github.com/payd/payd/internal/store"
)

// WithPayouts adds the payout and batch pages (upload a CSV as a variant B
// batch, progress, approve, cancel, retry failed rows, results as CSV) and
// the held payouts of the compliance queue, over the payouts service.
func (p *Portal) WithPayouts(get func() *payouts.Service) {
	p.payouts = get
	p.heldPayouts = p.listHeldPayouts
	p.addCapability(capability{
		nav: navItem{Section: "payouts", Label: "Payouts", Path: "payouts"},
		routes: func(m *http.ServeMux) {
			m.Handle("GET /portal/{mode}/payouts", p.page(roleViewer, p.payoutsList))
			m.Handle("GET /portal/{mode}/payouts/{id}", p.page(roleViewer, p.payoutPage))
			m.Handle("POST /portal/{mode}/payouts/{id}/approve", p.page(roleApprover, p.approvePayout))
			m.Handle("POST /portal/{mode}/payouts/{id}/review", p.page(roleApprover, p.reviewPayout))
			m.Handle("POST /portal/{mode}/payouts/{id}/retry", p.page(roleApprover, p.retryPayout))
		},
	})
	p.addCapability(capability{
		nav: navItem{Section: "batches", Label: "Batches", Path: "batches"},
		routes: func(m *http.ServeMux) {
			m.Handle("GET /portal/{mode}/batches", p.page(roleViewer, p.batchesList))
			m.Handle("POST /portal/{mode}/batches", p.page(roleApprover, p.uploadBatch))
			m.Handle("GET /portal/{mode}/batches/{id}", p.page(roleViewer, p.batchPage))
			m.Handle("GET /portal/{mode}/batches/{id}/results.csv", p.page(roleViewer, p.batchResults))
			m.Handle("POST /portal/{mode}/batches/{id}/approve", p.page(roleApprover, p.approveBatch))
			m.Handle("POST /portal/{mode}/batches/{id}/cancel", p.page(roleApprover, p.cancelBatch))
			m.Handle("POST /portal/{mode}/batches/{id}/retry_failed", p.page(roleApprover, p.retryFailedRows))
		},
	})
	p.addCompliance()
}

type payoutsData struct {
	listData[*payouts.Payout]
	Statuses  []string
	Providers []string
}

var payoutProviders = []string{"bank_a", "bank_b", "wallet_a", "wallet_b", "wallet_c"}

// payoutsList lists payouts newest first with filters: status, provider,
// batch and recipient.
func (p *Portal) payoutsList(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	page, err := pageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := payouts.ListParams{Status: payouts.Status(q.Get("status")), Provider: q.Get("provider"), BatchID: q.Get("batch_id"), Recipient: q.Get("recipient")}
	v := &view{Title: "Payouts", Section: "payouts", Form: q}
	d := payoutsData{Providers: payoutProviders}
	for _, s := range payouts.Statuses {
		d.Statuses = append(d.Statuses, string(s))
	}
	list, more, err := p.payouts().List(r.Context(), c.principal(), f, page)
	if err != nil {
		e := errs.As(err)
		if e == nil || e.Kind != errs.KindInvalid {
			return err
		}
		v.Error, v.ErrorCode, v.FieldErrors, v.Data = e.Message, e.Code, map[string]string{e.Param: e.Message}, d
		p.render(w, r, c, statusOf(err), "payouts", v)
		return nil
	}
	d.listData = newList(list, more, page, func(x *payouts.Payout) string { return x.ID })
	d.Filters = map[string]string{}
	for _, k := range []string{"status", "provider", "batch_id", "recipient"} {
		if x := q.Get(k); x != "" {
			d.Filters[k] = x
		}
	}
	v.Data = d
	p.render(w, r, c, http.StatusOK, "payouts", v)
	return nil
}

type payoutData struct {
	P        *payouts.Payout
	Timeline []timelineEntry
}

func (p *Portal) payoutPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderPayout(w, r, c, http.StatusOK, &view{})
}

// renderPayout shows a payout: its fields, the screening result with the
// matched list entries and scores, its timeline, and the actions its state
// allows (approve, release/reject, retry).
func (p *Portal) renderPayout(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	po, err := p.payouts().Get(r.Context(), c.principal(), r.PathValue("id"))
	if err != nil {
		return err
	}
	tl, err := p.timeline(r.Context(), c, po.ID, po.CreatedAt, "created")
	if err != nil {
		return err
	}
	sortTimeline(tl)
	v.Title, v.Section, v.Data = "Payout "+po.ID, "payouts", payoutData{P: po, Timeline: tl}
	p.render(w, r, c, status, "payout", v)
	return nil
}

// approvePayout clears a payout over the approval threshold. Four-eyes is
// the service's rule: its creator (a key or a user) gets 403
// self_approval_not_allowed, shown on the page.
func (p *Portal) approvePayout(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	_, err := p.payouts().Approve(r.Context(), store.NoClaim, c.principal(), id)
	p.audit(r.Context(), c, "payout.approve", id, err, "")
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderPayout(w, r, c, statusOf(err), v) })
	}
	return redirect(w, r, c.path("payouts", id), "payout_approved")
}

// reviewPayout releases or rejects a payout held by screening, with a note.
func (p *Portal) reviewPayout(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	decision, note := r.PostFormValue("decision"), r.PostFormValue("note")
	_, err := p.payouts().Review(r.Context(), store.NoClaim, c.principal(), id, decision, note)
	p.audit(r.Context(), c, "payout.review", id, err, decision+": "+note)
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderPayout(w, r, c, statusOf(err), v) }, "note")
	}
	notice := "payout_released"
	if decision == "reject" {
		notice = "payout_rejected"
	}
	if r.PostFormValue("back") == "compliance" {
		return redirect(w, r, c.path("compliance"), notice)
	}
	return redirect(w, r, c.path("payouts", id), notice)
}

func (p *Portal) retryPayout(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	_, err := p.payouts().Retry(r.Context(), store.NoClaim, c.principal(), id, "")
	p.audit(r.Context(), c, "payout.retry", id, err, "")
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderPayout(w, r, c, statusOf(err), v) })
	}
	if b := r.PostFormValue("back"); strings.HasPrefix(b, "batches/") {
		return redirect(w, r, c.path(b), "payout_retried")
	}
	return redirect(w, r, c.path("payouts", id), "payout_retried")
}

// listHeldPayouts is the compliance queue's payouts part: those held by
// screening, newest first.
func (p *Portal) listHeldPayouts(r *http.Request, c *reqCtx, page pagination.Page) (any, bool, error) {
	return p.payouts().List(r.Context(), c.principal(), payouts.ListParams{Status: payouts.Held}, page)
}

type batchesData struct {
	listData[*payouts.Batch]
	Statuses []string
	RowError []errs.RowError
	More     int // bad rows beyond those listed
}

func (p *Portal) batchesList(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderBatches(w, r, c, http.StatusOK, &view{Form: r.URL.Query()}, nil)
}

func (p *Portal) renderBatches(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view, rowErrs []errs.RowError) error {
	page, err := pageOf(r)
	if err != nil {
		return err
	}
	st := payouts.BatchStatus(r.URL.Query().Get("status"))
	list, more, err := p.payouts().ListBatches(r.Context(), c.principal(), st, page)
	if err != nil {
		return err
	}
	d := batchesData{listData: newList(list, more, page, func(b *payouts.Batch) string { return b.ID }), RowError: rowErrs,
		Statuses: []string{string(payouts.BatchPendingApproval), string(payouts.BatchProcessing), string(payouts.BatchCompleted), string(payouts.BatchCanceled)}}
	if st != "" {
		d.Filters = map[string]string{"status": string(st)}
	}
	v.Title, v.Section, v.Data = "Batches", "batches", d
	p.render(w, r, c, status, "batches", v)
	return nil
}

// uploadBatch makes a variant B batch (pending_approval) from an uploaded
// CSV (recipient_msisdn, recipient_account, amount, provider, reference,
// description). Every bad row is listed with its number and field; nothing
// is created then.
func (p *Portal) uploadBatch(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	currency, desc := r.PostFormValue("currency"), r.PostFormValue("description")
	form := map[string][]string{"currency": {currency}, "description": {desc}}
	fail := func(err error) error {
		e := errs.As(err)
		if e == nil || e.Kind == errs.KindInternal {
			return err
		}
		v := &view{Error: e.Message, ErrorCode: e.Code, Form: form}
		param := e.Param
		if len(e.Rows) > 0 || param == "" {
			param = "file"
		}
		v.FieldErrors = map[string]string{param: e.Message}
		if len(e.Rows) > 0 {
			v.FieldErrors["file"] = strconv.Itoa(len(e.Rows)) + " row(s) are wrong; see the list below."
		}
		return p.renderBatches(w, r, c, statusOf(err), v, e.Rows)
	}
	f, _, err := r.FormFile("file")
	if err != nil {
		return fail(errs.Invalid("file", "parameter_missing", "choose a CSV file to upload"))
	}
	defer f.Close()
	// Parsed as it is read from the form's spooled file: only the rows are held.
	req, err := payouts.ReadRowsCSV(payouts.LimitUpload(f, payouts.MaxBatchBytes), currency, desc, c.live)
	if err != nil {
		p.audit(r.Context(), c, "batch.create", "", err, "upload refused")
		return fail(err)
	}
	b, err := p.payouts().CreateBatch(r.Context(), store.NoClaim, c.principal(), req)
	p.audit(r.Context(), c, "batch.create", batchID(b), err, strconv.Itoa(req.RowCount())+" rows")
	if err != nil {
		return fail(err)
	}
	return redirect(w, r, c.path("batches", b.ID), "batch_created")
}

func batchID(b *payouts.Batch) string {
	if b == nil {
		return ""
	}
	return b.ID
}

type batchData struct {
	B      *payouts.Batch
	Done   int // terminal rows
	Rows   listData[*payouts.Payout]
	Failed bool // some row failed (retry offered)
	Live   bool // not yet terminal: the page refreshes its progress
}

func (p *Portal) batchPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderBatch(w, r, c, http.StatusOK, &view{})
}

// renderBatch shows a batch: counts, a progress bar (refreshed by a small
// script while it runs, by a reload without one), its rows once they are
// payouts, and the actions its state allows.
func (p *Portal) renderBatch(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	ctx := r.Context()
	b, err := p.payouts().GetBatch(ctx, c.principal(), r.PathValue("id"))
	if err != nil {
		return err
	}
	page, err := pageOf(r)
	if err != nil || r.Method == http.MethodPost {
		page = pagination.Page{Limit: 25}
	}
	rows, more, err := p.payouts().List(ctx, c.principal(), payouts.ListParams{BatchID: b.ID}, page)
	if err != nil {
		return err
	}
	d := batchData{B: b, Done: b.Succeeded + b.Failed + b.Canceled, Failed: b.Failed > 0,
		Rows: newList(rows, more, page, func(x *payouts.Payout) string { return x.ID }),
		Live: b.Status == payouts.BatchProcessing}
	v.Title, v.Section, v.Data = "Batch "+b.ID, "batches", d
	p.render(w, r, c, status, "batch", v)
	return nil
}

// approveBatch approves a pending batch. A user cannot approve a batch that
// user created (403 self_approval_not_allowed, on the page); a batch made
// with an API key can be approved by a user, as by another key.
func (p *Portal) approveBatch(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	_, err := p.payouts().ApproveBatch(r.Context(), store.NoClaim, c.principal(), id)
	p.audit(r.Context(), c, "batch.approve", id, err, "")
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderBatch(w, r, c, statusOf(err), v) })
	}
	return redirect(w, r, c.path("batches", id), "batch_approved")
}

func (p *Portal) cancelBatch(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	_, err := p.payouts().CancelBatch(r.Context(), store.NoClaim, c.principal(), id)
	p.audit(r.Context(), c, "batch.cancel", id, err, "")
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderBatch(w, r, c, statusOf(err), v) })
	}
	return redirect(w, r, c.path("batches", id), "batch_canceled")
}

// retryFailedRows retries every failed row of a batch (each under its
// original reference, so a rail that did pay it is not paid twice).
func (p *Portal) retryFailedRows(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	id := r.PathValue("id")
	b, err := p.payouts().GetBatch(ctx, c.principal(), id)
	if err != nil {
		return err
	}
	var failed []string
	page := pagination.Page{Limit: pagination.MaxLimit}
	for {
		list, more, err := p.payouts().List(ctx, c.principal(), payouts.ListParams{BatchID: b.ID, Status: payouts.Failed}, page)
		if err != nil {
			return err
		}
		for _, x := range list {
			failed = append(failed, x.ID)
		}
		if !more || len(list) == 0 {
			break
		}
		page.StartingAfter = list[len(list)-1].ID
	}
	retried := 0
	var firstErr error
	for _, pid := range failed {
		if _, err := p.payouts().Retry(ctx, store.NoClaim, c.principal(), pid, ""); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		retried++
	}
	p.audit(ctx, c, "batch.retry_failed", id, firstErr, strconv.Itoa(retried)+" of "+strconv.Itoa(len(failed))+" failed rows retried")
	if firstErr != nil && retried == 0 {
		return p.actionError(w, r, c, firstErr, func(v *view) error { return p.renderBatch(w, r, c, statusOf(firstErr), v) })
	}
	return redirect(w, r, c.path("batches", id), "payout_retried")
}

// batchResults downloads the batch's rows as CSV: reference, payout id,
// status, amount, recipient, failure. Cells a spreadsheet would run as a
// formula are prefixed with an apostrophe.
func (p *Portal) batchResults(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	b, err := p.payouts().GetBatch(ctx, c.principal(), r.PathValue("id"))
	if err != nil {
		return err
	}
	page := pagination.Page{Limit: pagination.MaxLimit}
	// Every row is read before anything is written, so a failure is still a
	// proper error page; at most 10,000 rows. Oldest first, like the file
	// that was uploaded.
	var all []*payouts.Payout
	for {
		list, more, err := p.payouts().List(ctx, c.principal(), payouts.ListParams{BatchID: b.ID}, page)
		if err != nil {
			return err
		}
		all = append(all, list...)
		if !more || len(list) == 0 {
			break
		}
		page.StartingAfter = list[len(list)-1].ID
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+b.ID+`-results.csv"`)
	cw := csv.NewWriter(w)
	cw.Write([]string{"reference", "payout_id", "status", "amount", "currency", "provider", "recipient_msisdn", "recipient_account",
		"failure_code", "failure_message", "succeeded_at", "failed_at"})
	for i := len(all) - 1; i >= 0; i-- {
		x := all[i]
		cw.Write([]string{cell(x.Reference), x.ID, string(x.Status), strconv.FormatInt(x.Amount, 10), x.Currency, x.Provider,
			cell(deref(x.RecipientMSISDN)), cell(deref(x.RecipientAccount)), cell(deref(x.FailureCode)), cell(deref(x.FailureMessage)),
			formatTimePtr(x.SucceededAt), formatTimePtr(x.FailedAt)})
	}
	cw.Flush()
	p.audit(ctx, c, "batch.results_downloaded", b.ID, nil, strconv.Itoa(len(all))+" rows")
	return cw.Error()
}

// cell neutralises CSV formula injection (csvcell.Safe, shared with the
// API's CSV answers).
func cell(s string) string { return csvcell.Safe(s) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
