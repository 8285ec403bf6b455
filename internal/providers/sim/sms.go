package sim

import (
	"crypto/rand"
	"math/big"
	"net/http"
	"strings"
	"time"
)

// sms is a code "sent by SMS".
type sms struct {
	digits string // the number's digits, as the merchant sent it
	code   string
	at     time.Time
}

// maxSMS bounds the SMS log; older codes are forgotten.
const maxSMS = 100_000

// sendSMS makes a code and "sends" it to number: it is kept for
// GET /_sim/otp, the simulator's stand-in for the customer's phone.
func (s *Sim) sendSMS(number string, now time.Time) (string, time.Time) {
	n, _ := rand.Int(rand.Reader, big.NewInt(1_000_000))
	code := leftPad(n.String(), otpLength)
	s.mu.Lock()
	if len(s.sms) >= maxSMS {
		s.sms = append(s.sms[:0], s.sms[len(s.sms)/2:]...)
	}
	s.sms = append(s.sms, sms{digits: strings.TrimPrefix(number, "+"), code: code, at: now})
	s.mu.Unlock()
	return code, now
}

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

// sameNumber reports whether two numbers are the same phone: equal digits,
// or one the other without its country prefix (1 to 3 digits), as when
// bank_a is sent the bare local number and the customer is asked by E.164.
func sameNumber(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) < len(b) {
		a, b = b, a
	}
	d := len(a) - len(b)
	return d >= 1 && d <= 3 && len(b) >= 6 && strings.HasSuffix(a, b)
}

// serveOTP handles GET /_sim/otp?msisdn=...: the latest code sent to that
// number, found by its E.164 or its bare local form.
func (s *Sim) serveOTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("msisdn")
	// An unencoded "+" in a query string arrives as a space.
	if strings.HasPrefix(q, " ") {
		q = "+" + strings.TrimSpace(q)
	}
	q = strings.TrimSpace(q)
	d := strings.TrimPrefix(q, "+")
	if !digitsOnly(d) {
		writeError(w, http.StatusBadRequest, "parameter_invalid", "msisdn must be a phone number (E.164 or the bare local number)", "msisdn")
		return
	}
	if code, ok := s.LatestOTP(q); ok {
		writeJSON(w, http.StatusOK, map[string]string{"msisdn": q, "otp": code})
		return
	}
	writeError(w, http.StatusNotFound, "otp_not_found", "no code was sent to this number", "msisdn")
}

// LatestOTP returns the latest code sent to a number (E.164 or bare local
// form), as GET /_sim/otp does, for in-process callers (benchmarks).
func (s *Sim) LatestOTP(number string) (string, bool) {
	d := strings.TrimPrefix(strings.TrimSpace(number), "+")
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.sms) - 1; i >= 0; i-- {
		if sameNumber(s.sms[i].digits, d) {
			return s.sms[i].code, true
		}
	}
	return "", false
}
