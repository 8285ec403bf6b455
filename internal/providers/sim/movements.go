package sim

import (
	"net/http"
)

// Payouts and refunds are the money a merchant sends out through the
// simulator. Their requests share the fields checked here, and both are
// found by the provider's id or by the merchant's reference.

// checkMovement checks the fields every payout and refund request carries:
// a reference (the merchant's, and its idempotency key), a positive amount
// and a callback URL.
func checkMovement(reference string, amount int64, callbackURL string) (answer, bool) {
	bad := func(msg, field string) (answer, bool) {
		return errAnswer(http.StatusBadRequest, "parameter_invalid", msg, field), false
	}
	switch {
	case reference == "" || len(reference) > 255:
		return bad("reference is required (at most 255 characters)", "reference")
	case amount <= 0:
		return bad("amount_minor must be a positive integer", "amount_minor")
	case !httpURL(callbackURL):
		return bad("callback_url must be an http(s) URL", "callback_url")
	}
	return answer{}, true
}

// movementView answers a status query about a payout or refund: key is the
// merchant's reference (byRef), or with byID also the provider's id (ids);
// what names the object in the 404 ("payout", "refund").
func movementView[M, V any](a *account, ids, byRef map[string]*M, key string, byID bool, view func(*M) V, what string) answer {
	a.mu.Lock()
	m := byRef[key]
	if m == nil && byID {
		m = ids[key]
	}
	var v V
	if m != nil {
		v = view(m)
	}
	a.mu.Unlock()
	if m == nil {
		return errAnswer(http.StatusNotFound, what+"_not_found", "no such "+what, "")
	}
	return answer{status: http.StatusOK, body: v}
}

// referenceParam reads the reference of a GET ...?reference= query.
func referenceParam(r *http.Request) (string, answer, bool) {
	ref := r.URL.Query().Get("reference")
	if ref == "" {
		return "", errAnswer(http.StatusBadRequest, "parameter_missing", "reference is required", "reference"), false
	}
	return ref, answer{}, true
}
