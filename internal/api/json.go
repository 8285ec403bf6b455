package api

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/timestamp"
)

// WriteJSON answers v as JSON with status. Every timestamp in v is written
// with second precision (package timestamp), whatever the object keeps.
// The answer is encoded into a pooled buffer and written at once.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	e := jsonBuffers.Get().(*jsonBuffer)
	defer e.put()
	v = timestamp.Seconds(v)
	var err error
	if a, ok := v.(jsonAppender); ok {
		var b []byte
		if b, err = a.AppendJSON(e.buf.AvailableBuffer()); err == nil {
			e.buf.Write(b)
			e.buf.WriteByte('\n')
		}
	} else {
		err = e.enc.Encode(v)
	}
	if err != nil {
		http.Error(w, `{"error":{"type":"api_error","code":"api_error","message":"an internal error occurred"}}`, http.StatusInternalServerError)
		return
	}
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(e.buf.Bytes())
}

// jsonAppender is an object that encodes itself exactly as encoding/json
// would (with HTML escaping off), without reflection (payments.Intent).
type jsonAppender interface {
	AppendJSON([]byte) ([]byte, error)
}

// jsonContentType is the Content-Type header value of a JSON answer, shared
// by every answer: a header map holds it and nothing appends to it.
var jsonContentType = []string{"application/json"}

// jsonBuffer is an encoder with its buffer, reused across answers.
type jsonBuffer struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var jsonBuffers = sync.Pool{New: func() any {
	e := &jsonBuffer{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// maxPooledJSON bounds the buffers kept for reuse: a large answer (a long
// list, a report) does not pin its memory in the pool.
const maxPooledJSON = 64 << 10

func (e *jsonBuffer) put() {
	if e.buf.Cap() > maxPooledJSON {
		return
	}
	e.buf.Reset()
	jsonBuffers.Put(e)
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
	if key, end, ok := firstUnknownMember(body, dst); ok {
		// encoding/json would note the unknown member and go on decoding the
		// whole body: a hostile body of many unknown members costs the CPU in
		// proportion to its size for an answer known at its first. The members
		// before it are decoded as they would be, so that a wrong type there
		// is still the answer; what follows the unknown member is not read.
		head := make([]byte, 0, end+1)
		head = append(append(head, body[:end]...), '}')
		dec := json.NewDecoder(bytes.NewReader(head))
		dec.DisallowUnknownFields()
		dec.UseNumber()
		err := dec.Decode(dst)
		var syn *json.SyntaxError
		if !errors.As(err, &syn) && !errors.Is(err, io.ErrUnexpectedEOF) {
			if err != nil {
				return jsonError(err)
			}
			return jsonError(fmt.Errorf("json: unknown field %q", key))
		}
		// Malformed before the unknown member: the full decoding says where.
	}
	return decodeWhole(body, dst)
}

// decodeWhole is the strict decoding by encoding/json alone, over the whole
// body: what decodeStrict answers wherever it does not stop early.
func decodeWhole(body []byte, dst any) error {
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

// firstUnknownMember reads the top-level member names of body, stepping over
// their values, and stops at the first one encoding/json would not map onto
// dst, a pointer to a struct. It returns that name and the offset just past
// the member before it (or past the opening brace). ok is false when every
// name is known, when body is not a JSON object or does not read as one up to
// an unknown name, and when dst is not a pointer to a struct that encoding/json
// decodes field by field: the full decoding then gives its usual answer.
//
// It finds where strings, objects and arrays begin and end as JSON does, but
// leaves the checking of numbers, literals and escapes to encoding/json, which
// decodes everything before the unknown member (decodeStrict).
func firstUnknownMember(body []byte, dst any) (key string, end int, ok bool) {
	t := reflect.TypeOf(dst)
	if t == nil || t.Kind() != reflect.Pointer {
		return "", 0, false
	}
	names := jsonNamesOf(t.Elem())
	if names == nil {
		return "", 0, false
	}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return "", 0, false
	}
	i++
	for first := true; ; first = false {
		end = i
		i = skipSpace(body, i)
		if !first {
			if i >= len(body) || body[i] != ',' {
				return "", 0, false // the closing brace (every name known), or malformed
			}
			i = skipSpace(body, i+1)
		}
		if i >= len(body) || body[i] != '"' {
			return "", 0, false
		}
		close := skipString(body, i)
		if close < 0 {
			return "", 0, false
		}
		name, ok := memberName(body[i:close])
		if !ok {
			return "", 0, false
		}
		if !names.has(name) {
			return string(name), end, true
		}
		i = skipSpace(body, close)
		if i >= len(body) || body[i] != ':' {
			return "", 0, false
		}
		if i = skipValue(body, skipSpace(body, i+1)); i < 0 {
			return "", 0, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset past the JSON string starting at b[i] (a
// quote), or -1 when it does not end.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the offset past the JSON value starting at b[i], or -1
// when it does not end.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	// A number or a literal: up to what may follow a value.
	start := i
	for i < len(b) && !endsValue(b[i]) {
		i++
	}
	if i == start {
		return -1
	}
	return i
}

func endsValue(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// memberName is the name a quoted JSON member name stands for; plain ASCII
// names are read in place, anything else as encoding/json reads it.
func memberName(quoted []byte) ([]byte, bool) {
	inner := quoted[1 : len(quoted)-1]
	plain := true
	for _, c := range inner {
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return inner, true
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return nil, false
	}
	return []byte(s), true
}

// jsonNames is the set of member names encoding/json may decode into a
// struct type: exact, and folded for its case-insensitive match.
type jsonNames struct {
	exact  map[string]bool
	folded map[string]bool
}

func (n *jsonNames) has(name []byte) bool {
	return n.exact[string(name)] || n.folded[foldJSONName(string(name))]
}

// jsonNamesCache maps a reflect.Type to its *jsonNames (nil: not checked).
var jsonNamesCache sync.Map

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// jsonNamesOf returns the member names of struct type t, or nil when t is not
// a struct or decodes itself. The set errs on the side of knowing too much
// (an embedded struct's names are all included even where encoding/json
// drops two that collide, and a field's Go name beside its tag's), so that a
// name it does not hold is one encoding/json refuses: a name it holds wrongly
// only leaves the refusal to the full decoding.
func jsonNamesOf(t reflect.Type) *jsonNames {
	if v, ok := jsonNamesCache.Load(t); ok {
		return v.(*jsonNames)
	}
	var n *jsonNames
	if t.Kind() == reflect.Struct && !decodesItself(t) {
		n = &jsonNames{exact: map[string]bool{}, folded: map[string]bool{}}
		n.collect(t, map[reflect.Type]bool{})
	}
	jsonNamesCache.Store(t, n)
	return n
}

func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || p.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || p.Implements(textUnmarshalerType)
}

func (n *jsonNames) collect(t reflect.Type, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if name == "" && ft.Kind() == reflect.Struct {
				n.collect(ft, seen)
				continue
			}
		} else if !f.IsExported() {
			continue
		}
		n.add(f.Name)
		if name != "" {
			n.add(name)
		}
	}
}

func (n *jsonNames) add(name string) {
	n.exact[name] = true
	n.folded[foldJSONName(name)] = true
}

// foldJSONName maps every name to the same string as the names it equals
// under Unicode simple case folding (strings.EqualFold), which is how
// encoding/json matches a member to a field whose name differs in case.
func foldJSONName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			continue
		}
		// The smallest rune of r's folding orbit stands for all of them.
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}
