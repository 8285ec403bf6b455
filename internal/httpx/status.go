package httpx

import (
	"net/http"

	"github.com/payd/payd/internal/errs"
)

// StatusAndType is the one place where a domain error kind becomes an HTTP
// status and an error type.
func StatusAndType(e *errs.Error) (int, string) {
	status, typ := http.StatusInternalServerError, "api_error"
	switch e.Kind {
	case errs.KindInvalid:
		status, typ = http.StatusBadRequest, "invalid_request_error"
	case errs.KindUnauthenticated:
		status, typ = http.StatusUnauthorized, "authentication_error"
	case errs.KindPermission:
		status, typ = http.StatusForbidden, "permission_error"
	case errs.KindNotFound:
		status, typ = http.StatusNotFound, "invalid_request_error"
	case errs.KindConflict:
		status, typ = http.StatusConflict, "invalid_request_error"
	case errs.KindTooLarge:
		status, typ = http.StatusRequestEntityTooLarge, "invalid_request_error"
	case errs.KindUnsupportedMedia:
		status, typ = http.StatusUnsupportedMediaType, "invalid_request_error"
	case errs.KindIdempotency:
		status, typ = http.StatusConflict, "idempotency_error"
	case errs.KindRateLimited:
		status, typ = http.StatusTooManyRequests, "rate_limit_error"
	case errs.KindPaymentRequired:
		status, typ = http.StatusPaymentRequired, "invalid_request_error"
	case errs.KindProvider:
		status, typ = http.StatusBadGateway, "provider_error"
	case errs.KindProviderTimeout:
		status, typ = http.StatusGatewayTimeout, "provider_error"
	case errs.KindUnavailable:
		status, typ = http.StatusServiceUnavailable, "provider_error"
	}
	if e.Status != 0 {
		status = e.Status
	}
	return status, typ
}

// HTTPStatus is the status code the API would answer err with, for non-JSON
// surfaces (the portal's HTML pages) that must agree with it. Unknown errors
// are 500.
func HTTPStatus(err error) int {
	e := errs.As(err)
	if e == nil {
		return http.StatusInternalServerError
	}
	status, _ := StatusAndType(e)
	return status
}
