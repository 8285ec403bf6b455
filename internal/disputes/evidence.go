package disputes

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/payd/payd/internal/errs"
)

// MaxEvidenceText is the most characters one evidence text may hold.
const MaxEvidenceText = 20000

// Evidence is what the merchant tells the bank. Every field is text (null
// until given).
type Evidence struct {
	CustomerName           *string `json:"customer_name"`
	CustomerEmail          *string `json:"customer_email"`
	ProductDescription     *string `json:"product_description"`
	ShippingTrackingNumber *string `json:"shipping_tracking_number"`
	ReceiptText            *string `json:"receipt_text"`
	UncategorizedText      *string `json:"uncategorized_text"`
}

// EvidenceFields lists the evidence keys, in the object's order.
var EvidenceFields = []string{"customer_name", "customer_email", "product_description", "shipping_tracking_number",
	"receipt_text", "uncategorized_text"}

// field returns the pointer of the evidence field named key.
func (e *Evidence) field(key string) **string {
	switch key {
	case "customer_name":
		return &e.CustomerName
	case "customer_email":
		return &e.CustomerEmail
	case "product_description":
		return &e.ProductDescription
	case "shipping_tracking_number":
		return &e.ShippingTrackingNumber
	case "receipt_text":
		return &e.ReceiptText
	case "uncategorized_text":
		return &e.UncategorizedText
	}
	return nil
}

// EvidenceUpdate is the evidence of one request: the fields it names, each
// a text or null (null clears the field). Fields it does not name keep
// their saved value.
type EvidenceUpdate map[string]*string

// ParseEvidence reads the evidence object of a request. Every key must be
// one of EvidenceFields (400 parameter_unknown naming evidence.<key>), every
// value a string or null of at most MaxEvidenceText characters (400
// parameter_invalid naming the field).
func ParseEvidence(raw json.RawMessage) (EvidenceUpdate, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, errs.Invalid("evidence", "parameter_invalid", "evidence must be an object of texts")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := EvidenceUpdate{}
	for _, k := range keys {
		param := "evidence." + k
		if !slices.Contains(EvidenceFields, k) {
			return nil, errs.Invalid(param, "parameter_unknown", "unknown evidence field %s; the fields are %s", k, strings.Join(EvidenceFields, ", "))
		}
		v := bytes.TrimSpace(obj[k])
		if string(v) == "null" {
			out[k] = nil
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, errs.Invalid(param, "parameter_invalid", "%s must be a string", param)
		}
		out[k] = &s
	}
	return out, out.Validate()
}

// Validate checks an update however it was made (the API's JSON, the
// portal's form): known fields only, each text valid UTF-8 without NUL and
// at most MaxEvidenceText characters; the 400 names the first bad field.
func (u EvidenceUpdate) Validate() error {
	for _, k := range EvidenceFields {
		v, ok := u[k]
		if !ok || v == nil {
			continue
		}
		param := "evidence." + k
		if !utf8.ValidString(*v) || strings.ContainsRune(*v, 0) {
			return errs.Invalid(param, "parameter_invalid", "%s must be valid UTF-8 text", param)
		}
		if n := utf8.RuneCountInString(*v); n > MaxEvidenceText {
			return errs.Invalid(param, "parameter_invalid", "%s is %d characters; at most %d are allowed", param, n, MaxEvidenceText)
		}
	}
	for k := range u {
		if !slices.Contains(EvidenceFields, k) {
			return errs.Invalid("evidence."+k, "parameter_unknown", "unknown evidence field %s; the fields are %s", k, strings.Join(EvidenceFields, ", "))
		}
	}
	return nil
}

// apply writes the update onto e.
func (u EvidenceUpdate) apply(e *Evidence) {
	for k, v := range u {
		if p := e.field(k); p != nil {
			if v == nil {
				*p = nil
			} else {
				s := *v
				*p = &s
			}
		}
	}
}
