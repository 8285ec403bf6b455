// Package webhook verifies the webhook deliveries payd sends, for merchants
// to import in their receivers.
//
// Every delivery is an HTTP POST whose body is the event as JSON, with three
// headers:
//
//	Service-Event-Id:   evt_...
//	Service-Event-Type: payment_intent.succeeded
//	Service-Signature:  t=<unix seconds>,v1=<hex>
//
// v1 is the lowercase hex HMAC-SHA256, keyed with the endpoint's signing
// secret (the whole "whsec_..." string, as bytes), of the string
// "{t}.{event_id}.{raw_body}". Verify recomputes it over the raw body bytes,
// compares in constant time, and refuses a timestamp further than the
// tolerance (default five minutes) from now, so a captured delivery cannot be
// replayed later. Answer 400 when verification fails and 2xx within five
// seconds when it succeeds; anything else is retried.
//
// Deliveries are at least once and in no promised order: the same event can
// arrive more than once (a retry after a timeout, a manual redelivery).
// De-duplicate on Delivery.EventID, which is the same on every delivery of one
// event; Dedup is a small in-memory helper for that.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The delivery headers.
const (
	HeaderEventID   = "Service-Event-Id"
	HeaderEventType = "Service-Event-Type"
	HeaderSignature = "Service-Signature"
)

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock.
const DefaultTolerance = 5 * time.Minute

// MaxBodyBytes bounds what VerifyRequest reads from a request body.
const MaxBodyBytes = 1 << 20

// The verification errors; test them with errors.Is. All of them mean the
// receiver should answer 400 and ignore the request.
var (
	// ErrMissingHeader: Service-Signature or Service-Event-Id is absent.
	ErrMissingHeader = errors.New("webhook: missing signature or event id header")
	// ErrMalformedHeader: Service-Signature is not "t=<unix>,v1=<hex>".
	ErrMalformedHeader = errors.New("webhook: malformed Service-Signature header")
	// ErrNoValidSignature: no v1 signature matches the secret and body.
	ErrNoValidSignature = errors.New("webhook: no signature matches the expected one")
	// ErrTimestampOutsideTolerance: t is too old or too far in the future.
	ErrTimestampOutsideTolerance = errors.New("webhook: timestamp outside the tolerance")
	// ErrEventMismatch: the body is not an event, or its id differs from Service-Event-Id.
	ErrEventMismatch = errors.New("webhook: body does not hold the event named by Service-Event-Id")
	// ErrBodyTooLarge: VerifyRequest read more than MaxBodyBytes.
	ErrBodyTooLarge = errors.New("webhook: request body too large")
)

// Signature is a parsed Service-Signature header.
type Signature struct {
	Timestamp time.Time
	// V1 holds every v1 value of the header (more than one while a secret is
	// being rotated), decoded from hex.
	V1 [][]byte
}

// ParseSignature parses "t=<unix seconds>,v1=<hex>[,v1=<hex>...]". Unknown
// schemes (a future v2) are ignored.
func ParseSignature(header string) (Signature, error) {
	var sig Signature
	if strings.TrimSpace(header) == "" {
		return sig, ErrMissingHeader
	}
	haveT := false
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Signature{}, fmt.Errorf("%w: %q is not key=value", ErrMalformedHeader, part)
		}
		switch k {
		case "t":
			if haveT {
				return Signature{}, fmt.Errorf("%w: t appears twice", ErrMalformedHeader)
			}
			secs, err := strconv.ParseInt(v, 10, 64)
			if err != nil || secs <= 0 {
				return Signature{}, fmt.Errorf("%w: t=%q is not a unix time", ErrMalformedHeader, v)
			}
			sig.Timestamp = time.Unix(secs, 0).UTC()
			haveT = true
		case "v1":
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != sha256.Size {
				return Signature{}, fmt.Errorf("%w: v1 is not 64 hex characters", ErrMalformedHeader)
			}
			sig.V1 = append(sig.V1, b)
		}
	}
	if !haveT {
		return Signature{}, fmt.Errorf("%w: no t=", ErrMalformedHeader)
	}
	if len(sig.V1) == 0 {
		return Signature{}, fmt.Errorf("%w: no v1=", ErrMalformedHeader)
	}
	return sig, nil
}

// ComputeSignature returns the lowercase hex v1 signature of a delivery:
// HMAC-SHA256 keyed with secret over "{t}.{eventID}.{body}".
func ComputeSignature(secret string, t time.Time, eventID string, body []byte) string {
	return hex.EncodeToString(mac(secret, t.Unix(), eventID, body))
}

func mac(secret string, unix int64, eventID string, body []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	var buf [20]byte
	h.Write(strconv.AppendInt(buf[:0], unix, 10))
	h.Write([]byte{'.'})
	h.Write([]byte(eventID))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// SignatureHeader returns the Service-Signature value for a delivery sent at
// t: "t=<unix>,v1=<hex>". payd signs with it; receivers' tests can too.
func SignatureHeader(secret string, t time.Time, eventID string, body []byte) string {
	return SignatureHeaderSecrets([]string{secret}, t, eventID, body)
}

// SignatureHeaderSecrets is SignatureHeader with one v1 value per secret, in
// order: "t=<unix>,v1=<hex>,v1=<hex>". payd signs with the new and the old
// secret while a rotated endpoint's old secret has not expired, so a
// receiver holding either verifies.
func SignatureHeaderSecrets(secrets []string, t time.Time, eventID string, body []byte) string {
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(strconv.FormatInt(t.Unix(), 10))
	for _, secret := range secrets {
		b.WriteString(",v1=")
		b.WriteString(ComputeSignature(secret, t, eventID, body))
	}
	return b.String()
}

// Event is a delivered event: the envelope payd sends. Data.ID is the id of
// the object the event is about and Data.Object the object itself.
type Event struct {
	ID        string    `json:"id"`
	Object    string    `json:"object"` // "event"
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	Livemode  bool      `json:"livemode"`
	Data      struct {
		ID     string          `json:"id"`
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// Delivery is a verified delivery.
type Delivery struct {
	// EventID is the de-duplication key: every delivery of one event carries
	// the same id. Record it when you have processed the event and ignore a
	// delivery whose EventID you have already recorded (answering 2xx, so it
	// is not retried).
	EventID   string
	EventType string
	// SignedAt is the signature's timestamp (when this attempt was sent).
	SignedAt time.Time
	Event    Event
}

// Verifier checks deliveries. The zero value is not usable: set Secrets.
type Verifier struct {
	// Secrets are the endpoint's signing secrets ("whsec_..."); a delivery
	// passes when any of them produced a v1 signature. Keep the old secret
	// here for a while when you roll it.
	Secrets []string
	// Tolerance is the largest accepted distance between the signature's
	// timestamp and Now; zero means DefaultTolerance, negative disables the
	// check (not recommended).
	Tolerance time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Verify checks one delivery given its headers and raw body bytes (exactly as
// received: do not re-encode the JSON before verifying).
func (v *Verifier) Verify(header http.Header, body []byte) (Delivery, error) {
	eventID := header.Get(HeaderEventID)
	raw := header.Get(HeaderSignature)
	if eventID == "" || raw == "" {
		return Delivery{}, ErrMissingHeader
	}
	sig, err := ParseSignature(raw)
	if err != nil {
		return Delivery{}, err
	}
	if len(v.Secrets) == 0 {
		return Delivery{}, errors.New("webhook: Verifier has no secret")
	}
	tol := v.Tolerance
	if tol == 0 {
		tol = DefaultTolerance
	}
	if tol > 0 {
		now := time.Now()
		if v.Now != nil {
			now = v.Now()
		}
		if d := now.Sub(sig.Timestamp); d > tol || d < -tol {
			return Delivery{}, fmt.Errorf("%w: signed at %s, %s from now", ErrTimestampOutsideTolerance, sig.Timestamp.Format(time.RFC3339), d.Round(time.Second))
		}
	}
	matched := false
	for _, secret := range v.Secrets {
		want := mac(secret, sig.Timestamp.Unix(), eventID, body)
		for _, got := range sig.V1 {
			// hmac.Equal is constant-time for equal lengths; every v1 is 32 bytes.
			if hmac.Equal(want, got) {
				matched = true
			}
		}
	}
	if !matched {
		return Delivery{}, ErrNoValidSignature
	}
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID != eventID {
		return Delivery{}, ErrEventMismatch
	}
	return Delivery{EventID: eventID, EventType: header.Get(HeaderEventType), SignedAt: sig.Timestamp, Event: ev}, nil
}

// Verify checks a delivery with one secret and the default tolerance.
func Verify(secret string, header http.Header, body []byte) (Delivery, error) {
	v := Verifier{Secrets: []string{secret}}
	return v.Verify(header, body)
}

// VerifyRequest reads r's body (at most MaxBodyBytes) and verifies it with
// one secret and the default tolerance. It returns the body too, since it has
// been consumed.
func VerifyRequest(r *http.Request, secret string) (Delivery, []byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return Delivery{}, nil, err
	}
	if len(body) > MaxBodyBytes {
		return Delivery{}, nil, ErrBodyTooLarge
	}
	d, err := Verify(secret, r.Header, body)
	return d, body, err
}
