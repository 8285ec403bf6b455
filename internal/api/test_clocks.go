package api

import (
	"github.com/payd/payd/internal/store"
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/billing"
	"github.com/payd/payd/internal/pagination"
)

// RegisterTestClocks mounts the test clock routes (test mode only: a live
// key is 403 permission_denied).
func RegisterTestClocks(s *Server, svc *billing.Service) {
	h := testClocks{svc}
	s.HandleClaimed("POST /v1/test_helpers/test_clocks", h.create, TestModeOnly())
	s.Handle("GET /v1/test_helpers/test_clocks", h.list, TestModeOnly())
	s.Handle("GET /v1/test_helpers/test_clocks/{id}", h.get, TestModeOnly())
	s.HandleClaimed("POST /v1/test_helpers/test_clocks/{id}/advance", h.advance, TestModeOnly())
}

type testClocks struct{ svc *billing.Service }

func (h testClocks) create(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in billing.ClockParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	c, err := h.svc.CreateClock(r.Context(), cl, auth.Must(r.Context()), in)
	return answer(w, http.StatusCreated, c, err)
}

func (h testClocks) get(w http.ResponseWriter, r *http.Request) error {
	c, err := h.svc.GetClock(r.Context(), auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, c, err)
}

func (h testClocks) advance(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var in billing.ClockParams
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	c, err := h.svc.AdvanceClock(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"), in)
	return answer(w, http.StatusOK, c, err)
}

func (h testClocks) list(w http.ResponseWriter, r *http.Request) error {
	page, err := pagination.Parse(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := h.svc.ListClocks(r.Context(), auth.Must(r.Context()), page)
	return answer(w, http.StatusOK, l, err)
}
