package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/timestamp"
)

// WriteJSON answers v as JSON with status. Every timestamp in v is written
// with second precision (package timestamp), whatever the object keeps.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(timestamp.Seconds(v)); err != nil {
		http.Error(w, `{"error":{"type":"api_error","code":"api_error","message":"an internal error occurred"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// ReadBody reads the whole (size-limited) body, mapping an oversized one to 413.
func ReadBody(r *http.Request) ([]byte, error) {
	if b, ok := r.Context().Value(bodyKey{}).([]byte); ok {
		return b, nil
	}
	b, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, &errs.Error{Kind: errs.KindTooLarge, Code: "request_too_large", Message: "the request body is larger than this endpoint accepts"}
	}
	if err != nil {
		return nil, &errs.Error{Kind: errs.KindInvalid, Code: "body_unreadable", Message: "the request body could not be read"}
	}
	if IsJSON(r) {
		if err := checkNoNUL(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// nulEscape is how a NUL character appears in JSON text (a raw NUL is not
// valid JSON at all).
var nulEscape = []byte(`\u0000`)

// checkNoNUL refuses a JSON body with a NUL character in any string, key or
// value, naming the member that holds it: no field of payd's takes one, and
// PostgreSQL cannot store one (it answered 500 before). Bodies without the
// escape are not scanned.
func checkNoNUL(body []byte) error {
	if !bytes.Contains(body, nulEscape) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	key := ""
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // malformed JSON is reported by the decoding that follows
		}
		s, ok := tok.(string)
		if !ok {
			continue
		}
		if strings.IndexByte(s, 0) >= 0 {
			return errs.Invalid(key, "parameter_invalid", "%s must not contain NUL characters", paramName(key))
		}
		key = s
	}
}

func paramName(key string) string {
	if key == "" {
		return "the body"
	}
	return key
}

type bodyKey struct{}

// IsJSON reports whether the request says its body is JSON.
func IsJSON(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// DecodeJSON decodes a required JSON object body into dst strictly: the
// content type must be JSON (415), the body must parse (400 naming the
// problem), and unknown fields are refused (400 naming the field).
func DecodeJSON(r *http.Request, dst any) error {
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return errs.Invalid("", "body_missing", "a JSON request body is required")
	}
	if !IsJSON(r) {
		return &errs.Error{Kind: errs.KindUnsupportedMedia, Code: "unsupported_media_type", Message: "Content-Type must be application/json"}
	}
	return decodeStrict(body, dst)
}

// DecodeOptionalJSON is DecodeJSON for endpoints whose body may be empty.
func DecodeOptionalJSON(r *http.Request, dst any) error {
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if !IsJSON(r) {
		return &errs.Error{Kind: errs.KindUnsupportedMedia, Code: "unsupported_media_type", Message: "Content-Type must be application/json"}
	}
	return decodeStrict(body, dst)
}

func decodeStrict(body []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return errs.Invalid("", "invalid_json", "the body holds more than one JSON value")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return errs.Invalid("", "invalid_json", "unexpected data after the JSON object")
	}
	return nil
}

// jsonError turns a decoding failure into a 400 that says what is wrong.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return errs.Invalid("", "invalid_json", "malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return errs.Invalid("", "invalid_json", "the body must be a JSON object")
		}
		return errs.Invalid(field, "parameter_invalid", "%s must be of type %s, not %s", field, jsonType(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errs.Invalid("", "invalid_json", "malformed JSON: the body ends early")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return errs.Invalid(field, "parameter_unknown", "unknown parameter: %s", field)
	}
	return errs.Invalid("", "invalid_json", "malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func jsonType(kind string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "integer"
	case "float32", "float64":
		return "number"
	case "map", "struct":
		return "object"
	case "slice", "array":
		return "array"
	}
	return kind
}

// answer writes v with status, or returns err for WriteError.
func answer[T any](w http.ResponseWriter, status int, v T, err error) error {
	if err != nil {
		return err
	}
	WriteJSON(w, status, v)
	return nil
}
