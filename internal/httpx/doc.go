// Package httpx holds what payd's two HTTP fronts, the API and the merchant
// portal, share: the one mapping of a domain error to an HTTP status, the
// request-scoped id and logger, the per-principal slots of large uploads,
// and the check of text a request may carry. It imports no capability and
// neither front.
package httpx
