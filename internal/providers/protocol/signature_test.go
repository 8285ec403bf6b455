package protocol

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"pevt_1","type":"payment.succeeded"}`)
	h := Sign("s3cret-0123456789", now, "pevt_1", body)
	if !strings.HasPrefix(h, "t=1800000000,v1=") || len(h) != len("t=1800000000,v1=")+64 {
		t.Fatalf("header %q", h)
	}
	cases := []struct {
		name, header, secret, event string
		body                        []byte
		at                          time.Time
		want                        error
	}{
		{"good", h, "s3cret-0123456789", "pevt_1", body, now, nil},
		{"within tolerance", h, "s3cret-0123456789", "pevt_1", body, now.Add(4 * time.Minute), nil},
		{"rotated secret", h + ",v1=00", "s3cret-0123456789", "pevt_1", body, now, nil},
		{"wrong secret", h, "other", "pevt_1", body, now, ErrSignatureMismatch},
		{"other event id", h, "s3cret-0123456789", "pevt_2", body, now, ErrSignatureMismatch},
		{"body changed", h, "s3cret-0123456789", "pevt_1", append([]byte(nil), append(body, ' ')...), now, ErrSignatureMismatch},
		{"too old", h, "s3cret-0123456789", "pevt_1", body, now.Add(6 * time.Minute), ErrSignatureTimestamp},
		{"from the future", h, "s3cret-0123456789", "pevt_1", body, now.Add(-6 * time.Minute), ErrSignatureTimestamp},
		{"empty", "", "s3cret-0123456789", "pevt_1", body, now, ErrSignatureMissing},
		{"no v1", "t=1800000000", "s3cret-0123456789", "pevt_1", body, now, ErrSignatureMissing},
		{"no event id", h, "s3cret-0123456789", "", body, now, ErrSignatureMissing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := Verify(c.header, c.secret, c.event, c.body, c.at); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

// FuzzVerify: no header makes Verify panic or accept without the secret.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	f.Add(Sign("k-0123456789abcdef", now, "pevt_1", []byte("{}")), "pevt_1", []byte("{}"))
	f.Add("t=1800000000,v1=", "pevt_1", []byte(""))
	f.Add("t=-1,v1=zz,v1=,=,,", "e", []byte("x"))
	f.Add("v1=abc,t=99999999999999999999", "e", []byte("x"))
	f.Fuzz(func(t *testing.T, header, event string, body []byte) {
		err := Verify(header, "k-0123456789abcdef", event, body, now)
		if err == nil && !strings.Contains(header, Sign("k-0123456789abcdef", now, event, body)[len("t=1800000000,"):]) {
			// Accepted: the header must carry the right MAC for some t.
			ok := false
			for _, part := range strings.Split(header, ",") {
				if strings.HasPrefix(strings.TrimSpace(part), "t=") {
					ts := strings.TrimPrefix(strings.TrimSpace(part), "t=")
					if strings.Contains(header, mac("k-0123456789abcdef", ts, event, body)) {
						ok = true
					}
				}
			}
			if !ok {
				t.Fatalf("accepted %q without its MAC", header)
			}
		}
	})
}
