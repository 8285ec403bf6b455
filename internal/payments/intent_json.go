package payments

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// AppendJSON appends the intent as encoding/json with HTML escaping off
// encodes it (json.Encoder with SetEscapeHTML(false), without the trailing
// newline), byte for byte, without its reflection: the API answers an
// intent on every read. TestIntentAppendJSONMatchesEncodingJSON holds it to
// that; a field added to Intent must be added here too (the test fails
// until it is).
func (in Intent) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = appendString(b, in.ID)
	b = append(b, `,"object":`...)
	b = appendString(b, in.Object)
	b = append(b, `,"status":`...)
	b = appendString(b, string(in.Status))
	b = append(b, `,"amount_minor":`...)
	b = strconv.AppendInt(b, in.AmountMinor, 10)
	b = append(b, `,"amount_captured_minor":`...)
	b = strconv.AppendInt(b, in.AmountCapturedMinor, 10)
	b = append(b, `,"amount_capturable_minor":`...)
	b = strconv.AppendInt(b, in.AmountCapturableMinor, 10)
	b = append(b, `,"capture_method":`...)
	b = appendString(b, in.CaptureMethod)
	b = append(b, `,"amount_refunded_minor":`...)
	b = strconv.AppendInt(b, in.AmountRefundedMinor, 10)
	b = append(b, `,"refunded":`...)
	b = strconv.AppendBool(b, in.Refunded)
	b = append(b, `,"disputed":`...)
	b = strconv.AppendBool(b, in.Disputed)
	b = append(b, `,"currency":`...)
	b = appendString(b, in.Currency)
	b = append(b, `,"provider":`...)
	b = appendString(b, in.Provider)
	b = append(b, `,"customer_msisdn":`...)
	b = appendStringPtr(b, in.CustomerMSISDN)
	b = append(b, `,"description":`...)
	b = appendStringPtr(b, in.Description)
	b = append(b, `,"metadata":`...)
	b = appendStringMap(b, in.Metadata)
	b = append(b, `,"return_url":`...)
	b = appendStringPtr(b, in.ReturnURL)
	b = append(b, `,"next_action":`...)
	if a := in.NextAction; a == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"type":`...)
		b = appendString(b, a.Type)
		if a.OTPLength != 0 {
			b = append(b, `,"otp_length":`...)
			b = strconv.AppendInt(b, int64(a.OTPLength), 10)
		}
		if a.RedirectURL != "" {
			b = append(b, `,"redirect_url":`...)
			b = appendString(b, a.RedirectURL)
		}
		b = append(b, '}')
	}
	b = append(b, `,"last_error":`...)
	if e := in.LastError; e == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"code":`...)
		b = appendString(b, e.Code)
		b = append(b, `,"message":`...)
		b = appendString(b, e.Message)
		b = append(b, `,"provider":`...)
		b = appendString(b, e.Provider)
		if e.DeclineCode != "" {
			b = append(b, `,"decline_code":`...)
			b = appendString(b, e.DeclineCode)
		}
		b = append(b, '}')
	}
	b = append(b, `,"payment_method_details":`...)
	if d := in.PaymentMethodDetails; d == nil || *d == nil {
		b = append(b, "null"...)
	} else {
		// As encoding/json writes a RawMessage: compacted, and refused when
		// it is not JSON.
		var buf bytes.Buffer
		if err := json.Compact(&buf, *d); err != nil {
			return b, err
		}
		b = append(b, buf.Bytes()...)
	}
	b = append(b, `,"livemode":`...)
	b = strconv.AppendBool(b, in.Livemode)
	b = append(b, `,"created_at":`...)
	var err error
	if b, err = appendTime(b, in.CreatedAt); err != nil {
		return b, err
	}
	b = append(b, `,"succeeded_at":`...)
	if b, err = appendTimePtr(b, in.SucceededAt); err != nil {
		return b, err
	}
	b = append(b, `,"canceled_at":`...)
	if b, err = appendTimePtr(b, in.CanceledAt); err != nil {
		return b, err
	}
	b = append(b, `,"cancellation_reason":`...)
	b = appendStringPtr(b, in.CancellationReason)
	return append(b, '}'), nil
}

// appendString appends s as a JSON string. Printable ASCII other than the
// quote and the backslash is written as is; any other string is left to
// encoding/json, whose escapes (control characters, invalid UTF-8, U+2028
// and U+2029) it then has exactly.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return appendStringSlow(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendStringSlow(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
}

func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

// appendStringMap appends m as encoding/json does: null when nil, the
// members in the order of their keys.
func appendStringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	if len(m) == 1 {
		for k, v := range m {
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, v)
		}
		return append(b, '}')
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, m[k])
	}
	return append(b, '}')
}

// appendTime appends t as time.Time's MarshalJSON does (RFC 3339 with the
// fraction it has), refusing what it refuses.
func appendTime(b []byte, t time.Time) ([]byte, error) {
	if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 || t.Year() < 0 || t.Year() > 9999 {
		j, err := t.MarshalJSON()
		if err != nil {
			return b, err
		}
		return append(b, j...), nil
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

func appendTimePtr(b []byte, t *time.Time) ([]byte, error) {
	if t == nil {
		return append(b, "null"...), nil
	}
	return appendTime(b, *t)
}

// decodeNextAction reads a stored next_action into a. What payd stores is
// json.Marshal's form of a NextAction ({"type":"…"} with "otp_length" and
// "redirect_url" when set); that form with plain values (no escapes) is read
// here directly, and anything else by encoding/json, which the result
// matches either way.
func decodeNextAction(s string, a *NextAction) error {
	if parseNextAction(s, a) {
		return nil
	}
	*a = NextAction{}
	return json.Unmarshal([]byte(s), a)
}

func parseNextAction(s string, a *NextAction) bool {
	rest, ok := cutPrefix(s, `{"type":"`)
	if !ok {
		return false
	}
	if a.Type, rest, ok = plainString(rest); !ok {
		return false
	}
	if r, ok := cutPrefix(rest, `,"otp_length":`); ok {
		i := 0
		for i < len(r) && i < 9 && r[i] >= '0' && r[i] <= '9' {
			i++
		}
		if i == 0 || (r[0] == '0' && i > 1) {
			return false
		}
		n, err := strconv.Atoi(r[:i])
		if err != nil || n == 0 {
			return false
		}
		a.OTPLength, rest = n, r[i:]
	}
	if r, ok := cutPrefix(rest, `,"redirect_url":"`); ok {
		if a.RedirectURL, rest, ok = plainString(r); !ok || a.RedirectURL == "" {
			return false
		}
	}
	return rest == "}"
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return s, false
	}
	return s[len(prefix):], true
}

// plainString reads a JSON string's body up to its closing quote when it
// holds only printable ASCII without escapes, returning what follows the
// quote.
func plainString(s string) (v, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[:i], s[i+1:], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", s, false
		}
	}
	return "", s, false
}
