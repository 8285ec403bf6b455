package api

import (
	"net/http"
	"strings"
)

// Cross-origin requests. A browser may call only the routes a publishable
// key may call (confirming a payment intent with the customer's OTP), and
// only with a publishable key: those routes answer the CORS preflight for
// any origin and add Access-Control-Allow-Origin to answers to requests
// carrying a publishable key. No other route answers CORS, so a page can
// never make a browser send a secret key cross-origin and read the answer.
const (
	corsAllowHeaders  = "Authorization, Content-Type, Idempotency-Key"
	corsExposeHeaders = "Request-Id, Idempotent-Replayed, API-Version"
	corsMaxAge        = "600"
)

// handlePreflight registers the OPTIONS answer of a publishable-key route.
// pattern is the route's "METHOD /path".
func (s *Server) handlePreflight(pattern string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		return
	}
	s.mux.HandleFunc("OPTIONS "+path, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", method)
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		h.Add("Vary", "Origin")
		w.WriteHeader(http.StatusNoContent)
	})
}

// allowCrossOrigin lets a browser read the answer to a request made with a
// publishable key (the prefix is enough: an unknown key is still refused,
// and the page may read that refusal).
func allowCrossOrigin(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") == "" {
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !strings.HasPrefix(token, "pk_") {
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Expose-Headers", corsExposeHeaders)
	w.Header().Add("Vary", "Origin")
}
