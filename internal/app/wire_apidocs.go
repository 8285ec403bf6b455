package app

import (
	"context"

	"github.com/payd/payd/internal/apidocs"
)

// wireAPIDocs mounts the API reference at /docs, rendered once (on its first request) from the
// embedded OpenAPI description; public, like /healthz.
func wireAPIDocs(ctx context.Context, m *Main) error {
	apidocs.New().Register(m.API.Mux())
	return nil
}
