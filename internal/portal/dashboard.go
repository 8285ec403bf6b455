package portal

import (
	"context"
	"net/http"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/httpx"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/webhooks"
)

type dashboardData struct {
	Balances []ledger.Balance
	Recent   []events.Event
	ChartOn  bool // payments are wired, so the chart is drawn (maybe empty)
	Charts   []*volumeChart
	Daily    []*dailyChart // the last 30 days, one chart per currency
}

// dashboard shows balances per currency, today's payment volume and success
// rate per provider (once payments are wired), and recent activity.
func (p *Portal) dashboard(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	bal, err := ledger.Balances(ctx, p.cfg.DB, c.sess.MerchantID, c.live)
	if err != nil {
		return err
	}
	recent, _, err := p.listEvents(ctx, c, "", pagination.Page{Limit: 10})
	if err != nil {
		return err
	}
	d := dashboardData{Balances: bal, Recent: recent}
	if p.volume != nil {
		d.ChartOn = true
		if d.Charts, err = p.volume(ctx, c); err != nil {
			return err
		}
	}
	if p.daily != nil {
		if d.Daily, err = p.daily(ctx, c); err != nil {
			return err
		}
	}
	p.render(w, r, c, http.StatusOK, "dashboard", &view{Title: "Dashboard", Section: "dashboard", Data: d})
	return nil
}

type listData[T any] struct {
	Items   []T
	HasMore bool
	Newer   string // ending_before cursor for the newer page ("" on the first page)
	Older   string // starting_after cursor for the older page ("" when none)
	Filters map[string]string
}

// newList fills the cursors of a page of items whose ids are got by id.
func newList[T any](items []T, hasMore bool, page pagination.Page, id func(T) string) listData[T] {
	d := listData[T]{Items: items, HasMore: hasMore}
	if len(items) == 0 {
		return d
	}
	backwards := page.EndingBefore != ""
	if hasMore || backwards {
		d.Older = id(items[len(items)-1])
	}
	if page.StartingAfter != "" || (backwards && hasMore) {
		d.Newer = id(items[0])
	}
	return d
}

// pageOf reads the cursor of a portal list (25 rows a page unless asked).
func pageOf(r *http.Request) (pagination.Page, error) {
	q := r.URL.Query()
	if q.Get("limit") == "" {
		q.Set("limit", "25")
	}
	return pagination.Parse(q)
}

// listEvents pages through the merchant's events in this mode, through the
// webhooks service when it is wired (its filters: type, or a prefix such as
// "payout.*"), else straight from the outbox.
func (p *Portal) listEvents(ctx context.Context, c *reqCtx, typ string, page pagination.Page) ([]events.Event, bool, error) {
	if p.webhooks != nil {
		return p.webhooks().ListEvents(ctx, owner(c), webhooks.EventFilter{Type: typ}, page)
	}
	cond, args, tail := page.Clause("id")
	rows, err := p.cfg.DB.Query(ctx, "SELECT "+events.Columns+" FROM events WHERE merchant_id = ? AND livemode = ?"+cond+tail,
		append([]any{c.sess.MerchantID, c.live}, args...)...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []events.Event
	for rows.Next() {
		e, err := events.Scan(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	out, more := pagination.Finish(page, out)
	return out, more, nil
}

func (p *Portal) eventsList(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	page, err := pageOf(r)
	if err != nil {
		return err
	}
	typ := r.URL.Query().Get("type")
	evs, more, err := p.listEvents(r.Context(), c, typ, page)
	if err != nil {
		return err
	}
	d := newList(evs, more, page, func(e events.Event) string { return e.ID })
	if typ != "" {
		d.Filters = map[string]string{"type": typ}
	}
	p.render(w, r, c, http.StatusOK, "events", &view{Title: "Events", Section: "events", Form: r.URL.Query(), Data: d})
	return nil
}

func (p *Portal) auditPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	page, err := pageOf(r)
	if err != nil {
		return err
	}
	entries, more, err := p.listAudit(r.Context(), c.sess.MerchantID, c.live, page)
	if err != nil {
		return err
	}
	p.render(w, r, c, http.StatusOK, "audit", &view{Title: "Audit log", Section: "audit",
		Data: newList(entries, more, page, func(e auditEntry) string { return e.ID })})
	return nil
}

// statusOf is the HTTP status of a domain error (the API's mapping).
func statusOf(err error) int { return httpx.HTTPStatus(err) }
