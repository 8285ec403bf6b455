package api

import (
	"net/http"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/requestlog"
)

// requestLogsRoute is the route that reads the request log (and is not
// itself recorded in it).
const requestLogsRoute = "GET /v1/request_logs"

// RegisterRequestLogs mounts GET /v1/request_logs: the recent API requests
// of the key's merchant in the key's mode, newest first.
func RegisterRequestLogs(s *Server, log *requestlog.Log) {
	s.Handle(requestLogsRoute, func(w http.ResponseWriter, r *http.Request) error {
		page, keyID, err := requestlog.ParseQuery(r.URL.Query())
		if err != nil {
			return err
		}
		p := auth.Must(r.Context())
		list, err := log.List(r.Context(), p.MerchantID, p.Livemode, keyID, page)
		if err != nil {
			return err
		}
		WriteJSON(w, http.StatusOK, list)
		return nil
	})
}
