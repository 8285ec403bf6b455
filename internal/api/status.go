package api

import "github.com/payd/payd/internal/errs"

// HTTPStatus is the status code the API would answer err with, for non-JSON
// surfaces (the portal's HTML pages) that must agree with it. Unknown errors
// are 500.
func HTTPStatus(err error) int {
	e := errs.As(err)
	if e == nil {
		return 500
	}
	status, _ := statusAndType(e)
	return status
}
