//go:build tools

package tools

import (
	_ "github.com/Rhymond/go-money"
	_ "github.com/adrg/strutil"
	_ "github.com/chromedp/chromedp"
	_ "github.com/getkin/kin-openapi/openapi3"
	_ "github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "golang.org/x/crypto/argon2"
	_ "golang.org/x/text/unicode/norm"
	_ "golang.org/x/time/rate"
	_ "gopkg.in/yaml.v3"
	_ "modernc.org/sqlite"
)
