package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Signature errors, returned by Verify. None of them carries the secret or
// the expected signature.
var (
	ErrSignatureMissing   = errors.New("callback signature header missing or malformed")
	ErrSignatureMismatch  = errors.New("callback signature does not match")
	ErrSignatureTimestamp = errors.New("callback signature timestamp outside the tolerance")
)

// Tolerance is how far a callback's timestamp may be from the receiver's
// clock; an older one is refused, so a captured callback cannot be replayed
// later (a replay within it is caught by the event id).
const Tolerance = 5 * time.Minute

// Sign returns the Provider-Signature header of a callback: "t=<unix
// seconds>,v1=<hex>", where v1 is the lowercase hex HMAC-SHA256 keyed with
// the callback secret (its bytes as written) over "{t}.{event_id}.{body}",
// body being the raw bytes posted. It is the scheme of payd's own webhooks,
// so one verifier serves both.
func Sign(secret string, t time.Time, eventID string, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, eventID, body)
}

func mac(secret, ts, eventID string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write([]byte(eventID))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a Provider-Signature header against the callback secret,
// the event id header and the raw body, in constant time. Several v1 values
// may be present (a provider rotating its secret signs with both); one match
// suffices. The timestamp must be within Tolerance of now.
func Verify(header, secret, eventID string, body []byte, now time.Time) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 || eventID == "" {
		return ErrSignatureMissing
	}
	want := []byte(mac(secret, ts, eventID, body))
	ok := false
	for _, s := range sigs {
		if hmac.Equal([]byte(s), want) {
			ok = true
		}
	}
	if !ok {
		return ErrSignatureMismatch
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return ErrSignatureTimestamp
	}
	return nil
}
