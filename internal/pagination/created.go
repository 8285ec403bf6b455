package pagination

import (
	"net/url"
	"strconv"
	"time"

	"github.com/payd/payd/internal/errs"
)

// MaxUnixSeconds is 9999-12-31T23:59:59Z, the last second RFC 3339 can write.
const MaxUnixSeconds = 253402300799

// ParseCreated reads a list's created[gte], created[gt], created[lte] and
// created[lt], each an RFC 3339 time or unix seconds, into one half-open
// range: from <= created_at < until (nil where unbounded). Times compare at
// second precision, as created_at is shown: created[lte] with an object's
// created_at includes that object. A bad value is a 400 naming its param.
func ParseCreated(q url.Values) (from, until *time.Time, err error) {
	bounds := []struct {
		param string
		lower bool // a lower bound (from) or an upper one (until)
		shift time.Duration
	}{
		{"created[gte]", true, 0}, {"created[gt]", true, time.Second},
		{"created[lte]", false, time.Second}, {"created[lt]", false, 0},
	}
	for _, b := range bounds {
		v, ok := q[b.param]
		if !ok {
			continue
		}
		if len(v) != 1 {
			return nil, nil, errs.Invalid(b.param, "parameter_invalid", "%s may be given once", b.param)
		}
		t, err := ParseTime(v[0])
		if err != nil {
			return nil, nil, errs.Invalid(b.param, "parameter_invalid", "%s must be an RFC 3339 time (2026-01-02T15:04:05Z) or unix seconds", b.param)
		}
		t = t.Truncate(time.Second).Add(b.shift)
		switch {
		case b.lower && (from == nil || t.After(*from)):
			from = &t
		case !b.lower && (until == nil || t.Before(*until)):
			until = &t
		}
	}
	return from, until, nil
}

// ParseTime reads a list filter's time: unix seconds (digits only) or RFC
// 3339 with any offset.
func ParseTime(s string) (time.Time, error) {
	if s != "" && allDigits(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n > MaxUnixSeconds {
			return time.Time{}, errs.Invalid("", "parameter_invalid", "unix seconds out of range")
		}
		return time.Unix(n, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
