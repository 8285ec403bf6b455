package portal

import (
	"context"
	"net/http"

	"github.com/payd/payd/internal/banking"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/store"
)

// WithBanking adds the bank transfer pages (for participant banks) and the
// held transfers of the compliance queue, over the banking service.
func (p *Portal) WithBanking(get func() *banking.Service) {
	p.banking = get
	p.addCapability(capability{
		nav: navItem{Section: "transfers", Label: "Bank transfers", Path: "transfers", usable: p.isParticipant},
		routes: func(m *http.ServeMux) {
			m.Handle("GET /portal/{mode}/transfers", p.page(roleViewer, p.transfersList))
			m.Handle("GET /portal/{mode}/transfers/{uetr}", p.page(roleViewer, p.transferPage))
			m.Handle("POST /portal/{mode}/transfers/{uetr}/review", p.page(roleApprover, p.reviewTransfer))
		},
	})
	p.addCompliance()
}

// isParticipant reports whether the signed-in merchant is a participant bank
// (has a BIC): only those send, receive and review bank transfers.
func (p *Portal) isParticipant(ctx context.Context, c *reqCtx) bool {
	_, err := p.banking().Caller(ctx, c.principal())
	return err == nil
}

type transfersData struct {
	listData[*banking.Transfer]
	Participant    bool
	BIC            string
	Statuses       []string
	Roles          []string
	NotParticipant string
}

// transfersList lists the merchant's transfers as either agent, newest
// first, with status and role filters; cursors are UETRs. A merchant that is
// not a participant bank sees why there is nothing here.
func (p *Portal) transfersList(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	d := transfersData{Statuses: []string{banking.StatusACSC, banking.StatusACSP, banking.StatusACWP, banking.StatusRJCT},
		Roles: []string{"debtor", "creditor"}}
	v := &view{Title: "Bank transfers", Section: "transfers", Form: r.URL.Query(), Data: &d}
	part, err := p.banking().Caller(ctx, c.principal())
	if err != nil {
		if e := errs.As(err); e != nil && e.Kind == errs.KindPermission {
			d.NotParticipant = e.Message
			p.render(w, r, c, http.StatusOK, "transfers", v)
			return nil
		}
		return err
	}
	d.Participant, d.BIC = true, part.BIC
	page, err := pageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	lp := banking.ListParams{Page: page, Status: q.Get("status"), Role: q.Get("role")}
	list, more, err := p.banking().List(ctx, c.principal(), lp)
	if err != nil {
		if e := errs.As(err); e != nil && e.Kind == errs.KindInvalid && e.Param != "" {
			v.Error, v.ErrorCode, v.FieldErrors = e.Message, e.Code, map[string]string{e.Param: e.Message}
			p.render(w, r, c, statusOf(err), "transfers", v)
			return nil
		}
		return err
	}
	d.listData = newList(list, more, page, func(t *banking.Transfer) string { return t.UETR })
	d.Filters = map[string]string{}
	for _, k := range []string{"status", "role"} {
		if x := q.Get(k); x != "" {
			d.Filters[k] = x
		}
	}
	p.render(w, r, c, http.StatusOK, "transfers", v)
	return nil
}

type transferData struct {
	T         *banking.Transfer
	Timeline  []timelineEntry
	CanReview bool // held, and this merchant is the creditor agent that reviews it
}

// transferPage shows one transfer by UETR, as either of its agents sees it;
// any other merchant gets 404.
func (p *Portal) transferPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderTransfer(w, r, c, http.StatusOK, &view{})
}

func (p *Portal) renderTransfer(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	t, err := p.banking().Get(r.Context(), c.principal(), r.PathValue("uetr"))
	if err != nil {
		if e := errs.As(err); e != nil && e.Kind == errs.KindPermission {
			return errs.NotFound("transfer", r.PathValue("uetr"))
		}
		return err
	}
	tl, err := p.timeline(r.Context(), c, t.UETR, t.CreatedAt, "received ("+t.MsgID+")")
	if err != nil {
		return err
	}
	if t.ReviewedAt != nil {
		tl = append(tl, timelineEntry{At: *t.ReviewedAt, Label: "reviewed", Detail: t.ReviewNote})
	}
	if t.SettledAt != nil && !hasLabel(tl, "transfer.settled") {
		tl = append(tl, timelineEntry{At: *t.SettledAt, Label: "settled"})
	}
	for _, ret := range t.Returns {
		tl = append(tl, timelineEntry{At: ret.CreatedAt, Label: ret.Kind, Detail: ret.ReasonCode + " " + formatMoney(ret.AmountMinor, t.Currency)})
	}
	sortTimeline(tl)
	v.Title, v.Section = "Transfer "+t.UETR, "transfers"
	v.Data = transferData{T: t, Timeline: tl, CanReview: t.Status == banking.StatusACWP && t.CreditorMerchantID == c.sess.MerchantID}
	p.render(w, r, c, status, "transfer", v)
	return nil
}

// reviewTransfer releases or rejects a held (ACWP) transfer with a note.
func (p *Portal) reviewTransfer(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	uetr := r.PathValue("uetr")
	decision, note := r.PostFormValue("decision"), r.PostFormValue("note")
	t, err := p.banking().Review(r.Context(), store.NoClaim, c.principal(), uetr, banking.ReviewParams{Decision: decision, Note: note})
	p.audit(r.Context(), c, "transfer.review", uetr, err, decision+": "+note)
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error {
			return p.renderTransfer(w, r, c, statusOf(err), v)
		}, "note")
	}
	back := r.PostFormValue("back")
	if back != "compliance" {
		back = "transfers/" + t.UETR
	}
	notice := "transfer_released"
	if decision == banking.DecisionReject {
		notice = "transfer_rejected"
	}
	return redirect(w, r, c.path(back), notice)
}

// actionError shows a refused action on the page it came from: a domain
// error (403 self_approval_not_allowed, 409 invalid_state, 400 naming a
// field) is rendered by again with the message and code, keeping what the
// user typed; a missing object stays a 404 and anything else a 500.
func (p *Portal) actionError(w http.ResponseWriter, r *http.Request, c *reqCtx, err error, again func(v *view) error, keep ...string) error {
	e := errs.As(err)
	if e == nil || e.Kind == errs.KindInternal || e.Kind == errs.KindNotFound {
		return err
	}
	v := &view{Error: e.Message, ErrorCode: e.Code, Form: map[string][]string{}}
	for _, k := range keep {
		v.Form[k] = []string{r.PostFormValue(k)}
	}
	if e.Param != "" {
		v.FieldErrors = map[string]string{e.Param: e.Message}
	}
	return again(v)
}
