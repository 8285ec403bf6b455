package app

import (
	"context"

	"github.com/payd/payd/internal/apidocs"
)

// The API reference at /docs, rendered once from the embedded OpenAPI
// description; public, like /healthz.
func init() {
	wirers = append(wirers, func(ctx context.Context, m *Main) error {
		ref, err := apidocs.New()
		if err != nil {
			return err
		}
		ref.Register(m.API.Mux())
		return nil
	})
}
