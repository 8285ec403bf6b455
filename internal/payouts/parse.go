package payouts

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/money"
)

// Batch variants: the request's shape picks one.
const (
	VariantItems = "items" // variant A: inline items or text/csv; po_bulk_, 202, reserved at once
	VariantRows  = "rows"  // variant B: rows or multipart CSV; batch_, 201, pending_approval
)

// The CSV headers, exactly.
var (
	ItemsCSVHeader = []string{"amount", "currency", "provider", "recipient_msisdn", "recipient_account", "recipient_name", "description", "external_ref"}
	RowsCSVHeader  = []string{"recipient_msisdn", "recipient_account", "amount", "provider", "reference", "description"}
)

// BatchRequest is a parsed and validated bulk request.
type BatchRequest struct {
	Variant     string
	Currency    string // variant B
	Description string
	inputs      []*payoutInput // unique rows, in order
}

// RowCount is the number of unique rows.
func (b *BatchRequest) RowCount() int { return len(b.inputs) }

// batchFields are the top-level members of a JSON bulk request.
type batchFields struct {
	Description *string
	Currency    *string
	Items       []json.RawMessage
	Rows        []json.RawMessage
	hasItems    bool
	hasRows     bool
}

// ParseBatchJSON reads a JSON bulk request: {"description","items":[...]}
// (variant A) or {"currency","description","rows":[...]} (variant B). Every
// bad row is reported at once.
func ParseBatchJSON(body []byte, livemode bool) (*BatchRequest, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, errs.Invalid("", "invalid_json", "the body must be a JSON object with items (variant A) or rows (variant B)")
	}
	var f batchFields
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		raw := top[k]
		var err error
		switch k {
		case "description":
			f.Description, err = jsonString(raw)
		case "currency":
			f.Currency, err = jsonString(raw)
		case "items":
			f.hasItems = true
			err = json.Unmarshal(raw, &f.Items)
		case "rows":
			f.hasRows = true
			err = json.Unmarshal(raw, &f.Rows)
		default:
			return nil, errs.Invalid(k, "parameter_unknown", "unknown parameter: %s", k)
		}
		if err != nil {
			typ := "a string"
			if k == "items" || k == "rows" {
				typ = "an array of objects"
			}
			return nil, errs.Invalid(k, "parameter_invalid", "%s must be %s", k, typ)
		}
	}
	switch {
	case f.hasItems && f.hasRows:
		return nil, errs.Invalid("rows", "parameter_invalid", "give items (variant A) or rows (variant B), not both")
	case f.hasItems:
		if f.Currency != nil {
			return nil, errs.Invalid("currency", "parameter_unknown", "a batch of items gives each item's currency; currency belongs to a batch of rows")
		}
		return parseItemsJSON(f, livemode)
	case f.hasRows:
		return parseRowsJSON(f, livemode)
	}
	return nil, errs.Invalid("rows", "parameter_missing", "a bulk request needs items (variant A) or rows (variant B)")
}

func parseItemsJSON(f batchFields, livemode bool) (*BatchRequest, error) {
	b := &BatchRequest{Variant: VariantItems, Description: deref(f.Description)}
	if err := batchDescription(b.Description, MaxBatchDescription); err != nil {
		return nil, err
	}
	rows := &rowErrors{param: "items"}
	seen := map[string]bool{}
	for i, raw := range f.Items {
		in := itemFromJSON(i+1, raw)
		if !b.keep(in, seen) {
			continue
		}
		if len(b.inputs) > MaxBatchRows {
			return nil, tooManyRows("items")
		}
		if len(in.errors) == 0 {
			in.validate(shapeItems, livemode, "")
		}
		rows.addInput(in)
	}
	return b.finish(rows)
}

func parseRowsJSON(f batchFields, livemode bool) (*BatchRequest, error) {
	b := &BatchRequest{Variant: VariantRows, Description: deref(f.Description)}
	if f.Currency == nil || *f.Currency == "" {
		return nil, errs.Missing("currency")
	}
	if err := rowsCurrency(*f.Currency); err != nil {
		return nil, err
	}
	b.Currency = *f.Currency
	if err := batchDescription(b.Description, MaxBatchDescription); err != nil {
		return nil, err
	}
	rows := &rowErrors{param: "rows"}
	seen := map[string]bool{}
	for i, raw := range f.Rows {
		in := rowFromJSON(i+1, raw)
		if !b.keep(in, seen) {
			continue
		}
		if len(b.inputs) > MaxBatchRows {
			return nil, tooManyRows("rows")
		}
		in.Currency = b.Currency
		if len(in.errors) == 0 {
			in.validate(shapeRows, livemode, "")
		}
		rows.addInput(in)
	}
	return b.finish(rows)
}

// keep adds in unless its reference repeats an earlier row's: a repeated
// reference within a batch is a no-op, so the later row is dropped
// unread.
func (b *BatchRequest) keep(in *payoutInput, seen map[string]bool) bool {
	ref := strings.TrimSpace(in.Reference)
	if ref != "" {
		if seen[ref] {
			return false
		}
		seen[ref] = true
	}
	b.inputs = append(b.inputs, in)
	return true
}

// finish reports the rows' errors, or checks the batch as a whole.
func (b *BatchRequest) finish(rows *rowErrors) (*BatchRequest, error) {
	if err := rows.err(); err != nil {
		return nil, err
	}
	if len(b.inputs) == 0 {
		return nil, errs.Invalid(rows.param, "batch_empty", "the batch has no rows")
	}
	if b.Variant == VariantRows {
		var total int64
		for _, in := range b.inputs {
			s, err := money.Add(total, in.Amount)
			if err != nil || s > MaxBatchTotalDJF {
				return nil, errs.Invalid(rows.param, "batch_total_exceeded",
					"the batch total exceeds DJF %d (the limit for one batch)", MaxBatchTotalDJF)
			}
			total = s
		}
	} else {
		totals := map[string]int64{}
		for _, in := range b.inputs {
			s, err := money.Add(totals[in.Currency], in.Amount)
			if err != nil {
				return nil, errs.Invalid(rows.param, "amount_too_large", "the batch total in %s overflows", in.Currency)
			}
			totals[in.Currency] = s
		}
	}
	return b, nil
}

func tooManyRows(param string) error {
	return errs.Invalid(param, "too_many_rows", "a batch holds at most %d rows (rows repeating a reference count once)", MaxBatchRows)
}

func rowsCurrency(c string) error {
	if c != "DJF" {
		return errs.Invalid("currency", "currency_not_supported", "bulk batches of rows are DJF only")
	}
	return nil
}

func batchDescription(d string, max int) error {
	if n := utf8.RuneCountInString(d); n > max {
		return errs.Invalid("description", "parameter_too_long", "description is %d characters; at most %d are allowed", n, max)
	}
	return nil
}

// jsonString reads a JSON string or null.
func jsonString(raw json.RawMessage) (*string, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

var integerRE = regexp.MustCompile(`^-?[0-9]+$`)

// jsonObject reads one row object, reporting a non-object on the row.
func jsonObject(in *payoutInput, raw json.RawMessage) map[string]json.RawMessage {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		in.fail("", "parameter_invalid", "each row must be a JSON object")
		return nil
	}
	return obj
}

// stringField reads a string member into dst.
func stringField(in *payoutInput, obj map[string]json.RawMessage, key string, dst *string) {
	raw, ok := obj[key]
	if !ok {
		return
	}
	s, err := jsonString(raw)
	if err != nil {
		in.fail(key, "parameter_invalid", "%s must be a string", key)
		return
	}
	if s != nil {
		*dst = *s
	}
}

// amountField reads an integer amount, given as "amount" or "amount_minor"
// (one of the two: both is an error naming amount_minor).
func amountField(in *payoutInput, obj map[string]json.RawMessage) {
	given := func(key string) bool {
		raw, ok := obj[key]
		return ok && string(bytes.TrimSpace(raw)) != "null"
	}
	key := "amount"
	switch {
	case given("amount") && given("amount_minor"):
		in.fail("amount_minor", "parameter_invalid", "give amount or amount_minor, not both (both are minor units)")
		return
	case given("amount_minor"):
		key = "amount_minor"
	case !given("amount"):
		return
	}
	in.AmountField = key
	txt := string(bytes.TrimSpace(obj[key]))
	if !integerRE.MatchString(txt) {
		in.fail(key, "amount_invalid", "%s must be an integer in minor units", key)
		return
	}
	v, err := strconv.ParseInt(txt, 10, 64)
	if err != nil {
		in.fail(key, "amount_invalid", "%s is too large", key)
		return
	}
	in.Amount, in.AmountSet = v, true
}

// unknownFields reports members other than allowed.
func unknownFields(in *payoutInput, obj map[string]json.RawMessage, allowed ...string) {
	var unknown []string
	for k := range obj {
		found := false
		for _, a := range allowed {
			found = found || a == k
		}
		if !found {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		in.fail(k, "parameter_unknown", "unknown parameter: %s", clip(k))
	}
}

// itemFromJSON reads a variant A item.
func itemFromJSON(row int, raw json.RawMessage) *payoutInput {
	in := &payoutInput{Row: row}
	obj := jsonObject(in, raw)
	if obj == nil {
		return in
	}
	unknownFields(in, obj, "amount", "amount_minor", "currency", "provider", "recipient_msisdn", "recipient_account", "recipient_name",
		"description", "metadata", "reference", "external_ref")
	amountField(in, obj)
	stringField(in, obj, "currency", &in.Currency)
	stringField(in, obj, "provider", &in.Provider)
	stringField(in, obj, "recipient_msisdn", &in.MSISDN)
	stringField(in, obj, "recipient_account", &in.Account)
	stringField(in, obj, "recipient_name", &in.Name)
	stringField(in, obj, "description", &in.Description)
	var ref, ext string
	stringField(in, obj, "reference", &ref)
	stringField(in, obj, "external_ref", &ext)
	if ref != "" && ext != "" && ref != ext {
		in.fail("external_ref", "parameter_invalid", "external_ref and reference name the same field; give one")
	}
	in.Reference = ref
	if ref == "" {
		in.Reference = ext
	}
	if m, ok := obj["metadata"]; ok && string(bytes.TrimSpace(m)) != "null" {
		if err := json.Unmarshal(m, &in.Metadata); err != nil {
			in.fail("metadata", "metadata_invalid", "metadata must be an object of string values")
		}
	}
	return in
}

// rowFromJSON reads a variant B row. recipient_name is accepted beside
// the documented row fields so JSON rows can be screened.
func rowFromJSON(row int, raw json.RawMessage) *payoutInput {
	in := &payoutInput{Row: row}
	obj := jsonObject(in, raw)
	if obj == nil {
		return in
	}
	unknownFields(in, obj, "recipient_msisdn", "recipient_account", "recipient_name", "amount", "amount_minor", "provider", "reference", "description")
	amountField(in, obj)
	stringField(in, obj, "provider", &in.Provider)
	stringField(in, obj, "recipient_msisdn", &in.MSISDN)
	stringField(in, obj, "recipient_account", &in.Account)
	stringField(in, obj, "recipient_name", &in.Name)
	stringField(in, obj, "description", &in.Description)
	stringField(in, obj, "reference", &in.Reference)
	return in
}
