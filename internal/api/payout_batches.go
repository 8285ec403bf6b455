package api

import (
	"errors"
	"github.com/payd/payd/internal/store"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/payouts"
)

func registerPayoutBatches(s *Server, svc *payouts.Service) {
	h := batchHandlers{svc: svc}
	s.HandleClaimed("POST /v1/payouts/bulk", h.create, MaxBody(payouts.MaxBatchBytes), RequireIdempotencyKey(), Upload())
	s.Handle("GET /v1/payouts/bulk", h.list)
	s.Handle("GET /v1/payouts/bulk/{id}", h.get)
	s.HandleClaimed("POST /v1/payouts/bulk/{id}/approve", h.approve)
	s.HandleClaimed("POST /v1/payouts/bulk/{id}/cancel", h.cancel)
}

type batchHandlers struct{ svc *payouts.Service }

// create picks the variant by the request's shape:
// JSON items or text/csv → variant A, 202; JSON rows or multipart/form-data
// → variant B, 201. A CSV is parsed as it streams from the spooled upload;
// only its parsed rows are held. A JSON body is read whole (at most 10 MB,
// and a key has at most MaxUploadsPerKey large uploads in flight).
func (h batchHandlers) create(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	pr := auth.Must(r.Context())
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var req *payouts.BatchRequest
	var err error
	switch {
	case IsJSON(r):
		var body []byte
		if body, err = ReadBody(r); err != nil {
			return err
		}
		req, err = payouts.ParseBatchJSON(body, pr.Livemode)
	case mt == "text/csv":
		req, err = payouts.ReadItemsCSV(BodyReader(r), pr.Livemode)
	case mt == "multipart/form-data":
		req, err = parseRowsUpload(BodyReader(r), params["boundary"], pr.Livemode)
	default:
		return &errs.Error{Kind: errs.KindUnsupportedMedia, Code: "unsupported_media_type",
			Message: "Content-Type must be application/json (items or rows), text/csv (items) or multipart/form-data (a CSV of rows)"}
	}
	if err != nil {
		return err
	}
	b, err := h.svc.CreateBatch(r.Context(), cl, pr, req)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if b.Variant == payouts.VariantItems {
		status = http.StatusAccepted
	}
	WriteJSON(w, status, b)
	return nil
}

// parseRowsUpload reads a multipart upload as it streams: the part file (the
// CSV, parsed as it is read) and the fields currency and description, in any
// order.
func parseRowsUpload(body io.Reader, boundary string, livemode bool) (*payouts.BatchRequest, error) {
	if boundary == "" {
		return nil, errs.Invalid("Content-Type", "parameter_invalid", "multipart/form-data needs a boundary")
	}
	mr := multipart.NewReader(body, boundary)
	var file *payouts.BatchRequest
	var fileErr error
	var currency, description string
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, errs.Invalid("file", "multipart_invalid", "the multipart body cannot be read")
		}
		name := part.FormName()
		if seen[name] {
			return nil, errs.Invalid(name, "parameter_invalid", "%s is given twice", name)
		}
		seen[name] = true
		switch name {
		case "file":
			file, fileErr = payouts.ReadRowsUpload(payouts.LimitUpload(part, payouts.MaxBatchBytes), livemode)
			if e := errs.As(fileErr); e != nil && (e.Kind == errs.KindTooLarge || e.Code == "body_unreadable") {
				return nil, fileErr
			}
			continue
		case "currency", "description":
		default:
			return nil, errs.Invalid(name, "parameter_unknown", "unknown form field: %s (expected file, currency, description)", name)
		}
		const limit = 4096
		data, err := io.ReadAll(io.LimitReader(part, limit+1))
		if err != nil {
			return nil, errs.Invalid(name, "multipart_invalid", "the part %s cannot be read", name)
		}
		if len(data) > limit {
			return nil, &errs.Error{Kind: errs.KindTooLarge, Code: "request_too_large", Param: name, Message: "the part " + name + " is too large"}
		}
		if name == "currency" {
			currency = string(data)
		} else {
			description = string(data)
		}
	}
	if !seen["file"] {
		return nil, errs.Missing("file")
	}
	return payouts.FinishRowsUpload(file, fileErr, currency, description)
}

func (h batchHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	page, err := pagination.Parse(q)
	if err != nil {
		return err
	}
	status := payouts.BatchStatus(q.Get("status"))
	switch status {
	case "", payouts.BatchPendingApproval, payouts.BatchProcessing, payouts.BatchCompleted, payouts.BatchCanceled:
	default:
		return errs.Invalid("status", "parameter_invalid", "status must be pending_approval, processing, completed or canceled")
	}
	items, more, err := h.svc.ListBatches(r.Context(), auth.Must(r.Context()), status, page)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, pagination.NewList(items, more))
	return nil
}

func (h batchHandlers) get(w http.ResponseWriter, r *http.Request) error {
	b, err := h.svc.GetBatch(r.Context(), auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, b, err)
}

func (h batchHandlers) approve(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var none struct{}
	if err := DecodeOptionalJSON(r, &none); err != nil {
		return err
	}
	b, err := h.svc.ApproveBatch(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, b, err)
}

func (h batchHandlers) cancel(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var none struct{}
	if err := DecodeOptionalJSON(r, &none); err != nil {
		return err
	}
	b, err := h.svc.CancelBatch(r.Context(), cl, auth.Must(r.Context()), r.PathValue("id"))
	return answer(w, http.StatusOK, b, err)
}
