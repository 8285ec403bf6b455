package api

import (
	"github.com/payd/payd/internal/store"
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/banking"
	"github.com/payd/payd/internal/banking/iso20022"
	"github.com/payd/payd/internal/pagination"
)

// RegisterTransfers mounts the bank transfer endpoints (/banking/v1). Bodies
// are ISO 20022 XML or JSON up to banking.MaxBodyBytes; they are never
// logged.
func RegisterTransfers(s *Server, svc *banking.Service) {
	h := &transfers{svc: svc}
	s.HandleClaimed("POST /banking/v1/transfers", h.create, MaxBody(banking.MaxBodyBytes))
	s.Handle("GET /banking/v1/transfers", h.list)
	s.Handle("GET /banking/v1/transfers/{uetr}", h.get)
	s.HandleClaimed("POST /banking/v1/transfers/{uetr}/return", h.returnOrCancel(banking.KindReturn), MaxBody(banking.MaxBodyBytes))
	s.HandleClaimed("POST /banking/v1/transfers/{uetr}/cancel", h.returnOrCancel(banking.KindCancel), MaxBody(banking.MaxBodyBytes))
	s.HandleClaimed("POST /banking/v1/transfers/{uetr}/review", h.review)
}

type transfers struct{ svc *banking.Service }

// create answers a pacs.008 with a pacs.002 in the request's format.
func (h *transfers) create(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	p := auth.Must(r.Context())
	caller, err := h.svc.Caller(r.Context(), p)
	if err != nil {
		return err
	}
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	format, msg, schemaErr, err := banking.ReadTransferMessage(r.Header.Get("Content-Type"), body)
	if err != nil {
		return err
	}
	sub, err := h.svc.Submit(r.Context(), cl, p, caller, msg, schemaErr)
	if err != nil {
		return err
	}
	return writeReport(w, format, sub.HTTPStatus(), sub.Report)
}

// writeReport encodes a pacs.002 as XML or as its JSON mirror.
func writeReport(w http.ResponseWriter, format banking.Format, status int, rep iso20022.StatusReport) error {
	var out []byte
	var err error
	if format == banking.FormatXML {
		out, err = iso20022.EncodeStatusReport(rep)
		w.Header().Set("Content-Type", "application/xml")
	} else {
		out, err = iso20022.EncodeStatusReportJSON(rep)
		w.Header().Set("Content-Type", "application/json")
	}
	if err != nil {
		w.Header().Del("Content-Type")
		return err
	}
	w.WriteHeader(status)
	w.Write(out)
	return nil
}

// get answers the transfer row, or with Accept: application/xml its current
// pacs.002.
func (h *transfers) get(w http.ResponseWriter, r *http.Request) error {
	t, err := h.svc.Get(r.Context(), auth.Must(r.Context()), r.PathValue("uetr"))
	if err != nil {
		return err
	}
	if banking.AcceptsXML(r.Header.Get("Accept")) {
		return writeReport(w, banking.FormatXML, http.StatusOK, t.Report(banking.NewReportID(), h.svc.Now()))
	}
	WriteJSON(w, http.StatusOK, t.Row())
	return nil
}

func (h *transfers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	page, err := pagination.Parse(q)
	if err != nil {
		return err
	}
	ts, more, err := h.svc.List(r.Context(), auth.Must(r.Context()), banking.ListParams{Page: page, Status: q.Get("status"), Role: q.Get("role")})
	if err != nil {
		return err
	}
	rows := make([]banking.TransferRow, 0, len(ts))
	for _, t := range ts {
		rows = append(rows, t.Row())
	}
	WriteJSON(w, http.StatusOK, pagination.NewList(rows, more))
	return nil
}

// returnOrCancel takes the JSON body, a pacs.004 (return) or a camt.056
// (cancel), and answers the updated transfer row.
func (h *transfers) returnOrCancel(kind string) ClaimedFunc {
	return func(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
		p := auth.Must(r.Context())
		if _, err := h.svc.Caller(r.Context(), p); err != nil {
			return err
		}
		body, err := ReadBody(r)
		if err != nil {
			return err
		}
		req, err := banking.ReadReturnRequest(r.Header.Get("Content-Type"), body)
		if err != nil {
			return err
		}
		t, err := h.svc.Return(r.Context(), cl, p, r.PathValue("uetr"), kind, req)
		if err != nil {
			return err
		}
		WriteJSON(w, http.StatusOK, t.Row())
		return nil
	}
}

type reviewRequest struct {
	Decision string `json:"decision"`
	Note     string `json:"note"`
}

// review decides a held (ACWP) transfer and answers the updated row.
func (h *transfers) review(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	if _, err := h.svc.Caller(r.Context(), auth.Must(r.Context())); err != nil {
		return err
	}
	var req reviewRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	t, err := h.svc.Review(r.Context(), cl, auth.Must(r.Context()), r.PathValue("uetr"), banking.ReviewParams{Decision: req.Decision, Note: req.Note})
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, t.Row())
	return nil
}
