// Package api holds payd's OpenAPI description (api/openapi.yaml), embedded so
// that the server can render its reference at /docs and tests can check it
// without looking for the file on disk.
package api

import _ "embed"

// OpenAPI is the bytes of api/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
