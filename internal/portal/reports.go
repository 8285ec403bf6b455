package portal

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/payd/payd/internal/csvcell"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/reports"
)

// maxExportRows bounds a balance history download: the newest rows, so a
// click never reads a whole ledger.
const maxExportRows = 10_000

// WithReports adds the balance history (with a CSV download) and the daily
// settlement report (a day and time zone picker, JSON on the page and a CSV
// download), over the reports service.
func (p *Portal) WithReports(get func() *reports.Service) {
	pages := reportPages{p: p, svc: get}
	p.addCapability(capability{
		nav: navItem{Section: "balance_transactions", Label: "Balance history", Path: "balance_transactions"},
		routes: func(m *http.ServeMux) {
			m.Handle("GET /portal/{mode}/balance_transactions", p.page(roleViewer, pages.history))
			m.Handle("GET /portal/{mode}/balance_transactions/export", p.page(roleViewer, pages.historyCSV))
		},
	})
	p.addCapability(capability{
		nav: navItem{Section: "settlement", Label: "Settlement", Path: "reports/settlement"},
		routes: func(m *http.ServeMux) {
			m.Handle("GET /portal/{mode}/reports/settlement", p.page(roleViewer, pages.settlement))
			m.Handle("GET /portal/{mode}/reports/settlement/export", p.page(roleViewer, pages.settlementCSV))
		},
	})
}

type reportPages struct {
	p   *Portal
	svc func() *reports.Service
}

type historyData struct {
	listData[reports.BalanceTransaction]
	Types  []string
	Export string // the download's query string
}

// historyQuery turns the page's filters (type, currency) and cursor into the
// API's list query; a bad filter is shown next to its field.
func historyQuery(q url.Values) (reports.ListParams, map[string]string, error) {
	qs := url.Values{"limit": {"25"}}
	f := map[string]string{}
	for _, k := range []string{"limit", "starting_after", "ending_before", "type", "currency"} {
		if v := q.Get(k); v != "" {
			qs.Set(k, v)
			if k == "type" || k == "currency" {
				f[k] = v
			}
		}
	}
	lp, err := reports.ParseListQuery(qs)
	return lp, f, err
}

func (rp reportPages) history(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	q := r.URL.Query()
	v := &view{Title: "Balance history", Section: "balance_transactions", Form: q}
	data := historyData{}
	for _, t := range reports.Types {
		data.Types = append(data.Types, string(t))
	}
	lp, f, err := historyQuery(q)
	if err != nil {
		e := errs.As(err)
		if e == nil || e.Param == "" {
			return err
		}
		data.Filters = f
		v.Error, v.ErrorCode, v.FieldErrors, v.Data = "Check the filters.", e.Code, map[string]string{e.Param: e.Message}, data
		rp.p.render(w, r, c, http.StatusBadRequest, "balance_transactions", v)
		return nil
	}
	list, err := rp.svc().List(r.Context(), c.principal(), lp)
	if err != nil {
		return err
	}
	data.listData = newList(list.Data, list.HasMore, lp.Page, func(b reports.BalanceTransaction) string { return b.ID })
	data.Filters = f
	exp := url.Values{}
	for k, val := range f {
		exp.Set(k, val)
	}
	data.Export = exp.Encode()
	v.Data = data
	rp.p.render(w, r, c, http.StatusOK, "balance_transactions", v)
	return nil
}

// historyCSV downloads the filtered balance history, newest first, at most
// maxExportRows rows. Every row is read before anything is written, so a
// failure is still a proper error page.
func (rp reportPages) historyCSV(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	q := r.URL.Query()
	q.Del("starting_after")
	q.Del("ending_before")
	q.Set("limit", strconv.Itoa(pagination.MaxLimit))
	lp, _, err := historyQuery(q)
	if err != nil {
		return err
	}
	var all []reports.BalanceTransaction
	for len(all) < maxExportRows {
		list, err := rp.svc().List(r.Context(), c.principal(), lp)
		if err != nil {
			return err
		}
		all = append(all, list.Data...)
		if !list.HasMore || len(list.Data) == 0 {
			break
		}
		lp, _, _ = historyQuery(url.Values{"limit": {q.Get("limit")}, "type": {q.Get("type")}, "currency": {q.Get("currency")},
			"starting_after": {list.Data[len(list.Data)-1].ID}})
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="balance-history-`+c.mode+`.csv"`)
	cw := csv.NewWriter(w)
	cw.Write([]string{"id", "created_at", "type", "amount_minor", "currency", "source", "balance_after_minor"})
	for _, b := range all {
		cw.Write([]string{b.ID, b.CreatedAt.Format(time.RFC3339), string(b.Type), strconv.FormatInt(b.AmountMinor, 10), b.Currency,
			csvcell.Safe(b.Source), strconv.FormatInt(b.BalanceAfterMinor, 10)})
	}
	cw.Flush()
	rp.p.audit(r.Context(), c, "balance_history.downloaded", "", nil, strconv.Itoa(len(all))+" rows")
	return cw.Error()
}

type settlementData struct {
	Report *reports.SettlementReport
	Zones  []string
	Export string
}

// commonZones are offered in the time zone picker; any IANA name may be typed.
var commonZones = []string{"UTC", "Africa/Djibouti", "Africa/Addis_Ababa", "Africa/Nairobi", "Europe/Paris", "Europe/London", "America/New_York", "Asia/Dubai"}

// settlementQuery is the report's query: date (default today in the zone)
// and timezone (default UTC, as the API).
func settlementQuery(q url.Values, now time.Time) url.Values {
	out := url.Values{"timezone": {q.Get("timezone")}, "date": {q.Get("date")}}
	if out.Get("timezone") == "" {
		out.Set("timezone", "UTC")
	}
	if out.Get("date") == "" {
		if loc, err := time.LoadLocation(out.Get("timezone")); err == nil {
			now = now.In(loc)
		}
		out.Set("date", now.Format(time.DateOnly))
	}
	if v := q.Get("currency"); v != "" {
		out.Set("currency", v)
	}
	return out
}

func (rp reportPages) settlement(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	q := settlementQuery(r.URL.Query(), time.Now())
	v := &view{Title: "Settlement", Section: "settlement", Form: q}
	data := settlementData{Zones: commonZones, Export: q.Encode()}
	sp, err := reports.ParseSettlementQuery(q)
	if err != nil {
		e := errs.As(err)
		if e == nil || e.Param == "" {
			return err
		}
		v.Error, v.ErrorCode, v.FieldErrors, v.Data = "Check the day and time zone.", e.Code, map[string]string{e.Param: e.Message}, data
		rp.p.render(w, r, c, http.StatusBadRequest, "settlement_report", v)
		return nil
	}
	rep, err := rp.svc().Settlement(r.Context(), c.principal(), sp)
	if err != nil {
		return err
	}
	data.Report = &rep
	v.Data = data
	rp.p.render(w, r, c, http.StatusOK, "settlement_report", v)
	return nil
}

// settlementCSV downloads the report as the API's CSV.
func (rp reportPages) settlementCSV(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	sp, err := reports.ParseSettlementQuery(settlementQuery(r.URL.Query(), time.Now()))
	if err != nil {
		return err
	}
	rep, err := rp.svc().Settlement(r.Context(), c.principal(), sp)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="settlement-`+rep.Date+`.csv"`)
	if err := reports.WriteSettlementCSV(w, rep); err != nil {
		return err
	}
	rp.p.audit(r.Context(), c, "settlement_report.downloaded", "", nil, rep.Date+" "+rep.Timezone)
	return nil
}
