package app

import (
	"context"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/requestlog"
)

// wireRequestLog keeps the request log: every API request of a merchant's key goes to an
// in-memory buffer, and a worker writes the buffer in batches, outside any
// request's transaction. Every serving process runs its own flusher (Run
// starts it, workers or not), so API-only processes keep their requests too.
// PAYD_REQUEST_LOG=false keeps none (the list then answers what is stored).
func wireRequestLog(ctx context.Context, m *Main) error {
	log := requestlog.New(m.DB, requestlog.Config{Registry: m.Registry})
	m.requestLog = log
	api.RegisterRequestLogs(m.API, log)
	if m.Config.RequestLog {
		m.API.SetRequestLog(log)
	}
	return nil
}

// RequestLog is the request log (tests flush it to read their requests).
func (m *Main) RequestLog() *requestlog.Log { return m.requestLog }
