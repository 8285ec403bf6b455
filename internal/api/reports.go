package api

import (
	"mime"
	"net/http"
	"strings"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/reports"
)

// RegisterReports mounts the report routes.
func RegisterReports(s *Server, svc *reports.Service) {
	s.Handle("GET /v1/reports/settlement", settlementReport{svc}.get)
}

type settlementReport struct{ svc *reports.Service }

// get answers JSON, or CSV when the client accepts text/csv.
func (h settlementReport) get(w http.ResponseWriter, r *http.Request) error {
	sp, err := reports.ParseSettlementQuery(r.URL.Query())
	if err != nil {
		return err
	}
	rep, err := h.svc.Settlement(r.Context(), auth.Must(r.Context()), sp)
	if err != nil {
		return err
	}
	if !acceptsCSV(r) {
		WriteJSON(w, http.StatusOK, rep)
		return nil
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="settlement-`+rep.Date+`.csv"`)
	w.WriteHeader(http.StatusOK)
	return reports.WriteSettlementCSV(w, rep)
}

// acceptsCSV reports whether the Accept header names text/csv.
func acceptsCSV(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/csv" {
			return true
		}
	}
	return false
}
