package sim

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/payd/payd/internal/providers/protocol"
)

// account is one API key at one rail: its payments, payouts, callback
// secret and idempotency keys.
type account struct {
	provider string
	mu       sync.Mutex
	secret   string // callback signing secret, registered by the merchant
	payments map[string]*payment
	payRefs  map[string]*payment
	payouts  map[string]*payout
	poutRefs map[string]*payout
	refunds  map[string]*refund
	rfdRefs  map[string]*refund
	auths    map[string]*cardAuth // card authorisations by the gateway's id
	authRefs map[string]*cardAuth // and by the merchant's reference
	idem     map[string]*idemEntry
}

// idemEntry is one Idempotency-Key's request and answer.
type idemEntry struct {
	hash   [32]byte
	done   bool
	status int
	body   []byte
}

// maxBody bounds a request body.
const maxBody = 64 << 10

func (s *Sim) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /_sim/healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	})
	m.HandleFunc("GET /_sim/otp", s.serveOTP)
	m.HandleFunc("POST /_sim/disputes", s.serveDispute)
	m.HandleFunc("POST /_sim/disputes/{id}/close", s.serveCloseDispute)
	m.HandleFunc("PUT /{provider}/v1/callback_secret", s.api("callback_secret", true, s.registerSecret))
	m.HandleFunc("POST /{provider}/v1/payments", s.api("initiate", true, s.initiate))
	m.HandleFunc("GET /{provider}/v1/payments", s.api("status", false, s.paymentByReference))
	m.HandleFunc("GET /{provider}/v1/payments/{id}", s.api("status", false, s.paymentByID))
	m.HandleFunc("POST /{provider}/v1/payments/{id}/otp", s.api("otp", true, s.confirmOTP))
	m.HandleFunc("POST /{provider}/v1/payments/{id}/capture", s.api("payment_capture", true, s.capturePayment))
	m.HandleFunc("POST /{provider}/v1/payments/{id}/void", s.api("payment_void", true, s.voidPayment))
	m.HandleFunc("POST /{provider}/v1/payouts", s.api("payout", true, s.createPayout))
	m.HandleFunc("GET /{provider}/v1/payouts", s.api("payout_status", false, s.payoutByReference))
	m.HandleFunc("GET /{provider}/v1/payouts/{id}", s.api("payout_status", false, s.payoutByID))
	m.HandleFunc("POST /{provider}/v1/refunds", s.api("refund", true, s.createRefund))
	m.HandleFunc("GET /{provider}/v1/refunds", s.api("refund_status", false, s.refundByReference))
	m.HandleFunc("GET /{provider}/v1/refunds/{id}", s.api("refund_status", false, s.refundByID))
	m.HandleFunc("POST /{provider}/v1/card_authorizations", s.api("card_authorize", true, s.authorizeCard))
	m.HandleFunc("GET /{provider}/v1/card_authorizations", s.api("card_status", false, s.cardAuthByReference))
	m.HandleFunc("GET /{provider}/v1/card_authorizations/{id}", s.api("card_status", false, s.cardAuthByID))
	m.HandleFunc("POST /{provider}/v1/card_authorizations/{id}/capture", s.api("card_capture", true, s.captureCard))
	m.HandleFunc("POST /{provider}/v1/card_authorizations/{id}/void", s.api("card_void", true, s.voidCard))
	m.HandleFunc("POST /{provider}/v1/card_authorizations/{id}/refunds", s.api("card_refund", true, s.refundCard))
	m.HandleFunc("GET /{provider}/v1/reports/settlement", s.api("report", false, s.settlementReport))
	m.HandleFunc("GET /{provider}/pay/{id}", s.showPage)
	m.HandleFunc("POST /{provider}/pay/{id}", s.submitPage)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such endpoint", "")
	})
	s.mux = m
}

// answer is a handler's reply: a status and a JSON body; hang asks the
// wrapper to hang after storing it (the timeout knob).
type answer struct {
	status int
	body   any
	hang   bool
}

func errAnswer(status int, code, msg, field string) answer {
	return answer{status: status, body: protocol.ErrorBody{Error: protocol.ErrorDetail{Code: code, Message: msg, Field: field}}}
}

type apiHandler func(r *http.Request, a *account, body []byte) answer

// api wraps an API handler: latency, injected 500s, the rail, the API key,
// and (for POST and PUT) the Idempotency-Key: a repeated key answers the
// first answer; the same key with another request is 422; a key whose
// first request is still running is 409.
func (s *Sim) api(op string, mutates bool, h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		provider := r.PathValue("provider")
		if !knownRail(provider) {
			writeError(w, http.StatusNotFound, "not_found", "unknown rail "+provider, "")
			return
		}
		if d := s.cfg.Latency + s.cfg.ProviderLatency[provider]; d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		if s.cfg.Before != nil {
			s.cfg.Before(provider, op)
		}
		if s.failNow() {
			writeError(w, http.StatusInternalServerError, "internal_error", "the provider failed; nothing was done, retry under the same key", "")
			return
		}
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || strings.TrimSpace(key) == "" {
			writeError(w, http.StatusUnauthorized, "unauthorized", "send the API key as Authorization: Bearer <api_key>", "")
			return
		}
		a := s.account(provider, key)
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			writeError(w, http.StatusRequestEntityTooLarge, "request_too_large", "the body is over 64 KiB", "")
			return
		}
		if !mutates {
			ans := h(r, a, body)
			writeJSON(w, ans.status, ans.body)
			return
		}
		idem := r.Header.Get(protocol.HeaderIdempotencyKey)
		if idem == "" || len(idem) > 255 {
			writeError(w, http.StatusBadRequest, "idempotency_key_required", "send an Idempotency-Key header (at most 255 characters)", "")
			return
		}
		hash := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + "\n" + string(body)))
		a.mu.Lock()
		e := a.idem[idem]
		if e != nil {
			// Read the entry under the lock: the first request fills it in
			// when it ends.
			prev := *e
			a.mu.Unlock()
			switch {
			case prev.hash != hash:
				writeError(w, http.StatusUnprocessableEntity, "idempotency_key_reused", "this Idempotency-Key was used with another request", "")
			case !prev.done:
				writeError(w, http.StatusConflict, "idempotency_key_in_use", "the first request with this Idempotency-Key is still running", "")
			default:
				w.Header().Set(protocol.HeaderReplayed, "true")
				writeRaw(w, prev.status, prev.body)
			}
			return
		}
		e = &idemEntry{hash: hash}
		a.idem[idem] = e
		a.mu.Unlock()

		ans := h(r, a, body)
		raw, _ := json.Marshal(ans.body)
		a.mu.Lock()
		if ans.status >= 500 {
			delete(a.idem, idem) // nothing was done: the key may be used again
		} else {
			e.done, e.status, e.body = true, ans.status, raw
		}
		a.mu.Unlock()
		if d := s.cfg.AnswerDelay; d > 0 && answerDelayed[op] {
			if !sleepCtx(r.Context(), s.ctx, d) {
				return
			}
		}
		if ans.hang {
			t := time.NewTimer(s.cfg.HangFor)
			select {
			case <-r.Context().Done():
				t.Stop()
				return
			case <-s.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		writeRaw(w, ans.status, raw)
	}
}

// answerDelayed are the operations whose answers Config.AnswerDelay delays.
var answerDelayed = map[string]bool{"initiate": true, "otp": true, "payout": true, "refund": true,
	"card_authorize": true, "card_capture": true, "card_void": true, "card_refund": true}

// account returns (creating on first use) the account of an API key.
func (s *Sim) account(provider, key string) *account {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := accountKey{provider, key}
	a := s.accounts[k]
	if a == nil {
		a = &account{provider: provider, payments: map[string]*payment{}, payRefs: map[string]*payment{},
			payouts: map[string]*payout{}, poutRefs: map[string]*payout{}, refunds: map[string]*refund{}, rfdRefs: map[string]*refund{},
			auths: map[string]*cardAuth{}, authRefs: map[string]*cardAuth{}, idem: map[string]*idemEntry{}}
		s.accounts[k] = a
	}
	return a
}

// registerSecret stores the secret the account's callbacks are signed with.
func (s *Sim) registerSecret(r *http.Request, a *account, body []byte) answer {
	var req protocol.CallbackSecretRequest
	if ans, ok := decode(body, &req); !ok {
		return ans
	}
	if req.Secret == "" || len(req.Secret) > 1024 {
		return errAnswer(http.StatusBadRequest, "parameter_invalid", "secret must be 1 to 1024 characters", "secret")
	}
	a.mu.Lock()
	a.secret = req.Secret
	a.mu.Unlock()
	return answer{status: http.StatusOK, body: map[string]any{"object": "callback_secret", "registered": true}}
}

// decode reads a JSON body strictly (unknown fields are an error naming them).
func decode(body []byte, v any) (answer, bool) {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := "the body is not valid JSON"
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return errAnswer(http.StatusBadRequest, "parameter_invalid", ute.Field+" has the wrong type", ute.Field), false
		}
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return errAnswer(http.StatusBadRequest, "parameter_unknown", "unknown field "+f, f), false
		}
		return errAnswer(http.StatusBadRequest, "invalid_json", msg, ""), false
	}
	return answer{}, true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	raw, _ := json.Marshal(v)
	writeRaw(w, status, raw)
}

func writeRaw(w http.ResponseWriter, status int, raw []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(raw)
	w.Write([]byte("\n"))
}

func writeError(w http.ResponseWriter, status int, code, msg, field string) {
	writeJSON(w, status, protocol.ErrorBody{Error: protocol.ErrorDetail{Code: code, Message: msg, Field: field}})
}

// sleepCtx waits d unless either context ends first (then false).
func sleepCtx(a, b context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a.Done():
		return false
	case <-b.Done():
		return false
	case <-t.C:
		return true
	}
}
