package api

import (
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/reports"
)

// RegisterBalanceTransactions mounts the balance transaction routes.
func RegisterBalanceTransactions(s *Server, svc *reports.Service) {
	h := balanceTransactions{svc}
	s.Handle("GET /v1/balance_transactions", h.list)
	s.Handle("GET /v1/balance_transactions/{id}", h.get)
}

type balanceTransactions struct{ svc *reports.Service }

func (h balanceTransactions) list(w http.ResponseWriter, r *http.Request) error {
	lp, err := reports.ParseListQuery(r.URL.Query())
	if err != nil {
		return err
	}
	list, err := h.svc.List(r.Context(), auth.Must(r.Context()), lp)
	return answer(w, http.StatusOK, list, err)
}

func (h balanceTransactions) get(w http.ResponseWriter, r *http.Request) error {
	bt, err := h.svc.Get(r.Context(), auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, bt, err)
}
