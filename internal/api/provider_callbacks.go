package api

import (
	"net/http"

	"github.com/payd/payd/internal/callbacks"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
)

// maxCallback bounds a provider callback's body.
const maxCallback = 64 << 10

// RegisterProviderCallbacks mounts POST /providers/{provider}/callbacks: a
// public route (no API key) whose callers are authenticated by the
// Provider-Signature of docs/providers.md.
func RegisterProviderCallbacks(s *Server, svc *callbacks.Service) {
	s.Handle("POST /providers/{provider}/callbacks", func(w http.ResponseWriter, r *http.Request) error {
		// An unknown provider is refused before anything (a body read, a
		// metric label) is spent on it.
		if !providers.Known(r.PathValue("provider"), providers.All) {
			return errs.NotFound("provider", r.PathValue("provider"))
		}
		body, err := ReadBody(r)
		if err != nil {
			return err
		}
		receipt, err := svc.Receive(r.Context(), callbacks.Delivery{
			Provider:   r.PathValue("provider"),
			MerchantID: r.URL.Query().Get("merchant"),
			EventID:    r.Header.Get(protocol.HeaderEventID),
			Signature:  r.Header.Get(protocol.HeaderSignature),
			Body:       body,
		})
		if err != nil {
			return err
		}
		WriteJSON(w, http.StatusOK, receipt)
		return nil
	}, Public(), NoIdempotency(), MaxBody(maxCallback))
}
